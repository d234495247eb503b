// A loopback stand-in for the Anthropic API, one per session: the sandboxed CLI gets a random
// per-proxy token where its key would be, and the proxy swaps in the real credential upstream,
// for the inference calls alone (apiRequestRefusal): the credential opens nothing else. Bodies
// are piped both ways (node:http, never fetch: fetch decompresses and buffers), so SSE events
// reach the CLI as the upstream writes them, and compressed bytes stay compressed. It is also the
// meter: each /v1/messages call is admitted against the session's reservation (max_tokens lowered
// to fit) and priced from the usage the API reported, read from a copy of the response.
import { listenEndpoint, type Listen } from '../../core/loopback.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { SessionMeter } from '../../budget/meter.js';
import { usageTap } from './usage-tap.js';
import { upstreamLimit, type UpstreamLimit } from '../../budget/upstream-limit.js';
import type { TraceSpan } from '../../core/trace.js';
import { requestSpanName, requestStartAttrs, responseAttrs, usageAttrs } from './request-span.js';

export type ApiCredential = { kind: 'api_key'; value: string } | { kind: 'oauth'; value: string } | { kind: 'auth_token'; value: string };

type Log = { warn(o: object, m?: string): void; info(o: object, m?: string): void; debug(o: object, m?: string): void };

export type ApiProxyOptions = {
  // A unix socket for a walled session (sessions/wall/bridge.ts); else 127.0.0.1.
  listen?: Listen | null;
  // Base URL; a path prefix (a gateway's /anthropic) is kept in front of the CLI's path.
  upstream: string;
  // null: forwarded without a credential (the upstream decides).
  credential: ApiCredential | null;
  logger: Log;
  redact: (t: string) => string;
  // A reason: new requests are refused (the session's cost ceiling passed). Checked per request.
  refuse?: () => string | null;
  // Upstream connect and idle (no bytes either way) timeout.
  timeoutMs?: number;
  // Admits and prices every /v1/messages call; without it calls are piped through uncounted.
  meter?: SessionMeter;
  // Every upstream reply's headers (the usage windows a subscription reports). Must not throw.
  onHeaders?: (headers: http.IncomingHttpHeaders) => void;
  // The session's sign of life: each request the CLI makes and each chunk of each reply (an answer
  // streaming while the CLI, without partial messages, writes nothing). Must be cheap.
  onActivity?: () => void;
  // The session's trace span: each forwarded request is a span under it (./request-span.ts).
  trace?: TraceSpan;
  // The clock a limit's retry-after is read against.
  now?: () => Date;
  // Tests only (the negative control): forward any origin-form path, as before the allowlist.
  // Never set from the environment or the config.
  unsafeForwardAnyPath?: boolean;
};

// requests: forwarded upstream; refused: by refuse(); refusedPaths: by the allowlist
// (apiRequestRefusal); unauthorized: 401s (no or a wrong token); metered: calls the meter priced;
// lowered: calls whose max_tokens it lowered; meterErrors: responses it could not read (counted
// at their worst case).
// answered: inference calls the API answered 2xx, read to their end; lastStop: how the last of them
// ended (its stop_reason), null while none has, or when the last was cut or unreadable.
// limits: upstream replies that were a limit (429, 529, a window rejected); limited: the last of
// them, with the reset its headers gave, until a reply that is no limit follows it (then null).
// unreachable: why the last call could not reach the upstream at all (no DNS, refused, TLS), null
// once one reached it.
export type ApiProxyStats = { requests: number; refused: number; refusedPaths: number; unauthorized: number; upstreamErrors: number; metered: number; lowered: number; meterErrors: number; credentialRefused: number; answered: number; lastStop: string | null; limits: number; limited: UpstreamLimit | null; unreachable: string | null };

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_CERT_)/;
// Pure: what a connect error of the upstream says to the operator, or null when it is no such
// error (a timeout, a cut stream: the CLI's retry may well help those).
export function unreachableWhy(err: NodeJS.ErrnoException, host: string, port: number): string | null {
  const code = err.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `could not resolve ${host} (${code}): no DNS on this host? check /etc/resolv.conf, or the proxy settings`;
  if (code === 'ECONNREFUSED') return `${host}:${port} refused the connection (ECONNREFUSED): check claude.api_base / ANTHROPIC_BASE_URL, or the proxy settings`;
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH') return `no route to ${host} (${code}): is this host offline? check its network, or the proxy settings`;
  if (TLS_CODES.test(code)) return `the TLS handshake with ${host} failed (${code}: ${err.message}): check the system's CA certificates and clock, or a proxy that intercepts TLS`;
  return null;
}

