// A session's memory server, as the supervisor starts it: the store opened as `nightshift mcp`
// opens it, served over loopback HTTP with the session's token (memory/mcp-http.ts), and the
// `--mcp-config` the session's CLI gets to reach it.
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logs/logger.js';
import { memoryHttpMcpConfig } from './mcp-config.js';
import type { Listen } from '../../core/loopback.js';
import { MemoryDbError, openMemoryStore } from '../open.js';
import { startMemoryHttp } from './mcp-http.js';
import type { Serving } from './served-store.js';
import type { MemoryStore } from '../store.js';
import type { TraceSpan } from '../../core/trace.js';

export type SessionMemory = {
  url: string;
  token: string;
  // Inline `--mcp-config` JSON; it holds the token.
  mcpConfig: string;
  // Loads the MCP SDK, the tools and the background work; called once the CLI is spawned, so none
  // of it is paid before the spawn.
  warm(): void;
  // Stops the server (open connections are cut), then closes the store.
  close(): Promise<void>;
};

/** Throws MemoryDbError, saying why, when the store cannot be opened or served; nothing is left open then. */
export async function serveSessionMemory(config: Config, env: NodeJS.ProcessEnv, logger: Logger, sessionId: string, version: string, listen: Listen | null = null, agent: string | null = null, trace?: TraceSpan): Promise<SessionMemory> {
  let store: MemoryStore;
  try {
    // The agent is the supervisor's word (the session's own config), never the session's.
    store = await openMemoryStore(config, env, logger, agent);
  } catch (err) {
    throw new MemoryDbError(`Cannot open the memory store for session ${sessionId}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
  // Background re-embedding and the contradiction check load once the CLI is spawned (or at the
  // first memory observed), off the path to the spawn.
  let serving: Promise<Serving> | null = null;
  const serve = () => (serving ??= import('./served-store.js').then((m) => m.serveStore(store, config, env, logger, sessionId)));
  const afterObserve = (m: { id: number; text: string }) => void serve().then((s) => s.afterObserve?.(m), () => {});
  let http;
  try {
    http = await startMemoryHttp({ store, sessionId, agent, logger, version, afterObserve, listen, maxWrites: config.limits.memory_writes, trace });
  } catch (err) {
    store.close();
    throw new MemoryDbError(`Cannot serve memory to session ${sessionId}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
  let closed: Promise<void> | null = null;
  return {
    url: http.url,
    token: http.token,
    mcpConfig: memoryHttpMcpConfig(http.url, http.token),
    warm() {
      http.warm();
      void serve().catch(() => {});
    },
    close() {
      closed ??= http.close().finally(async () => {
        // Stopped once loaded, so a late failure of its background work is not reported.
        await serving?.then((s) => s.stop(), () => {});
        store.close();
      });
      return closed;
    },
  };
}
