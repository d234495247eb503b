// Opening the memory store with the operator's config, for every caller: the CLI's commands, the
// tick (abandoned sessions, the spool, dreams) and a session's own server. A file the store
// refuses becomes a typed nightshift error (memory.db unusable: exit 70; a tombstoned claim: 75).
import type { Config } from '../config/schema.js';
import { EXIT, NightshiftError, PermissionError, UsageError } from '../core/errors.js';
import type { Logger } from '../logs/logger.js';
import { makeEmbedder, type EmbedderConfig } from './embeddings/embedders.js';
import type { GeminiConfig } from './gemini-client.js';
import { makeQueryExpander } from './recall/hyde.js';
import { memoryDbPath } from './store/db-path.js';
import { viewOf } from './store/scope.js';
import { MemoryStore } from './store.js';
import { MemoryError } from './types.js';

// The memory database cannot be used (corrupt, not ours, newer schema): exit 70, nothing started.
export class MemoryDbError extends NightshiftError {
  override readonly code = 'MEMORY_DB_UNUSABLE';
  override readonly exitCode = EXIT.INTERNAL;
}

// The store refused the request (a tombstoned claim): exit 75.
export class MemoryRefusedError extends NightshiftError {
  override readonly code = 'MEMORY_REFUSED';
  override readonly exitCode = EXIT.REFUSED;
}

// A MemoryError as the nightshift error a command exits with; anything else is thrown as it is.
export function refusal(err: unknown): never {
  if (err instanceof MemoryError) {
    if (err.code === 'CORRUPT' || err.code === 'FOREIGN') throw new MemoryDbError(err.message, { cause: err });
    if (err.code === 'PERMISSION') throw new PermissionError(err.message, { cause: err });
    if (err.code === 'TOMBSTONED') throw new MemoryRefusedError(err.message, { cause: err });
    if (err.code === 'INVALID' && /schema version/.test(err.message)) throw new MemoryDbError(err.message, { cause: err });
    throw new UsageError(err.message, { cause: err });
  }
  throw err;
}

// Opens the store at `memory.db` with the configured embedder; a refused file is a MemoryDbError.
// `agent`: a session's agent, whose view it is under `memory.scope: agent` (memory/store/scope.ts).
export async function openMemoryStore(config: Config, env: NodeJS.ProcessEnv, logger: Logger, agent: string | null = null): Promise<MemoryStore> {
  try {
    const embedder = makeEmbedder(config as EmbedderConfig, env, logger);
    const expandQuery = embedder ? makeQueryExpander(config as GeminiConfig, env, logger) : null;
    return await MemoryStore.open(memoryDbPath(config), { embedder, logger, now: () => new Date(), thresholds: config.memory.gate, weights: config.memory.recall, learning: config.memory.learning, expandQuery, forgetSimilarity: config.memory.forget_similarity, knowledgeUpdates: config.memory.updates, agent: viewOf(config, agent) });
  } catch (err) {
    return refusal(err);
  }
}
