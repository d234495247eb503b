// One session's memory tools over Streamable HTTP, served by the supervisor itself: a session in a
// sandbox cannot see memory.db, so it cannot run `nightshift mcp` as its child. 127.0.0.1, a port
// the OS picks, a bearer token per session. The token names the session, so everything written
// through it has the session as its source, whatever the caller says (memory/claimed-source.ts).
import type { TraceSpan } from '../../core/trace.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import { listenEndpoint, type Listen } from '../../core/loopback.js';
import type { Logger } from '../../logs/logger.js';
import type { ToolStore } from './server.js';
import type { Actor } from '../types.js';

export const MCP_PATH = '/mcp';

let sdk: [Promise<typeof import('@modelcontextprotocol/sdk/server/mcp.js')>, Promise<typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')>] | null = null;
// Starts loading the SDK (once): a supervisor calls it early, so the session's first MCP request
// does not wait for the import.
export function loadSdk(): NonNullable<typeof sdk> {
  sdk ??= [import('@modelcontextprotocol/sdk/server/mcp.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')];
  return sdk;
}
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
const UNSUPPORTED_VERSION = /^Bad Request: Unsupported protocol version\b/;
// An oversized body is read and dropped (so the client sees the 413) up to this much; then the
// connection is cut.
const MAX_DISCARD_BYTES = 64 * 1024 * 1024;

export type MemoryHttpOptions = {
  // A unix socket for a walled session (sessions/wall/bridge.ts); else 127.0.0.1.
  listen?: Listen | null;
  // May still be opening: the server listens at once (its URL goes into the session's command
  // line) and the store and the SDK load while the CLI starts; requests wait for them.
  store: ToolStore | Promise<ToolStore>;
  sessionId: string;
  // The session's agent: who its observations are said by unless they name a speaker.
  agent?: string | null;
  logger: Logger;
  version: string;
  afterObserve?: (memory: { id: number; text: string }) => void;
  maxBodyBytes?: number;
  // Writing tool calls this session may make (limits.memory_writes); unset: no bound.
  maxWrites?: number;
  // The session's trace span: each tool call is a memory operation span under it.
  trace?: TraceSpan;
};

export type MemoryHttpStats = { requests: number; unauthorized: number; rejected: number; errors: number };

export type MemoryHttp = {
  // The endpoint, path included.
  url: string;
  token: string;
  stats: MemoryHttpStats;
  // Starts loading what requests need; call it once the session's CLI is spawned.
  warm(): void;
  close(): Promise<void>;
};

const sha256 = (s: string) => createHash('sha256').update(s).digest();

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

// The body, or null when it is over `max` (then it is drained, up to a point, so the 413 is read).
function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number.isFinite(declared) && declared > max;
    if (over) resolve(null);
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_DISCARD_BYTES) return req.destroy();
      if (over) return;
      if (size > max) {
        over = true;
        chunks.length = 0;
        return resolve(null);
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

// The handshake a session's CLI makes first (initialize, then the tool list), made once by the
// supervisor itself while the CLI starts: the CLI waits for its MCP servers before its first turn,
// and a first request compiles the SDK's whole path (~40 ms cold, a few warm). Never fails.
async function rehearse(at: { url: string; socketPath?: string }, token: string): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  // node:http, not fetch: fetch would load undici, on the CLI's start-up path.
  const post = (body: object) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(at.url, { method: 'POST', headers, socketPath: at.socketPath }, (res) => res.resume().on('end', resolve).on('error', reject));
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  try {
    await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'nightshift-warm-up', version: '0' } } });
    await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  } catch {
    // Only speed was at stake: the CLI's own handshake is served either way.
  }
}

