// The supervisor's own PreToolUse hook: a loopback HTTP server per session (127.0.0.1, a port the
// OS picks, a random bearer token), installed through a generated `--settings` file. The CLI fails
// open (a hook that is down, slow or answers garbage lets the tool run), so this server fails
// closed: anything it cannot read or decide is answered "deny", and the supervisor is told when the
// server stops answering, to end the session.
import { listenEndpoint, type Listen } from '../../core/loopback.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Verdict } from './guardrail/verdict.js';
import type { TraceSpan } from '../../core/trace.js';
import { postToolUseId, toolSpanAttrs } from './tool-span.js';

// The fields of a PreToolUse payload the guardrail needs (the CLI sends more: session_id, prompt_id ...).
export type PreToolUse = { tool_name: string; tool_input: unknown; cwd: string | null; tool_use_id: string | null };

type Log = { warn(obj: object, msg?: string): void; debug(obj: object, msg?: string): void; error(obj: object, msg?: string): void };

export type HookServerOptions = {
  decide: (call: PreToolUse) => Verdict;
  // A unix socket for a walled session (sessions/wall/bridge.ts); else 127.0.0.1.
  listen?: Listen | null;
  logger: Log;
  redact: (text: string) => string;
  // Larger bodies (a Write of a huge file) are denied, not buffered.
  maxBodyBytes?: number;
  // How often the supervisor checks that its hook server still answers, and how long it waits.
  pingMs?: number;
  pingTimeoutMs?: number;
  // Test-only: false gives the check no slot of its own and checks even while every connection is
  // held (the control of that rule).
  checkFull?: boolean;
  // The session's trace span: each call is an `execute_tool` span under it, from PreToolUse to its
  // PostToolUse (asked for only while tracing), or to the refusal.
  trace?: TraceSpan;
};

export type HookStats = { requests: number; blocked: number; refused: number; errors: number; decideMs: number[] };

export type HookServer = {
  url: string;
  token: string;
  stats: HookStats;
  // Aborted (reason: why) when the server stopped answering.
  dead: AbortSignal;
  // The listening server itself (tests stop it behind the supervisor's back).
  server: http.Server;
  close(): Promise<void>;
};

export const HOOK_PATH = '/hooks/pre-tool-use';
export const POST_HOOK_PATH = '/hooks/post-tool-use';
// Tool spans still waiting for their PostToolUse, at most (a call that never reports ends at close).
const OPEN_TOOL_SPANS = 256;
const DEFAULT_MAX_BODY = 16 * 1024 * 1024;

// Pure: the payload's fields, or why it cannot be used.
export function parsePreToolUse(text: string): { call: PreToolUse } | { error: string } {
  if (!text.trim()) return { error: 'empty payload' };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { error: 'payload is not JSON' };
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'payload is not a JSON object' };
  const o = v as Record<string, unknown>;
  if (typeof o.tool_name !== 'string' || !o.tool_name) return { error: 'payload has no tool_name' };
  if (!('tool_input' in o)) return { error: 'payload has no tool_input' };
  if (o.hook_event_name !== undefined && o.hook_event_name !== 'PreToolUse') return { error: `payload is a ${String(o.hook_event_name)} event, not PreToolUse` };
  return { call: { tool_name: o.tool_name, tool_input: o.tool_input, cwd: typeof o.cwd === 'string' ? o.cwd : null, tool_use_id: typeof o.tool_use_id === 'string' ? o.tool_use_id : null } };
}

// Pure: the hook's answer. Allow is an empty object (no decision: the CLI's own permissions still
// apply); "allow" would skip them.
export function hookAnswer(v: Verdict): Record<string, unknown> {
  if (v.allow) return {};
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: v.reason } };
}

const deny = (reason: string): Verdict => ({ allow: false, reason });