export type ApiProxy = { url: string; token: string; stats: ApiProxyStats; close(): Promise<void> };

// The CLI retries 429, 5xx and a plain 401 (probed, 2.1.197), but a 400 ends the turn at once and
// shows our message ("API Error: 400 nightshift: ..."); 403 would read "Failed to authenticate".
// Refusals and 401s also carry x-should-retry: false, which the CLI honours.
export const REFUSAL_STATUS = 400;
// The beta the real CLI sends with an OAuth token (probed): sent exactly when our credential is one.
export const OAUTH_BETA = 'oauth-2025-04-20';
// The CLI's own API_TIMEOUT_MS default: long thinking pauses are normal.
const DEFAULT_TIMEOUT_MS = 600_000;

// What the CLI calls for inference, measured (2.1.197, api key and OAuth, with and without
// nonessential traffic): POST /v1/messages?beta=true for every turn, side call and the
// non-streaming fallback; POST /v1/messages/count_tokens?beta=true when an MCP result is large.
// Nothing else reaches ANTHROPIC_BASE_URL but the HEAD / warm-up, which carries no token (a 401).
export const FORWARDED_PATHS: readonly string[] = ['/v1/messages', '/v1/messages/count_tokens'];
// The query the CLI sends; none at all is the SDK's non-beta form of the same calls.
export const FORWARDED_QUERIES: readonly string[] = ['', '?beta=true'];
const FORWARDED_METHOD = 'POST';
// The API's own request limit; a larger body is refused before it is read further.
const BODY_MAX = 32 * 1024 * 1024;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'expect']);

// Pure: the real credential from an environment, first of ANTHROPIC_API_KEY,
// CLAUDE_CODE_OAUTH_TOKEN, ANTHROPIC_AUTH_TOKEN (empty counts as unset).
export function credentialFrom(env: NodeJS.ProcessEnv): ApiCredential | null {
  const get = (k: string) => (env[k]?.trim() ? env[k]! : null);
  const key = get('ANTHROPIC_API_KEY');
  if (key) return { kind: 'api_key', value: key };
  const oauth = get('CLAUDE_CODE_OAUTH_TOKEN');
  if (oauth) return { kind: 'oauth', value: oauth };
  const bearer = get('ANTHROPIC_AUTH_TOKEN');
  if (bearer) return { kind: 'auth_token', value: bearer };
  return null;
}

// Pure: the headers to send upstream. The CLI's own headers pass, minus its credential, the
// hop-by-hop ones (and any its Connection header names), plus the real credential.
export function upstreamHeaders(incoming: http.IncomingHttpHeaders, credential: ApiCredential | null): http.OutgoingHttpHeaders {
  const named = new Set(String(incoming.connection ?? '').toLowerCase().split(',').map((s) => s.trim()).filter(Boolean));
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(incoming)) {
    if (v === undefined || k === 'x-api-key' || k === 'authorization' || HOP_BY_HOP.has(k) || k.startsWith('proxy-') || named.has(k)) continue;
    out[k] = v;
  }
  // The OAuth beta goes with the credential, not with whatever the CLI was handed.
  const betas = String(out['anthropic-beta'] ?? '').split(',').map((s) => s.trim()).filter((b) => b && b !== OAUTH_BETA);
  if (credential?.kind === 'oauth') betas.unshift(OAUTH_BETA);
  if (betas.length) out['anthropic-beta'] = betas.join(',');
  else delete out['anthropic-beta'];
  if (credential?.kind === 'api_key') out['x-api-key'] = credential.value;
  else if (credential) out.authorization = `Bearer ${credential.value}`;
  return out;
}

function responseHeaders(incoming: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(incoming)) {
    if (v === undefined || HOP_BY_HOP.has(k) || k.startsWith('proxy-')) continue;
    out[k] = v;
  }
  return out;
}

const apiError = (type: string, message: string) => ({ type: 'error', error: { type, message } });

// Control characters shown, not written: a path could otherwise forge log lines or a terminal.
export const escapeControl = (t: string): string =>
  t.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

