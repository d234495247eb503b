// The MCP servers every session gets: our memory store, `nightshift mcp`, run by the same node and
// the same build as this supervisor, against the same config. Given to the CLI inline through
// `--mcp-config`, so nothing is written to the vault or the operator's settings.
import { fileURLToPath } from 'node:url';

export const MEMORY_SERVER = 'nightshift_memory';
// The allow rule for every tool of the server (`mcp__<server>` matches all its tools).
export const MEMORY_TOOLS_RULE = `mcp__${MEMORY_SERVER}`;

const BIN = fileURLToPath(new URL('../daemon/bin.js', import.meta.url));

export function memoryMcpConfig(configFile: string, sessionId: string): string {
  return JSON.stringify({
    mcpServers: {
      [MEMORY_SERVER]: {
        type: 'stdio',
        command: process.execPath,
        args: [BIN, 'mcp', '--config', configFile],
        // Observations made through it carry the session id as their source.
        env: { NIGHTSHIFT_SESSION_ID: sessionId, NIGHTSHIFT_CONFIG: configFile },
      },
    },
  });
}

// The same server served by the supervisor itself over loopback HTTP (memory/mcp-http.ts): a
// sandboxed session cannot see memory.db. The token is the session's; keep this string out of logs.
export function memoryHttpMcpConfig(url: string, token: string): string {
  return JSON.stringify({
    mcpServers: {
      [MEMORY_SERVER]: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } },
    },
  });
}