export async function startHookServer(o: HookServerOptions): Promise<HookServer> {
  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(`Bearer ${token}`);
  const maxBody = o.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const stats: HookStats = { requests: 0, blocked: 0, refused: 0, errors: 0, decideMs: [] };
  const openTools = new Map<string, TraceSpan>();
  const deadController = new AbortController();
  let closing = false;
  const die = (why: string) => {
    if (closing || deadController.signal.aborted) return;
    o.logger.error({ event: 'hook_server_dead', why }, `hook server stopped answering: ${why}`);
    deadController.abort(`hook server stopped answering: ${why}`);
  };

  const authorized = (req: http.IncomingMessage) => {
    const got = Buffer.from(String(req.headers.authorization ?? ''));
    return got.length === expected.length && timingSafeEqual(got, expected);
  };

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const server = http.createServer((req, res) => {
    // Whatever goes wrong below, the answer is a deny (or a 401 for a stranger), never nothing.
    try {
      if (!authorized(req)) {
        stats.refused++;
        o.logger.warn({ event: 'hook_refused', path: req.url, remote: req.socket.remoteAddress }, 'hook request without the session token refused');
        req.resume();
        return send(res, 401, { error: 'unauthorized' });
      }
      if (req.method === 'GET' && req.url === '/health') return send(res, 200, { ok: true });
      // A tool call ran: its span ends (an empty answer changes nothing for the CLI).
      if (req.method === 'POST' && req.url === POST_HOOK_PATH) {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on('data', (c: Buffer) => (size += c.length) <= maxBody && chunks.push(c));
        req.on('error', () => undefined);
        req.on('end', () => {
          const id = size <= maxBody ? postToolUseId(Buffer.concat(chunks).toString('utf8')) : null;
          const span = id ? openTools.get(id) : undefined;
          if (span && id) openTools.delete(id), span.end();
          send(res, 200, {});
        });
        return;
      }
      if (req.method !== 'POST' || req.url !== HOOK_PATH) {
        req.resume();
        return send(res, 404, { error: 'not found' });
      }
      stats.requests++;
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= maxBody) chunks.push(c);
      });
      req.on('error', () => undefined);
      req.on('end', () => {
        let verdict: Verdict;
        const t0 = performance.now();
        const at = Date.now();
        let tool = '?';
        let seen: PreToolUse | null = null;
        try {
          if (size > maxBody) verdict = deny(`blocked by nightshift: the tool call is too large to check (${size} bytes, limit ${maxBody}); split it into smaller calls`);
          else {
            const p = parsePreToolUse(Buffer.concat(chunks).toString('utf8'));
            if ('error' in p) verdict = deny(`blocked by nightshift: the hook could not read the call (${p.error})`);
            else {
              tool = p.call.tool_name;
              seen = p.call;
              verdict = o.decide(p.call);
              if (!verdict.allow) {
                o.logger.warn({ event: 'hook_block', tool, tool_use_id: p.call.tool_use_id, reason: o.redact(verdict.reason), input: o.redact(JSON.stringify(p.call.tool_input) ?? '').slice(0, 500) }, `blocked ${tool}`);
              } else o.logger.debug({ event: 'hook_allow', tool }, `allowed ${tool}`);
            }
          }
        } catch (err) {
          stats.errors++;
          o.logger.error({ event: 'hook_error', err: o.redact(String((err as Error)?.stack ?? err)) }, 'hook decision failed: denied');
          verdict = deny('blocked by nightshift: the guardrail failed on this call (an internal error); try something else');
        }
        const ms = performance.now() - t0;
        if (o.trace?.traceId && seen) {
          const span = o.trace.child(`execute_tool ${seen.tool_name}`, toolSpanAttrs(seen, verdict, ms, o.trace.content), { startMs: at });
          if (!verdict.allow) span.fail('refused by the hook');
          if (verdict.allow && seen.tool_use_id && openTools.size < OPEN_TOOL_SPANS) openTools.set(seen.tool_use_id, span);
          else span.end();
        }
        stats.decideMs.push(ms);
        if (stats.decideMs.length > 10_000) stats.decideMs.shift();
        if (!verdict.allow) stats.blocked++;
        send(res, 200, hookAnswer(verdict));
      });
    } catch (err) {
      stats.errors++;
      try {
        send(res, 200, hookAnswer(deny('blocked by nightshift: the hook server failed on this call')));
      } catch {
        res.destroy();
      }
      o.logger.error({ event: 'hook_error', err: o.redact(String(err)) }, 'hook server error: denied');
    }
  });
  server.keepAliveTimeout = 60_000;
  server.on('error', (err) => die(err.message));
  server.on('close', () => die('closed'));
  const { url, local } = await listenEndpoint(server, o.listen);
  // The health check has a slot of its own beside the session's bound, on one kept-alive socket:
  // were it to take one of the session's, a tool call's hook arriving meanwhile would be closed
  // unanswered.
  const reserve = o.checkFull !== false;
  if (reserve) server.maxConnections += 1;
  const agent = reserve ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : false;

  // The watch: the server must answer its own health check; two misses in a row and it is dead.
  // While the session holds every connection it may (limits.endpoint_requests: the CLI's
  // parallel tool calls, its idle keep-alive sockets), a new one is closed at once by design; the
  // check still gets through on its own slot, so our own bound never reads as a dead server.
  let misses = 0;
  const check = () => new Promise<void>((done) => {
    if (closing) return done();
    const req = http.get(`${local.url}/health`, { socketPath: local.socketPath, headers: { authorization: `Bearer ${token}` }, timeout: o.pingTimeoutMs ?? 1000, agent }, (res) => {
      res.resume();
      res.on('end', done);
      misses = res.statusCode === 200 ? 0 : misses + 1;
      if (misses >= 2) die(`health check answered ${res.statusCode}`);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => {
      done();
      if (closing) return;
      if (++misses >= 2) die(`health check failed: ${err.message}`);
    });
  });
  // The first check before the session starts: its socket holds the check's slot from then on.
  if (reserve) await check();
  const watch = setInterval(() => void check(), o.pingMs ?? 2000);
  watch.unref();

  return {
    url,
    token,
    stats,
    dead: deadController.signal,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        clearInterval(watch);
        if (agent) agent.destroy();
        for (const span of openTools.values()) span.set({ 'nightshift.tool.unfinished': true }), span.end();
        openTools.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// The settings the CLI gets with `--settings`: our PreToolUse hook for every tool.
// `traced`: PostToolUse too, so a tool call's span ends when it has run (only while tracing: off,
// the CLI makes no call more).
export function hookSettings(server: Pick<HookServer, 'url' | 'token'>, timeoutS = 10, traced = false): Record<string, unknown> {
  const hook = (p: string) => [{ matcher: '*', hooks: [{ type: 'http', url: `${server.url}${p}`, headers: { Authorization: `Bearer ${server.token}` }, timeout: timeoutS }] }];
  return { hooks: { PreToolUse: hook(HOOK_PATH), ...(traced ? { PostToolUse: hook(POST_HOOK_PATH) } : {}) } };
}

// The settings in a private temp file (0600 in a 0700 dir): the token is in it, so never argv,
// never the vault, never the operator's own settings. `remove` deletes it.
export function writeSettingsFile(settings: Record<string, unknown>, dir = os.tmpdir()): { file: string; remove(): void } {
  const folder = fs.mkdtempSync(path.join(dir, 'nightshift-hooks-'));
  const file = path.join(folder, 'settings.json');
  fs.writeFileSync(file, JSON.stringify(settings), { mode: 0o600 });
  return { file, remove: () => fs.rmSync(folder, { recursive: true, force: true }) };
}
