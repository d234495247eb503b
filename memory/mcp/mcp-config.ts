// The MCP server every session gets: the memory store, served by the supervisor itself. Given to
// the CLI as a `--mcp-config` file in the session's own folder, never the vault or the operator's
// settings.

export const MEMORY_SERVER = 'nightshift_memory';
// The allow rule for every tool of the server (`mcp__<server>` matches all its tools).
export const MEMORY_TOOLS_RULE = `mcp__${MEMORY_SERVER}`;

// No `alwaysLoad`, and no MCP_CONNECTION_NONBLOCKING in the session's environment: probed on the
// real CLI 2.1.197 (bench/mcp-start.ts, README "What the wall costs"), headless it connects in the
// background already and waits for the tool list before the first turn either way; `alwaysLoad`
// and `=0` only make the connect block.
// Served over loopback HTTP (memory/mcp-http.ts): a
// sandboxed session cannot see memory.db. The token is the session's; keep this string out of logs.
export function memoryHttpMcpConfig(url: string, token: string): string {
  return JSON.stringify({
    mcpServers: {
      [MEMORY_SERVER]: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } },
    },
  });
}
