// `nightshift mcp`: the memory store's MCP server on stdio (memory-cli.ts serves it).
import { version } from '../../core/version.js';
import type { FullContext } from '../context.js';
import { withStopSignal } from '../stop-signal.js';

export const help = `Usage: nightshift mcp [--config PATH]

Serves the memory store over MCP on stdio (server name "nightshift_memory"), until stdin closes
or SIGTERM. Tools: observe, query, recall, link, stats. stdout carries the protocol only; logs go
to stderr. For your own clients: an observation made here takes its source from the call, else
from $NIGHTSHIFT_SESSION_ID. Sessions nightshift runs never use this: the supervisor serves each
one its memory over loopback HTTP with a per-session token, and the session is always the source.
A memory database that cannot be used is refused before anything is served (exit 70).

  claude --mcp-config '{"mcpServers":{"nightshift_memory":{"type":"stdio","command":"nightshift","args":["mcp"]}}}'`;

export const stage = 'full';

export async function run({ config, logger, env }: FullContext): Promise<number> {
  const { mcpCommand } = await import('./memory-cli.js');
  return withStopSignal(logger, 'stopping the memory server', (signal) =>
    mcpCommand(config, { stdin: process.stdin, stdout: process.stdout, env: env, logger, version: version(), signal }));
}
