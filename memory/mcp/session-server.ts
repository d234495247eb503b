// A session's memory server, as the supervisor starts it: the store opened as `nightshift mcp`
// opens it, served over loopback HTTP with the session's token (memory/mcp-http.ts), and the
// `--mcp-config` the session's CLI gets to reach it.
import type { Config } from '../../daemon/config/config.js';
import type { Logger } from '../../logs/logger.js';
import { memoryHttpMcpConfig } from '../../sessions/mcp-config.js';
import { MemoryDbError, openMemoryStore } from '../open.js';
import { startMemoryHttp } from './mcp-http.js';
import { serveStore } from './served-store.js';
import type { MemoryStore } from '../store.js';

export type SessionMemory = {
  url: string;
  token: string;
  // Inline `--mcp-config` JSON; it holds the token.
  mcpConfig: string;
  // Loads the MCP SDK; called once the CLI is spawned, so the import is not paid before it.
  warm(): void;
  // Stops the server (open connections are cut), then closes the store.
  close(): Promise<void>;
};

/** Throws MemoryDbError, saying why, when the store cannot be opened or served; nothing is left open then. */
export async function serveSessionMemory(config: Config, env: NodeJS.ProcessEnv, logger: Logger, sessionId: string, version: string): Promise<SessionMemory> {
  let store: MemoryStore;
  try {
    store = await openMemoryStore(config, env, logger);
  } catch (err) {
    throw new MemoryDbError(`Cannot open the memory store for session ${sessionId}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
  const serving = serveStore(store, config, env, logger, sessionId);
  let http;
  try {
    http = await startMemoryHttp({ store, sessionId, logger, version, afterObserve: serving.afterObserve });
  } catch (err) {
    serving.stop();
    store.close();
    throw new MemoryDbError(`Cannot serve memory to session ${sessionId}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
  let closed: Promise<void> | null = null;
  return {
    url: http.url,
    token: http.token,
    mcpConfig: memoryHttpMcpConfig(http.url, http.token),
    warm: http.warm,
    close() {
      closed ??= http.close().finally(() => {
        serving.stop();
        store.close();
      });
      return closed;
    },
  };
}
