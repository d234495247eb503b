// The MCP server every session gets: the memory store, served by the supervisor itself. Given to
// the CLI as a `--mcp-config` file in the session's own folder, never the vault or the operator's
// settings.

export const MEMORY_SERVER = 'nightshift_memory';
// The allow rule for every tool of the server (`mcp__<server>` matches all its tools).
export const MEMORY_TOOLS_RULE = `mcp__${MEMORY_SERVER}`;

// Served over loopback HTTP (memory/mcp-http.ts): a
// sandboxed session cannot see memory.db. The token is the session's; keep this string out of logs.
export function memoryHttpMcpConfig(url: string, token: string): string {
  return JSON.stringify({
    mcpServers: {
      [MEMORY_SERVER]: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } },
    },
  });
}