export async function startMemoryHttp(o: MemoryHttpOptions): Promise<MemoryHttp> {
  const log = o.logger.child({ component: 'mcp-http', sessionId: o.sessionId });
  const token = randomBytes(32).toString('hex');
  // Hashed both sides: a constant-time compare whatever the length of what was sent.
  const expected = sha256(token);
  const maxBody = o.maxBodyBytes ?? MAX_BODY_BYTES;
  const actor: Actor = { surface: 'mcp', sessionId: o.sessionId };
  const stats: MemoryHttpStats = { requests: 0, unauthorized: 0, rejected: 0, errors: 0 };
  const writes = o.maxWrites === undefined ? undefined : { used: 0, max: o.maxWrites };

  const authorized = (req: http.IncomingMessage): boolean => {
    const m = /^Bearer +(\S+) *$/i.exec(String(req.headers.authorization ?? ''));
    return !!m && timingSafeEqual(sha256(m[1]), expected);
  };

  // The SDK and the tools (their schemas are the heaviest code of a session start) load once the
  // CLI is spawned (`warm`), beside its own start-up, or at the first request.
  let backend: Promise<{ McpServer: typeof import('@modelcontextprotocol/sdk/server/mcp.js').McpServer; StreamableHTTPServerTransport: typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js').StreamableHTTPServerTransport; tools: typeof import('./server.js'); store: ToolStore }> | null = null;
  const load = () => {
    if (!backend) {
      backend = Promise.all([...loadSdk(), import('./server.js'), Promise.resolve(o.store)]).then(([mcp, http, tools, store]) => ({ McpServer: mcp.McpServer, StreamableHTTPServerTransport: http.StreamableHTTPServerTransport, tools, store }));
      // A failure is answered per request; nothing is left unhandled.
      backend.catch(() => {});
    }
    return backend;
  };

  // A fresh server and transport per request (stateless): nothing of one call outlives it.
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse, body: unknown) => {
    const { McpServer, StreamableHTTPServerTransport, tools, store } = await load();
    const server = new McpServer({ name: tools.SERVER_NAME, version: o.version }, { instructions: tools.INSTRUCTIONS });
    tools.registerTools(server, store, { actor, defaultSource: o.sessionId, trustSource: false, speaker: o.agent ?? null, logger: log, afterObserve: o.afterObserve, writes, trace: o.trace });
    server.server.onerror = (err) => {
      // 2.1.332 opens with `server/discover` under a protocol the SDK does not speak (2026-07-28),
      // is answered 400, and goes on with initialize: a step of every start, not a fault to warn of.
      if (UNSUPPORTED_VERSION.test(err.message)) log.debug({ event: 'mcp_version_refused', err }, `mcp: ${err.message}; a client that speaks a version listed goes on with it`);
      else log.warn({ event: 'mcp_error', err }, `mcp: ${err.message}`);
    };
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    stats.requests++;
    if (!authorized(req)) {
      stats.unauthorized++;
      log.warn({ event: 'mcp_http_unauthorized', method: req.method, path: req.url }, 'memory request without the session token refused');
      req.resume();
      return sendJson(res, 401, rpcError(-32001, 'Unauthorized'), { 'www-authenticate': 'Bearer', connection: 'close' });
    }
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (path !== MCP_PATH) {
      stats.rejected++;
      req.resume();
      return sendJson(res, 404, rpcError(-32601, `Not found: the memory server is at ${MCP_PATH}`));
    }
    // Stateless: no stream for server-initiated messages, and no session to delete.
    if (req.method !== 'POST') {
      stats.rejected++;
      req.resume();
      return sendJson(res, 405, rpcError(-32000, 'Method not allowed.'), { allow: 'POST' });
    }
    const raw = await readBody(req, maxBody);
    if (raw === null) {
      stats.rejected++;
      log.warn({ event: 'mcp_http_too_large', limit: maxBody }, `memory request over ${maxBody} bytes refused`);
      // Kept alive while the rest is drained: closing now could reset the socket before the 413 is read.
      return sendJson(res, 413, rpcError(-32000, `Request body over ${maxBody} bytes`));
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      stats.rejected++;
      log.warn({ event: 'mcp_http_bad_json', sample: raw.subarray(0, 200).toString('utf8') }, 'memory request that is not JSON');
      return sendJson(res, 400, rpcError(-32700, 'Parse error: Invalid JSON'));
    }
    await serve(req, res, body);
  };

  const sockets = new Set<Socket>();
  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      stats.errors++;
      log.error({ event: 'mcp_http_failed', err }, `memory request failed: ${(err as Error)?.message ?? String(err)}`);
      if (!res.headersSent) sendJson(res, 500, rpcError(-32603, 'Internal error in the memory server'));
      else res.destroy();
    });
  });
  httpServer.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  httpServer.on('clientError', (err, socket) => {
    log.debug({ event: 'mcp_http_client_error', err }, `bad HTTP from a client: ${err.message}`);
    socket.destroy();
  });
  const listening = await listenEndpoint(httpServer, o.listen);
  httpServer.on('error', (err) => log.error({ event: 'mcp_http_error', err }, `memory server: ${err.message}`));
  const url = `${listening.url}${MCP_PATH}`;
  const local = { url: `${listening.local.url}${MCP_PATH}`, socketPath: listening.local.socketPath };
  log.debug({ event: 'mcp_http_started', url }, `memory server listening on ${url}`);

  let closed: Promise<void> | null = null;
  return {
    url,
    token,
    stats,
    warm: () => void load().then(() => rehearse(local, token), () => {}),
    close() {
      closed ??= new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        for (const s of sockets) s.destroy();
      }).then(() => log.debug({ event: 'mcp_http_closed', stats }, 'memory server closed'));
      return closed;
    },
  };
}