// Pure: why a request may not go upstream, or null when it may. `url` is the raw request target.
// Only the exact paths and queries above pass; the reasons say what a decoded form hides, so a
// refusal in the log tells an attempt (`..%2f`, `%5c`, `//`) from a mere unknown endpoint.
export function apiRequestRefusal(method: string | undefined, url: string): string | null {
  if (!url.startsWith('/')) return 'not an origin-form path';
  const q = url.indexOf('?');
  const raw = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q);
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return 'a malformed percent-encoding';
  }
  // Checked on both forms: an upstream or gateway that decodes once more must not find them.
  for (const p of [raw, decoded]) {
    if (/[\u0000-\u001f\u007f-\u009f]/.test(p)) return 'a control character in the path';
    if (p.includes('\\')) return 'a backslash in the path';
    if (/(^|\/)\.{1,2}(\/|$)/.test(p)) return 'a dot segment in the path';
    if (p.includes('//')) return 'an empty segment in the path';
  }
  if (decoded !== raw) return 'percent-encoding in the path';
  if (!FORWARDED_PATHS.includes(raw)) return 'not an inference path';
  if (method !== FORWARDED_METHOD) return `not ${FORWARDED_METHOD}`;
  if (!FORWARDED_QUERIES.includes(query)) return 'a query the CLI does not send';
  return null;
}

