// Serves the memory tools over stdio until the client closes stdin or a stop signal arrives.
// stdout carries the protocol only; every log line goes to the logger (stderr).
import type { Readable, Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../logs/logger.js';
import { INSTRUCTIONS, registerTools, SERVER_NAME, type ToolStore } from './server.js';
import { GuardedStdioTransport, guardStdin } from './stdio-guard.js';
import type { Actor } from '../types.js';

export type McpDeps = {
  stdin: Readable;
  stdout: Writable;
  logger: Logger;
  // The session this server belongs to (the supervisor sets NIGHTSHIFT_SESSION_ID), if any.
  sessionId: string | null;
  version: string;
  signal?: AbortSignal;
  afterObserve?: (memory: { id: number; text: string }) => void;
};

// Resolves once the connection is over; the caller closes the store.
export async function runMcpServer(store: ToolStore, deps: McpDeps): Promise<void> {
  const log = deps.logger.child({ component: 'mcp', sessionId: deps.sessionId });
  const actor: Actor = { surface: 'mcp', sessionId: deps.sessionId };
  const server = new McpServer({ name: SERVER_NAME, version: deps.version }, { instructions: INSTRUCTIONS });
  // Trusted: a source the client gives is the source (a session's own server is memory/mcp-http.ts).
  registerTools(server, store, { actor, defaultSource: deps.sessionId ?? 'mcp', trustSource: true, speaker: deps.sessionId ? null : 'operator', logger: log, afterObserve: deps.afterObserve });

  const input = guardStdin({
    reply: (line) => deps.stdout.write(line),
    onRejected: (reason, sample) => log.warn({ event: 'mcp_bad_message', sample }, reason),
  });
  const transport = new GuardedStdioTransport(input, deps.stdout);
  server.server.onerror = (err) => log.warn({ event: 'mcp_error', err }, `mcp: ${err.message}`);

  // Requests read but not yet answered: at the end of stdin they are answered before we close.
  let pending = 0;
  let drained: (() => void) | null = null;
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    await send(message);
    if (('result' in message || 'error' in message) && --pending <= 0) drained?.();
  };

  await new Promise<void>((resolve) => {
    const done = () => resolve();
    input.once('end', () => {
      if (pending <= 0) return done();
      drained = done;
      setTimeout(done, 5000).unref();
    });
    deps.stdin.once('error', done);
    // A client that went away mid-reply: end quietly instead of dying on EPIPE.
    deps.stdout.on('error', (err) => {
      log.warn({ event: 'mcp_stdout_error', err }, 'stdout closed');
      done();
    });
    deps.signal?.addEventListener('abort', done, { once: true });
    server.connect(transport).then(
      () => {
        const onmessage = transport.onmessage;
        transport.onmessage = (message: JSONRPCMessage) => {
          if ('method' in message && 'id' in message) pending++;
          onmessage?.(message);
        };
        server.server.onclose = done;
        deps.stdin.pipe(input);
        log.debug({ event: 'mcp_started' }, `${SERVER_NAME} listening on stdio`);
      },
      (err) => {
        log.error({ event: 'mcp_start_failed', err }, 'mcp server did not start');
        done();
      },
    );
  });
  await server.close().catch(() => {});
}
