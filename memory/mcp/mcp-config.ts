// The MCP server every session gets: the memory store, served by the supervisor itself. Given to
// the CLI as a `--mcp-config` file in the session's own folder, never the vault or the operator's
// settings.

export const MEMORY_SERVER = 'nightshift_memory';
// The allow rule for every tool of the server (`mcp__<server>` matches all its tools).
export const MEMORY_TOOLS_RULE = `mcp__${MEMORY_SERVER}`;

// No `alwaysLoad` (it would send the tools' schemas in every request); the session's environment
// has MCP_CONNECTION_NONBLOCKING=0 (config/session-env.ts). Probed on the real CLI 2.1.332
// (`npm run bench mcp-start`, docs/benchmarks.md): headless, the CLI waits for the tool list
// before the first turn either way; connected in the background, that wait is a poll that ended
// ~50 ms after a blocking connect would have.
// Served over loopback HTTP (memory/mcp-http.ts): a
// sandboxed session cannot see memory.db. The token is the session's; keep this string out of logs.
export function memoryHttpMcpConfig(url: string, token: string): string {
  return JSON.stringify({
    mcpServers: {
      [MEMORY_SERVER]: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } },
    },
  });
}