export async function startApiProxy(o: ApiProxyOptions): Promise<ApiProxy> {
  const base = new URL(o.upstream);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`api proxy: upstream must be http(s), not ${base.protocol}`);
  // Credentials belong in `credential`; a URL with them would end up in logs and errors.
  if (base.username || base.password) throw new Error('api proxy: the upstream URL must not carry credentials');
  const secure = base.protocol === 'https:';
  const hostname = base.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = base.port ? Number(base.port) : secure ? 443 : 80;
  const prefix = base.pathname.replace(/\/+$/, '');
  const where = o.redact(base.origin + prefix);
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // node:https brings TLS with it: loaded at the first request (the CLI's first comes long after
  // its spawn), not on the way to the spawn.
  let client: { request: typeof http.request; agent: http.Agent } | null = null;
  const upstreamClient = () => {
    if (!client) {
      const mod = secure ? (createRequire(import.meta.url)('node:https') as typeof import('node:https')) : http;
      client = { request: mod.request, agent: new mod.Agent({ keepAlive: true }) };
    }
    return client;
  };

  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(token);
  const same = (got: string) => {
    const b = Buffer.from(got);
    return b.length === expected.length && timingSafeEqual(b, expected);
  };
  const presented = (req: http.IncomingMessage): { ok: boolean; any: boolean } => {
    const key = req.headers['x-api-key'];
    const auth = req.headers.authorization;
    const bearer = typeof auth === 'string' && /^bearer /i.test(auth) ? auth.slice(7).trim() : null;
    return { ok: (typeof key === 'string' && same(key)) || (bearer !== null && same(bearer)), any: key !== undefined || auth !== undefined };
  };

  const stats: ApiProxyStats = { requests: 0, refused: 0, refusedPaths: 0, unauthorized: 0, upstreamErrors: 0, metered: 0, lowered: 0, meterErrors: 0, credentialRefused: 0, answered: 0, lastStop: null, limits: 0, limited: null, unreachable: null };
  const inflight = new Set<http.ClientRequest>();
  let closing = false;
  const sockets = new Set<Socket>();

  const send = (res: http.ServerResponse, status: number, body: unknown, extra: http.OutgoingHttpHeaders = {}) => {
    if (res.headersSent) return void res.destroy();
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
    res.end(text);
  };

  const alive = () => {
    try {
      o.onActivity?.();
    } catch (err) {
      o.logger.warn({ event: 'api_proxy_activity_error', err: o.redact(String(err)) }, 'reporting activity failed');
    }
  };

  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const seen = presented(req);
    if (!seen.ok) {
      stats.unauthorized++;
      // The CLI's connection warm-up (HEAD / with no credential) is routine; a wrong token is not.
      const log = seen.any ? o.logger.warn : o.logger.debug;
      log.call(o.logger, { event: 'api_proxy_unauthorized', method: req.method, path: o.redact(path), presented: seen.any }, 'api request without the session token refused');
      req.resume();
      return send(res, 401, apiError('authentication_error', 'nightshift: invalid session token'), { 'x-should-retry': 'false' });
    }
    alive();
    // Only inference goes up with the credential: not files, batches, admin or key-minting paths.
    const pathRefusal = o.unsafeForwardAnyPath ? (path.startsWith('/') ? null : 'not an origin-form path') : apiRequestRefusal(req.method, path);
    if (pathRefusal) {
      stats.refusedPaths++;
      const shown = `${escapeControl(String(req.method)).slice(0, 20)} ${escapeControl(o.redact(path)).slice(0, 300)}`;
      o.logger.warn({ event: 'api_proxy_path_refused', method: escapeControl(String(req.method)), path: escapeControl(o.redact(path)), reason: pathRefusal }, `api request refused: ${shown} is not forwarded (${pathRefusal})`);
      req.resume();
      return send(res, REFUSAL_STATUS, apiError('invalid_request_error', `nightshift: ${shown} is not forwarded (${pathRefusal}); the session's API proxy forwards only ${FORWARDED_METHOD} ${FORWARDED_PATHS.join(', ')}`), { 'x-should-retry': 'false' });
    }
    let reason: string | null;
    try {
      reason = o.refuse?.() ?? null;
    } catch (err) {
      // Fail closed: a ceiling we cannot check is a ceiling passed.
      reason = 'the session cost check failed';
      o.logger.warn({ event: 'api_proxy_refuse_error', err: o.redact(String(err)) }, 'refuse() threw: refusing');
    }
    const refused = (why: string, event = 'api_proxy_refused') => {
      stats.refused++;
      // Never sent upstream, but seen: the span says why (the budget's refusal ends a session).
      const span = o.trace?.child(requestSpanName(path, null), { ...requestStartAttrs(path, req.headers, null), 'nightshift.refused': event === 'api_proxy_budget_refused' ? 'budget' : 'refused' });
      span?.fail(why);
      span?.end();
      o.logger.info({ event, method: req.method, path: o.redact(path), reason: o.redact(why) }, `api request refused: ${o.redact(why)}`);
      return send(res, REFUSAL_STATUS, apiError('invalid_request_error', `nightshift: ${why}`), { 'x-should-retry': 'false' });
    };
    if (reason) {
      req.resume();
      return refused(reason);
    }
    const meter = o.meter && path.split('?')[0] === '/v1/messages' ? o.meter : null;
    if (!meter) return forward(req, res, path, null);
    // A metered call is read whole first: its max_tokens may have to be lowered before it goes.
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= BODY_MAX) chunks.push(c);
    });
    req.on('error', () => res.destroy());
    req.on('end', async () => {
      if (size > BODY_MAX) return refused(`the request body is above ${BODY_MAX} bytes`);
      let a: Awaited<ReturnType<SessionMeter['admit']>>;
      try {
        a = await meter.admit(Buffer.concat(chunks, size), (body, signal) => countTokens(req.headers, body, signal));
      } catch (err) {
        // Fail closed: a call the meter could not count does not go.
        a = { ok: false, reason: `the meter could not count the call (${(err as Error).message})` };
      }
      if (res.destroyed || closing) {
        if (a.ok) meter.drop(a.call);
        return;
      }
      if (!a.ok) return refused(a.reason, meter.exhausted === a.reason ? 'api_proxy_budget_refused' : 'api_proxy_refused');
      if (a.lowered) {
        stats.lowered++;
        o.logger.info({ event: 'api_proxy_lowered', from: a.lowered.from, to: a.lowered.to }, `max_tokens lowered from ${a.lowered.from} to ${a.lowered.to} to fit the session's reservation`);
      }
      forward(req, res, path, { meter, call: a.call, body: a.body, admitted: a });
    });
  });

  // The meter's question to the API (budget/count-tokens.ts): count_tokens with the call's own
  // headers and the session's credential, never compressed; its input_tokens, or a throw (with
  // `status` for an HTTP answer). Not a turn: not in stats.requests.
  const countTokens = (incoming: http.IncomingHttpHeaders, body: Buffer, signal: AbortSignal) =>
    new Promise<number>((resolve, reject) => {
      const { request, agent } = upstreamClient();
      const headers = upstreamHeaders(incoming, o.credential);
      headers['content-length'] = body.length;
      headers['content-type'] = 'application/json';
      headers['accept-encoding'] = 'identity';
      const up = request({ hostname, port, agent, method: 'POST', path: `${prefix}/v1/messages/count_tokens`, headers, signal });
      inflight.add(up);
      up.on('close', () => inflight.delete(up));
      up.on('error', reject);
      up.on('response', (ur) => {
        const got: Buffer[] = [];
        let n = 0;
        ur.on('data', (c: Buffer) => (n += c.length) <= 64 * 1024 && got.push(c));
        ur.on('error', reject);
        ur.on('end', () => {
          if (ur.statusCode !== 200) return reject(Object.assign(new Error(`count_tokens answered ${ur.statusCode}`), { status: ur.statusCode }));
          try {
            const v = JSON.parse(Buffer.concat(got).toString('utf8'))?.input_tokens;
            if (Number.isSafeInteger(v) && v >= 0) return resolve(v);
          } catch {
            // not JSON
          }
          reject(new Error('count_tokens answered without a whole input_tokens'));
        });
      });
      up.end(body);
    });

  type Metered = { meter: SessionMeter; call: number; body: Buffer; admitted?: { model: string | null; maxTokens: number; worstUsd: number; lowered: { from: number; to: number } | null } };
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, path: string, m: Metered | null) => {
    stats.requests++;
    const t0 = Date.now();
    const { request, agent } = upstreamClient();
    const headers = upstreamHeaders(req.headers, o.credential);
    if (m) headers['content-length'] = m.body.length;
    const up = request({ hostname, port, agent, method: req.method, path: prefix + path, headers, timeout: timeoutMs });
    const span = o.trace?.child(requestSpanName(path, m?.admitted?.model ?? null), requestStartAttrs(path, req.headers, m?.admitted ?? null), { startMs: t0 });
    // Unmetered, the span ends with the upstream request; metered, once the meter has heard of it.
    if (!m) up.on('close', () => span?.end());
    inflight.add(up);
    up.on('close', () => inflight.delete(up));
    // The meter hears of each call exactly once: priced, at its worst, or dropped (never sent).
    let accounted = false;
    const account = (how: 'drop' | 'worst' | { outcome: Parameters<SessionMeter['finish']>[1] }) => {
      if (!m || accounted) return;
      accounted = true;
      if (how === 'drop') {
        span?.set({ 'nightshift.meter.dropped': true });
        span?.end();
        return m.meter.drop(m.call);
      }
      const usd = m.meter.finish(m.call, how === 'worst' ? null : how.outcome);
      span?.set(usageAttrs(how === 'worst' ? null : how.outcome, usd));
      span?.end();
      stats.metered++;
      o.logger.debug({ event: 'api_proxy_metered', usd, outcome: how === 'worst' ? 'worst_case' : how.outcome }, 'api call metered');
    };
    let sent = false;
    up.on('finish', () => (sent = true));
    // Destroyed before any answer (the client went, the proxy closed) without an error event:
    // the meter still hears of it.
    up.on('close', () => !res.headersSent && account(sent ? 'worst' : 'drop'));
    let failed = false;
    let clientGone = false;
    let tapAbort: (() => void) | null = null;
    const fail = (err: Error, timedOut: boolean) => {
      tapAbort?.();
      if (!res.headersSent) account(sent ? 'worst' : 'drop');
      if (failed || clientGone || closing) return;
      failed = true;
      stats.upstreamErrors++;
      span?.fail(timedOut ? 'the upstream timed out' : err.message);
      o.logger.warn({ event: 'api_proxy_upstream_error', upstream: where, method: req.method, path: o.redact(path), err: o.redact(err.message), timedOut, started: res.headersSent }, `upstream ${timedOut ? 'timed out' : 'failed'}`);
      // Once the response has started, only a cut connection tells the CLI the stream is broken.
      const why = timedOut || res.headersSent ? null : unreachableWhy(err as NodeJS.ErrnoException, hostname, port);
      if (why) {
        // No DNS, a refused port, a failed handshake: the CLI's retries (three minutes) cannot
        // mend it, and it words any 5xx "a server-side issue"; a 400 it neither retries nor glosses.
        stats.unreachable = why;
        o.logger.warn({ event: 'api_unreachable', upstream: where, code: (err as NodeJS.ErrnoException).code ?? null }, `the API upstream cannot be reached: ${why}`);
        send(res, REFUSAL_STATUS, apiError('api_error', `nightshift: ${why}`), { 'x-should-retry': 'false' });
      } else if (res.headersSent) res.destroy();
      else send(res, timedOut ? 504 : 502, apiError('api_error', `nightshift: the API upstream ${timedOut ? 'timed out' : 'is unreachable'} (${o.redact(err.message)})`));
      up.destroy();
    };
    up.on('timeout', () => fail(new Error(`no bytes for ${timeoutMs} ms`), true));
    up.on('error', (err) => fail(err, false));
    up.on('response', (ur) => {
      alive();
      ur.on('data', alive);
      stats.unreachable = null;
      const headers = responseHeaders(ur.headers);
      // The key is refused: the CLI would retry it ten times (three minutes); told not to, it stops
      // at once and the session ends naming the credential.
      if (ur.statusCode === 401) {
        headers['x-should-retry'] = 'false';
        stats.credentialRefused++;
        o.logger.warn({ event: 'api_credential_refused', status: 401, credential: o.credential?.kind ?? 'none' }, `the API refused the ${o.credential?.kind ?? 'missing'} credential (401)`);
      }
      // A limit the API itself answered: what a rate_limited outcome and its hold rest on.
      const limit = upstreamLimit(ur.statusCode ?? 0, (k) => (typeof ur.headers[k] === 'string' ? (ur.headers[k] as string) : undefined), (o.now ?? (() => new Date()))());
      if (limit) {
        stats.limits++;
        stats.limited = limit;
        o.logger.info({ event: 'api_limited', status: limit.status, rejected: limit.rejected, retry_at: limit.retry_at, source: limit.source }, `the API answered ${limit.status}${limit.rejected ? ' (usage window rejected)' : ''}${limit.retry_at ? `, come back at ${limit.retry_at} (${limit.source})` : ', no reset time given'}`);
      } else stats.limited = null;
      span?.set(responseAttrs(ur.statusCode ?? 0, ur.headers));
      if ((ur.statusCode ?? 0) >= 400) span?.fail(`the API answered ${ur.statusCode}`);
      res.writeHead(ur.statusCode ?? 502, ur.statusMessage, headers);
      res.flushHeaders();
      try {
        o.onHeaders?.(ur.headers);
      } catch (err) {
        o.logger.warn({ event: 'api_proxy_headers_error', err: o.redact(String(err)) }, 'reading a reply\'s headers failed');
      }
      const status = ur.statusCode ?? 0;
      // An API error is not billed: only a 2xx answer has usage to read.
      if (m && (status < 200 || status > 299)) account({ outcome: { usage: { input: 0, cacheWrite: 0, cacheRead: 0, output: 0 }, model: null, complete: true } });
      else if (m) {
        const tap = usageTap(ur.headers as Record<string, string>, (r) => {
          if (r instanceof Error) {
            stats.meterErrors++;
            o.logger.warn({ event: 'api_proxy_meter_error', err: o.redact(r.message) }, `the meter could not read a reply (${o.redact(r.message)}): counted at its worst case`);
            stats.lastStop = null;
            account('worst');
          } else {
            if (r.complete) stats.answered++;
            stats.lastStop = r.complete ? r.stopReason : null;
            account({ outcome: r });
          }
        });
        // A meter that throws is logged and counts the call's worst case; the CLI's bytes go on.
        const guarded = (f: () => void) => {
          try {
            f();
          } catch (err) {
            stats.meterErrors++;
            o.logger.warn({ event: 'api_proxy_meter_error', err: o.redact(String(err)) }, 'the meter failed: the call counted at its worst case');
            account('worst');
          }
        };
        tapAbort = () => guarded(() => tap.abort());
        ur.on('data', (c: Buffer) => !accounted && guarded(() => tap.write(c)));
        ur.on('end', () => guarded(() => tap.end()));
        res.on('close', () => res.writableFinished || tapAbort?.());
      }
      // pipe, not pipeline: who broke first decides what happens (see fail and the close below).
      ur.on('aborted', () => fail(new Error('the upstream cut the response'), false));
      ur.on('error', (err) => fail(err, false));
      ur.on('end', () => o.logger.debug({ event: 'api_proxy_done', method: req.method, path: o.redact(path), status: ur.statusCode, ms: Date.now() - t0 }, 'api request done'));
      ur.pipe(res);
    });
    // The client going away ends the upstream request (a dropped session stops paying).
    res.on('close', () => {
      if (res.writableFinished) return;
      clientGone = true;
      up.destroy();
    });
    req.on('error', () => {
      clientGone = true;
      up.destroy();
    });
    if (m) up.end(m.body);
    else req.pipe(up);
  };
  // Longer than node's 5 s, so the CLI rarely reuses a socket we are closing between turns.
  server.keepAliveTimeout = 120_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const { url } = await listenEndpoint(server, o.listen);
  o.logger.info({ event: 'api_proxy_started', url, upstream: where, credential: o.credential?.kind ?? 'none' }, 'api proxy listening');

  return {
    url,
    token,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const s of sockets) s.destroy();
        for (const r of inflight) r.destroy();
        client?.agent.destroy();
        server.close(() => resolve());
      }),
  };
}
