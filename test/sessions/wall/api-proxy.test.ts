// The per-session API proxy: token or 401, only the inference paths forwarded, the real credential
// swapped in upstream, everything else (statuses, headers, bytes, SSE timing) passed through unchanged.
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, test, type TestContext } from 'node:test';
import { apiRequestRefusal, credentialFrom, escapeControl, OAUTH_BETA, REFUSAL_STATUS, startApiProxy, upstreamHeaders, type ApiCredential, type ApiProxy, type ApiProxyOptions } from '../../../sessions/wall/api-proxy.js';
import { waitFor } from '../../helpers.js';

const REAL = 'sk-test-real-upstream-key';
const quiet = { warn() {}, info() {}, debug() {} };

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer };
type Upstream = { url: string; seen: Seen[]; server: http.Server };

// A recording upstream; `handle` answers (default: 200 JSON echoing nothing secret).
async function upstream(t: TestContext, handle?: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void): Promise<Upstream> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (handle) return handle(req, res, body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

async function proxy(t: TestContext, o: Partial<ApiProxyOptions> & { upstream: string }): Promise<ApiProxy> {
  const p = await startApiProxy({ credential: { kind: 'api_key', value: REAL }, logger: quiet, redact: (x) => x, ...o });
  t.after(() => p.close());
  return p;
}

// How a CLI-shaped request through the proxy ended: `clean end` or `cut`.
function ending(p: { url: string; token: string }, send: (req: http.ClientRequest) => void): Promise<string> {
  return new Promise((resolve) => {
    const req = http.request(`${p.url}/v1/messages`, { method: 'POST', headers: cliHeaders({ 'x-api-key': p.token }), agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve('clean end'));
      res.on('error', () => resolve('cut'));
      res.on('aborted', () => resolve('cut'));
    });
    req.on('error', () => resolve('cut'));
    send(req);
  });
}

type Got = { status: number; headers: http.IncomingHttpHeaders; body: Buffer; json: any };

// A raw node:http client: no decompression, no retries, headers exactly as given.
function call(p: { url: string }, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    // host/port/path, not a URL: a URL would resolve dot segments before sending.
    const u = new URL(p.url);
    const req = http.request({ host: u.hostname, port: u.port, path: opts.path ?? '/v1/messages', method: opts.method ?? 'POST', headers: opts.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        let json: any = null;
        try {
          json = JSON.parse(body.toString('utf8'));
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode!, headers: res.headers, body, json });
      });
    });
    req.on('error', reject);
    req.end(opts.body ?? '');
  });
}

const cliHeaders = (auth: Record<string, string>) => ({
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
  'x-app': 'cli',
  'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)',
  ...auth,
});

const BODY = JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });

describe('api proxy', () => {
  test('an upstream 401 reaches the CLI with x-should-retry: false (it stops at once) and is counted; a 400 is passed as it came', async (t) => {
    let status = 401;
    const up = await upstream(t, (_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}');
    });
    const p = await proxy(t, { upstream: up.url });
    const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const h = { 'x-api-key': p.token, 'content-type': 'application/json' };
    const refused = await call(p, { path: '/v1/messages?beta=true', headers: h, body });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['x-should-retry'], 'false');
    assert.equal(p.stats.credentialRefused, 1);
    status = 400;
    const other = await call(p, { path: '/v1/messages?beta=true', headers: h, body });
    assert.equal(other.status, 400);
    assert.equal(other.headers['x-should-retry'], undefined, 'control: only a refused credential is told not to retry');
  });

  test('listens on 127.0.0.1 with a fresh 64-hex-digit token per proxy', async (t) => {
    const up = await upstream(t);
    const a = await proxy(t, { upstream: up.url });
    const b = await proxy(t, { upstream: up.url });
    assert.match(a.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(a.token, /^[0-9a-f]{64}$/);
    assert.notEqual(a.token, b.token);
    assert.notEqual(a.url, b.url);
  });

  test('a request with no token, a wrong one, a near miss or the real key is answered 401 in the API error shape and never reaches the upstream', async (t) => {
    const up = await upstream(t);
    const p = await proxy(t, { upstream: up.url });
    const wrong = 'f'.repeat(64) === p.token ? 'e'.repeat(64) : 'f'.repeat(64);
    const attempts: Array<Record<string, string>> = [
      {},
      { 'x-api-key': wrong },
      { authorization: `Bearer ${wrong}` },
      { 'x-api-key': p.token.slice(0, -1) },
      { 'x-api-key': `${p.token}x` },
      { authorization: p.token }, // no scheme
      { authorization: `Basic ${p.token}` },
      { 'x-api-key': REAL },
    ];
    for (const auth of attempts) {
      const r = await call(p, { headers: cliHeaders(auth), body: BODY });
      assert.equal(r.status, 401, JSON.stringify(auth));
      assert.equal(r.json.type, 'error');
      assert.equal(r.json.error.type, 'authentication_error');
      assert.equal(typeof r.json.error.message, 'string');
      assert.equal(r.headers['x-should-retry'], 'false');
    }
    assert.equal(up.seen.length, 0);
    assert.equal(p.stats.unauthorized, attempts.length);
    assert.equal(p.stats.requests, 0);
  });

  test('with the token in x-api-key the upstream gets the real key, never the token, and the CLI headers and body unchanged', async (t) => {
    const up = await upstream(t);
    const p = await proxy(t, { upstream: up.url });
    const r = await call(p, { path: '/v1/messages?beta=true', headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { ok: true });
    assert.equal(up.seen.length, 1);
    const h = up.seen[0].headers;
    assert.equal(h['x-api-key'], REAL);
    assert.equal(h.authorization, undefined);
    assert.equal(h['anthropic-version'], '2023-06-01');
    assert.equal(h['anthropic-beta'], 'claude-code-20250219,interleaved-thinking-2025-05-14');
    assert.equal(h['x-app'], 'cli');
    assert.equal(h['user-agent'], 'claude-cli/2.1.197 (external, sdk-cli)');
    assert.equal(h.host, new URL(up.url).host, 'host is the upstream, not the proxy');
    assert.equal(up.seen[0].method, 'POST');
    assert.equal(up.seen[0].url, '/v1/messages?beta=true');
    assert.equal(up.seen[0].body.toString('utf8'), BODY);
    assert.ok(!JSON.stringify(up.seen[0]).includes(p.token), 'the token went upstream');
    assert.equal(p.stats.requests, 1);
  });

  test('with the token as Authorization: Bearer the upstream gets the real key in x-api-key and no authorization', async (t) => {
    const up = await upstream(t);
    const p = await proxy(t, { upstream: up.url });
    const r = await call(p, { headers: cliHeaders({ authorization: `Bearer ${p.token}` }), body: BODY });
    assert.equal(r.status, 200);
    assert.equal(up.seen[0].headers['x-api-key'], REAL);
    assert.equal(up.seen[0].headers.authorization, undefined);
    assert.ok(!JSON.stringify(up.seen[0].headers).includes(p.token));
  });

  test('an OAuth credential goes up as Authorization: Bearer with the oauth beta added, and no x-api-key', async (t) => {
    const up = await upstream(t);
    const p = await proxy(t, { upstream: up.url, credential: { kind: 'oauth', value: 'fake-oauth-real-credential' } });
    await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    const h = up.seen[0].headers;
    assert.equal(h.authorization, 'Bearer fake-oauth-real-credential');
    assert.equal(h['x-api-key'], undefined);
    assert.equal(h['anthropic-beta'], `${OAUTH_BETA},claude-code-20250219,interleaved-thinking-2025-05-14`);
    // The CLI's own oauth beta (it was handed the token as CLAUDE_CODE_OAUTH_TOKEN) is not doubled.
    await call(p, { headers: cliHeaders({ authorization: `Bearer ${p.token}`, 'anthropic-beta': `claude-code-20250219,${OAUTH_BETA},effort-2025-11-24` }), body: BODY });
    assert.equal(up.seen[1].headers['anthropic-beta'], `${OAUTH_BETA},claude-code-20250219,effort-2025-11-24`);
    assert.equal(up.seen[1].headers.authorization, 'Bearer fake-oauth-real-credential');
  });

  test('an auth token goes up as a bearer without the oauth beta; no credential sends neither header', async (t) => {
    const up = await upstream(t);
    const bearer = await proxy(t, { upstream: up.url, credential: { kind: 'auth_token', value: 'gateway-bearer-real' } });
    await call(bearer, { headers: cliHeaders({ authorization: `Bearer ${bearer.token}`, 'anthropic-beta': `${OAUTH_BETA},claude-code-20250219` }), body: BODY });
    assert.equal(up.seen[0].headers.authorization, 'Bearer gateway-bearer-real');
    assert.equal(up.seen[0].headers['x-api-key'], undefined);
    assert.equal(up.seen[0].headers['anthropic-beta'], 'claude-code-20250219');
    const none = await proxy(t, { upstream: up.url, credential: null });
    await call(none, { headers: cliHeaders({ 'x-api-key': none.token, authorization: `Bearer ${none.token}` }), body: BODY });
    assert.equal(up.seen[1].headers.authorization, undefined);
    assert.equal(up.seen[1].headers['x-api-key'], undefined);
  });

  test('hop-by-hop headers, proxy-* and those the Connection header names are not forwarded', async (t) => {
    const up = await upstream(t);
    const p = await proxy(t, { upstream: up.url });
    await call(p, {
      headers: cliHeaders({ 'x-api-key': p.token, connection: 'keep-alive, x-private', 'x-private': 'drop me', 'keep-alive': 'timeout=5', 'proxy-authorization': 'Basic abc', te: 'trailers', 'x-kept': 'yes' }),
      body: BODY,
    });
    const h = up.seen[0].headers;
    for (const k of ['x-private', 'keep-alive', 'proxy-authorization', 'te']) assert.equal(h[k], undefined, k);
    assert.equal(h['x-kept'], 'yes');
  });

  test('a path prefix in the upstream URL is kept in front of the path, and the query passes unchanged', async (t) => {
    const up = await upstream(t);
    for (const base of [`${up.url}/gateway/anthropic`, `${up.url}/gateway/anthropic/`]) {
      const p = await proxy(t, { upstream: base });
      await call(p, { path: '/v1/messages?beta=true', headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
      await call(p, { path: '/v1/messages/count_tokens?beta=true', headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    }
    const once = ['/gateway/anthropic/v1/messages?beta=true', '/gateway/anthropic/v1/messages/count_tokens?beta=true'];
    assert.deepEqual(up.seen.map((s) => s.url), [...once, ...once]);
  });

  test('a path with dot segments, plain or encoded, is answered 400 and not forwarded (it could climb out of the prefix)', async (t) => {
    const up = await upstream(t);
    const p = await proxy(t, { upstream: `${up.url}/gateway/anthropic` });
    for (const path of ['/../admin', '/v1/../../admin', '/v1/%2e%2e/admin', '/v1/.%2E/x', '/./v1/messages']) {
      const r = await call(p, { path, headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
      assert.equal(r.status, 400, path);
      assert.equal(r.json.error.type, 'invalid_request_error');
    }
    assert.equal(up.seen.length, 0);
    assert.equal(p.stats.refusedPaths, 5);
  });

  test('the upstream status, headers and body come back unchanged: a 529 with retry-after, and gzip bytes not decompressed', async (t) => {
    const gz = gzipSync(Buffer.from('{"type":"message","content":[]}'));
    const up = await upstream(t, (req, res) => {
      if (req.headers['x-test'] === 'overloaded') {
        res.writeHead(529, { 'content-type': 'application/json', 'retry-after': '7', 'request-id': 'req_123', 'anthropic-ratelimit-requests-remaining': '0' });
        return res.end('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}');
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': gz.length });
      res.end(gz);
    });
    const p = await proxy(t, { upstream: up.url });
    const over = await call(p, { headers: cliHeaders({ 'x-api-key': p.token, 'x-test': 'overloaded' }), body: BODY });
    assert.equal(over.status, 529);
    assert.equal(over.headers['retry-after'], '7');
    assert.equal(over.headers['request-id'], 'req_123');
    assert.equal(over.headers['anthropic-ratelimit-requests-remaining'], '0');
    assert.equal(over.body.toString(), '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}');
    const zipped = await call(p, { headers: cliHeaders({ 'x-api-key': p.token, 'accept-encoding': 'gzip' }), body: BODY });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.ok(zipped.body.equals(gz), 'the compressed bytes arrive as sent');
    assert.equal(up.seen[1].headers['accept-encoding'], 'gzip');
    assert.equal(p.stats.upstreamErrors, 0, 'an upstream error status is not a proxy error');
  });

  test('SSE: the first event reaches the client while the upstream is still waiting to send the rest', { timeout: 10_000 }, async (t) => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let upstreamEnded = false;
    let releasedInTime = false;
    const up = await upstream(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('event: message_start\ndata: {"type":"message_start"}\n\n');
      // Waits for the client to have seen the first event (a buffering proxy never lets it).
      const giveUp = setTimeout(() => finish(), 5000);
      const finish = () => {
        clearTimeout(giveUp);
        res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n', () => (upstreamEnded = true));
      };
      released.then(() => ((releasedInTime = true), finish()));
    });
    const p = await proxy(t, { upstream: up.url });
    const events: Array<{ text: string; upstreamEnded: boolean }> = [];
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${p.url}/v1/messages`, { method: 'POST', headers: cliHeaders({ 'x-api-key': p.token }), agent: false }, (res) => {
        assert.equal(res.headers['content-type'], 'text/event-stream');
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          events.push({ text: c, upstreamEnded });
          if (c.includes('message_start')) release();
        });
        res.on('end', resolve);
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(BODY);
    });
    assert.ok(releasedInTime, 'the first event did not reach the client before the upstream gave up waiting');
    assert.match(events[0].text, /message_start/);
    assert.doesNotMatch(events[0].text, /message_stop/);
    assert.equal(events[0].upstreamEnded, false);
    assert.match(events.map((e) => e.text).join(''), /message_stop/);
  });

  test('the request body is streamed up: the upstream sees its first part before the client has sent the rest', { timeout: 10_000 }, async (t) => {
    let firstPartUp = false;
    const server = http.createServer((req, res) => {
      req.once('data', () => (firstPartUp = true));
      req.resume();
      req.on('end', () => res.end('done'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const p = await proxy(t, { upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    const got = new Promise<number>((resolve, reject) => {
      const req = http.request(`${p.url}/v1/messages`, { method: 'POST', headers: cliHeaders({ 'x-api-key': p.token }), agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.write('{"model":"claude-sonnet-5",');
      waitFor(() => firstPartUp, 5000, 'the first part of the body upstream')
        .then(() => req.end('"messages":[]}'))
        .catch((err) => (req.destroy(), reject(err)));
    });
    assert.equal(await got, 200);
  });

  test('an upstream that refuses the connection is answered 400 in the API error shape, not to be retried, with the cause; and counted', async (t) => {
    const up = await upstream(t);
    const downUrl = up.url;
    await new Promise<void>((r) => (up.server.closeAllConnections(), up.server.close(() => r())));
    const p = await proxy(t, { upstream: downUrl });
    const r = await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    // A 5xx the CLI retries for minutes, then calls "a server-side issue": the cause is said at once.
    assert.equal(r.status, 400);
    assert.equal(r.headers['x-should-retry'], 'false');
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, 'api_error');
    assert.match(r.json.error.message, /^nightshift: 127\.0\.0\.1:\d+ refused the connection \(ECONNREFUSED\)/);
    assert.match(p.stats.unreachable ?? '', /refused the connection/);
    assert.equal(p.stats.upstreamErrors, 1);
  });

  test('an upstream that does not answer in timeoutMs is answered 504', { timeout: 10_000 }, async (t) => {
    const up = await upstream(t, () => undefined); // never answers
    const p = await proxy(t, { upstream: up.url, timeoutMs: 300 });
    const r = await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    assert.equal(r.status, 504);
    assert.equal(r.json.error.type, 'api_error');
    assert.match(r.json.error.message, /timed out/);
    assert.equal(up.seen.length, 1);
    assert.equal(p.stats.upstreamErrors, 1);
  });

  test('an upstream that cuts a stream midway cuts the client too, rather than ending it cleanly', { timeout: 10_000 }, async (t) => {
    const up = await upstream(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {}\n\n', () => setTimeout(() => res.socket?.destroy(), 100));
    });
    const p = await proxy(t, { upstream: up.url });
    const outcome = await ending(p, (req) => req.end(BODY));
    assert.equal(outcome, 'cut');
    assert.equal(p.stats.upstreamErrors, 1);
  });

  test('a client that goes away mid-request ends the upstream request', { timeout: 10_000 }, async (t) => {
    let upstreamClosed = false;
    const up = await upstream(t, (_req, res) => {
      res.on('close', () => (upstreamClosed = true));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: ping\ndata: {}\n\n'); // and then nothing: a long stream
    });
    const p = await proxy(t, { upstream: up.url });
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${p.url}/v1/messages`, { method: 'POST', headers: cliHeaders({ 'x-api-key': p.token }), agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.end(BODY);
      setTimeout(() => reject(new Error('no first event')), 5000).unref();
    });
    await waitFor(() => upstreamClosed, 5000, 'the upstream request to end');
    assert.equal(p.stats.upstreamErrors, 0, 'the client leaving is not an upstream error');
  });

  test(`refuse() with a reason answers ${REFUSAL_STATUS} invalid_request_error "nightshift: <reason>" and never contacts the upstream; null forwards`, async (t) => {
    const up = await upstream(t);
    let reason: string | null = null;
    const p = await proxy(t, { upstream: up.url, refuse: () => reason });
    assert.equal((await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY })).status, 200);
    reason = 'the session cost ceiling ($2.00) is reached';
    const r = await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, { type: 'error', error: { type: 'invalid_request_error', message: 'nightshift: the session cost ceiling ($2.00) is reached' } });
    assert.equal(r.headers['x-should-retry'], 'false');
    assert.equal(up.seen.length, 1);
    assert.deepEqual([p.stats.requests, p.stats.refused], [1, 1]);
  });

  test('refuse() that throws refuses (fails closed)', async (t) => {
    const up = await upstream(t);
    const p = await proxy(t, { upstream: up.url, refuse: () => { throw new Error('ledger gone'); } });
    const r = await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.equal(up.seen.length, 0);
  });

  test('no log line holds the token or the real credential, whatever happened', async (t) => {
    const lines: string[] = [];
    const capture = { warn: (o: object, m?: string) => lines.push(JSON.stringify(o) + (m ?? '')), info: (o: object, m?: string) => lines.push(JSON.stringify(o) + (m ?? '')), debug: (o: object, m?: string) => lines.push(JSON.stringify(o) + (m ?? '')) };
    const up = await upstream(t, (req, res) => {
      if (req.headers['x-test'] === 'cut') return res.socket?.destroy();
      res.writeHead(200).end('{}');
    });
    // Identity redaction: only not logging them keeps them out.
    let reason: string | null = null;
    const p = await proxy(t, { upstream: up.url, logger: capture, refuse: () => reason });
    await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    await call(p, { headers: cliHeaders({ 'x-api-key': `${p.token}0` }), body: BODY });
    await call(p, { headers: cliHeaders({ authorization: `Bearer ${REAL}` }), body: BODY });
    await call(p, { headers: cliHeaders({ 'x-api-key': p.token, 'x-test': 'cut' }), body: BODY });
    await call(p, { method: 'GET', path: '/v1/files', headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    reason = 'over budget';
    await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    assert.ok(lines.length >= 5, `${lines.length} log lines`);
    assert.ok(lines.some((l) => l.includes('api_proxy_upstream_error')));
    assert.ok(lines.some((l) => l.includes('api_proxy_unauthorized')));
    assert.ok(lines.some((l) => l.includes('api_proxy_path_refused')));
    for (const l of lines) {
      assert.ok(!l.includes(p.token), `token in: ${l}`);
      assert.ok(!l.includes(REAL), `credential in: ${l}`);
    }
  });

  test('log lines go through redact', async (t) => {
    const lines: string[] = [];
    const capture = { warn: (o: object) => lines.push(JSON.stringify(o)), info: (o: object) => lines.push(JSON.stringify(o)), debug: (o: object) => lines.push(JSON.stringify(o)) };
    const up = await upstream(t);
    const p = await proxy(t, { upstream: `${up.url}/secret-tenant`, logger: capture, redact: (x) => x.replaceAll('secret-tenant', '[REDACTED]'), refuse: () => 'over budget' });
    await call(p, { path: '/v1/messages?tenant=secret-tenant', headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    assert.ok(lines.length >= 2);
    for (const l of lines) assert.ok(!l.includes('secret-tenant'), l);
    assert.ok(lines.some((l) => l.includes('[REDACTED]')));
  });

  test('close() cuts an open stream and a half-sent request, ends the upstream request, and then connections are refused', { timeout: 10_000 }, async (t) => {
    let upstreamClosed = false;
    const up = await upstream(t, (_req, res) => {
      res.on('close', () => (upstreamClosed = true));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: ping\ndata: {}\n\n');
    });
    const p = await startApiProxy({ upstream: up.url, credential: { kind: 'api_key', value: REAL }, logger: quiet, redact: (x) => x });
    const open = (finish: boolean) =>
      ending(p, (req) => {
        if (finish) req.end(BODY);
        else req.write('{"model":'); // and never the rest
      });
    const stream = open(true);
    const halfSent = open(false);
    await waitFor(() => up.seen.length === 1, 5000, 'the stream to start');
    await new Promise((r) => setTimeout(r, 50));
    await p.close();
    assert.deepEqual(await Promise.all([stream, halfSent]), ['cut', 'cut']);
    await waitFor(() => upstreamClosed, 5000, 'the upstream request to end');
    await assert.rejects(call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY }), (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED');
  });

  test('an https upstream is spoken to in TLS (node:https loads at the first request), and a failed handshake is an upstream error', async (t) => {
    // A bare TCP listener: it records the first bytes and hangs up, so no handshake completes.
    const first: Buffer[] = [];
    const tcp = net.createServer((s) => s.once('data', (d: Buffer) => (first.push(d), s.destroy())));
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => tcp.close(() => r())));
    const p = await proxy(t, { upstream: `https://127.0.0.1:${(tcp.address() as AddressInfo).port}` });
    const got = await call(p, { headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    assert.equal(first.length, 1);
    // 0x16: a TLS handshake record (a ClientHello), not an HTTP request line.
    assert.equal(first[0]![0], 0x16, `the upstream got ${JSON.stringify(first[0]!.subarray(0, 16).toString('latin1'))}`);
    assert.ok(got.status >= 500, `expected an upstream error, got ${got.status}`);
  });

  test('an upstream URL with credentials or another scheme is rejected at start', async () => {
    await assert.rejects(startApiProxy({ upstream: 'https://user:pw@api.example.com', credential: null, logger: quiet, redact: (x) => x }), /must not carry credentials/);
    await assert.rejects(startApiProxy({ upstream: 'ftp://api.example.com', credential: null, logger: quiet, redact: (x) => x }), /must be http/);
  });
});

// [method, raw path, the refusal (null: forwarded)]: what the CLI sends passes, nothing else.
const TABLE: Array<[string | undefined, string, string | null]> = [
  // Measured: every turn, side call and fallback; count_tokens for a large MCP result.
  ['POST', '/v1/messages?beta=true', null],
  ['POST', '/v1/messages/count_tokens?beta=true', null],
  // The SDK's non-beta form of the same two calls.
  ['POST', '/v1/messages', null],
  ['POST', '/v1/messages/count_tokens', null],
  // Other endpoints the credential would open.
  ['GET', '/v1/files', 'not an inference path'],
  ['POST', '/v1/files?beta=true', 'not an inference path'],
  ['DELETE', '/v1/files/file_011CNha8iCJcU1wXNR6q4V8w', 'not an inference path'],
  ['POST', '/v1/messages/batches', 'not an inference path'],
  ['POST', '/v1/messages/batches?beta=true', 'not an inference path'],
  ['GET', '/v1/messages/batches/msgbatch_01/results', 'not an inference path'],
  ['GET', '/v1/organizations/api_keys', 'not an inference path'],
  ['POST', '/api/oauth/claude_cli/create_api_key', 'not an inference path'],
  ['POST', '/v1/oauth/token', 'not an inference path'],
  ['GET', '/v1/models', 'not an inference path'],
  ['POST', '/v1/complete', 'not an inference path'],
  ['POST', '/', 'not an inference path'],
  ['POST', '/V1/MESSAGES', 'not an inference path'],
  ['POST', '/v1/messages/', 'not an inference path'],
  ['POST', '/v1/messages;x=1', 'not an inference path'],
  // Climbing out of the allowed path or a gateway's prefix, plain or encoded.
  ['POST', '/v1/messages/..%2f..%2fv1/files', 'a dot segment in the path'],
  ['POST', '/v1/messages/..%2F..%2Fv1%2Ffiles', 'a dot segment in the path'],
  ['POST', '/v1/messages/../files', 'a dot segment in the path'],
  ['POST', '/v1/messages/%2e%2e/files', 'a dot segment in the path'],
  ['POST', '/v1/%2E%2E/admin', 'a dot segment in the path'],
  ['POST', '/v1/.%2e/x', 'a dot segment in the path'],
  ['POST', '/./v1/messages', 'a dot segment in the path'],
  ['POST', '/v1/messages/..', 'a dot segment in the path'],
  ['POST', '/v1/messages/..\\files', 'a backslash in the path'],
  ['POST', '/v1/messages%5c..%5cfiles', 'a backslash in the path'],
  ['POST', '/v1/messages%5C', 'a backslash in the path'],
  ['POST', '/v1//messages', 'an empty segment in the path'],
  ['POST', '//v1/messages', 'an empty segment in the path'],
  ['POST', '/v1/%2fmessages', 'an empty segment in the path'],
  ['POST', '/v1/messages%00', 'a control character in the path'],
  ['POST', '/v1/messages%0d%0aX-Injected:%201', 'a control character in the path'],
  ['POST', '/v1/messages\u0000', 'a control character in the path'],
  ['POST', '/v1/messages%2fcount_tokens', 'percent-encoding in the path'],
  ['POST', '/v1/m%65ssages', 'percent-encoding in the path'],
  ['POST', '/v1/messages%252e%252e', 'percent-encoding in the path'],
  ['POST', '/v1/messages%zz', 'a malformed percent-encoding'],
  ['POST', '/v1/messages%', 'a malformed percent-encoding'],
  // Not origin-form.
  ['POST', 'http://api.example.com/v1/messages', 'not an origin-form path'],
  ['OPTIONS', '*', 'not an origin-form path'],
  ['POST', '', 'not an origin-form path'],
  // The right path, the wrong method.
  ['GET', '/v1/messages?beta=true', 'not POST'],
  ['GET', '/v1/messages', 'not POST'],
  ['DELETE', '/v1/messages', 'not POST'],
  ['PUT', '/v1/messages/count_tokens', 'not POST'],
  ['HEAD', '/v1/messages', 'not POST'],
  ['post', '/v1/messages', 'not POST'],
  [undefined, '/v1/messages', 'not POST'],
  // The right call, a query the CLI never sends.
  ['POST', '/v1/messages?beta=false', 'a query the CLI does not send'],
  ['POST', '/v1/messages?beta=true&x=1', 'a query the CLI does not send'],
  ['POST', '/v1/messages?', 'a query the CLI does not send'],
  ['POST', '/v1/messages?q=../../v1/files', 'a query the CLI does not send'],
];

describe('apiRequestRefusal', () => {
  test(`forwards only what the CLI sends for inference: a table of ${TABLE.length}`, () => {
    for (const [method, path, want] of TABLE) {
      const got = apiRequestRefusal(method, path);
      assert.equal(got, want, `Expected \`${method} ${JSON.stringify(path)}\` to be ${want === null ? 'forwarded' : `refused (${want})`}, got ${got === null ? 'forwarded' : `refused (${got})`}`);
    }
  });

  test('escapeControl shows control characters instead of writing them', () => {
    assert.equal(escapeControl('/v1/a\nb\r\u0000\u001b[31m\u007f\u0085'), '/v1/a\\x0ab\\x0d\\x00\\x1b[31m\\x7f\\x85');
    assert.equal(escapeControl('/v1/messages?beta=true'), '/v1/messages?beta=true');
  });
});

describe('api proxy allowlist', () => {
  // A loopback upstream that counts its TCP connections, not only the requests it answers.
  async function counted(t: TestContext): Promise<Upstream & { connections: () => number }> {
    const up = await upstream(t);
    let n = 0;
    up.server.on('connection', () => n++);
    return { ...up, connections: () => n };
  }

  const REFUSED: Array<[string, string]> = [
    ['GET', '/v1/files'],
    ['DELETE', '/v1/files/file_011CNha8iCJcU1wXNR6q4V8w'],
    ['POST', '/v1/messages/batches?beta=true'],
    ['GET', '/v1/organizations/api_keys'],
    ['POST', '/api/oauth/claude_cli/create_api_key'],
    ['POST', '/v1/messages/..%2f..%2fv1/files'],
    ['POST', '/v1/messages/..\\files'],
    ['POST', '/v1//messages'],
    ['POST', '/v1/%2e%2e/files'],
    ['GET', '/v1/messages?beta=true'],
  ];

  for (const credential of [{ kind: 'api_key', value: REAL }, { kind: 'oauth', value: 'fake-oauth-real-credential' }, { kind: 'auth_token', value: 'gateway-bearer-real' }] as ApiCredential[]) {
    test(`with ${credential.kind === 'api_key' ? 'an API key' : credential.kind === 'oauth' ? 'an OAuth token' : 'a bearer'}, ${REFUSED.length} refused requests are answered ${REFUSAL_STATUS} without an upstream connection, while an allowed one goes up`, async (t) => {
      const up = await counted(t);
      const p = await proxy(t, { upstream: `${up.url}/gateway`, credential });
      for (const [method, path] of REFUSED) {
        const r = await call(p, { method, path, headers: cliHeaders({ 'x-api-key': p.token }), body: method === 'POST' ? BODY : '' });
        assert.equal(r.status, REFUSAL_STATUS, `Expected \`${method} ${path}\` to be ${REFUSAL_STATUS}, got ${r.status}`);
        assert.equal(r.headers['x-should-retry'], 'false');
        assert.equal(r.json?.type, 'error');
        assert.equal(r.json.error.type, 'invalid_request_error');
        assert.ok(r.json.error.message.startsWith(`nightshift: ${method} ${path} is not forwarded (`), r.json.error.message);
      }
      assert.equal(up.connections(), 0, 'a refused request opened an upstream connection');
      assert.equal(up.seen.length, 0);
      assert.equal(p.stats.refusedPaths, REFUSED.length);
      assert.equal(p.stats.requests, 0);
      const ok = await call(p, { path: '/v1/messages?beta=true', headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
      assert.equal(ok.status, 200);
      assert.deepEqual(up.seen.map((s) => `${s.method} ${s.url}`), ['POST /gateway/v1/messages?beta=true']);
      assert.equal(p.stats.requests, 1);
      assert.equal(p.stats.refusedPaths, REFUSED.length, 'an allowed request is not counted as refused');
    });
  }

  test('the negative control: with the allowlist off, the same requests reach the upstream with the real credential', async (t) => {
    const up = await counted(t);
    const p = await proxy(t, { upstream: `${up.url}/gateway`, unsafeForwardAnyPath: true });
    for (const [method, path] of REFUSED) {
      const r = await call(p, { method, path, headers: cliHeaders({ 'x-api-key': p.token }), body: method === 'POST' ? BODY : '' });
      assert.equal(r.status, 200, `Expected \`${method} ${path}\` to be forwarded, got ${r.status}`);
    }
    assert.deepEqual(up.seen.map((s) => `${s.method} ${s.url}`), REFUSED.map(([m, path]) => `${m} /gateway${path}`));
    for (const s of up.seen) assert.ok(s.headers['x-api-key'] === REAL, `Expected \`${s.method} ${s.url}\` to carry the real key`);
    assert.ok(up.connections() > 0);
    assert.equal(p.stats.refusedPaths, 0);
  });

  test('an unauthenticated request to a refused path is a 401, not a 400: the path is judged only for the token holder', async (t) => {
    const up = await counted(t);
    const p = await proxy(t, { upstream: up.url });
    const r = await call(p, { method: 'GET', path: '/v1/files', headers: cliHeaders({}) });
    assert.equal(r.status, 401);
    assert.equal(p.stats.unauthorized, 1);
    assert.equal(p.stats.refusedPaths, 0);
    assert.equal(up.connections(), 0);
  });

  test('a refused path is logged once per request, as a warning with the method, the redacted path and the reason', async (t) => {
    const lines: Array<{ level: string; o: any; m?: string }> = [];
    const log = (level: string) => (o: object, m?: string) => lines.push({ level, o, m });
    const up = await counted(t);
    const p = await proxy(t, { upstream: up.url, logger: { warn: log('warn'), info: log('info'), debug: log('debug') }, redact: (x) => x.replaceAll('secret-tenant', '[REDACTED]') });
    await call(p, { method: 'DELETE', path: '/v1/files/secret-tenant', headers: cliHeaders({ 'x-api-key': p.token }) });
    await call(p, { path: '/v1/messages/..%2f..%2fv1/files', headers: cliHeaders({ 'x-api-key': p.token }), body: BODY });
    const refused = lines.filter((l) => l.o.event === 'api_proxy_path_refused');
    assert.equal(refused.length, 2, `Expected 2 api_proxy_path_refused lines, got ${refused.length}`);
    assert.deepEqual(refused.map((l) => [l.level, l.o.method, l.o.path, l.o.reason]), [
      ['warn', 'DELETE', '/v1/files/[REDACTED]', 'not an inference path'],
      ['warn', 'POST', '/v1/messages/..%2f..%2fv1/files', 'a dot segment in the path'],
    ]);
    assert.match(refused[0].m!, /DELETE \/v1\/files\/\[REDACTED\] is not forwarded/);
    assert.ok(!JSON.stringify(lines).includes('secret-tenant'));
    assert.equal(up.connections(), 0);
  });
});

describe('credentialFrom', () => {
  test('takes ANTHROPIC_API_KEY first, then CLAUDE_CODE_OAUTH_TOKEN, then ANTHROPIC_AUTH_TOKEN; empty is unset', () => {
    const all = { ANTHROPIC_API_KEY: 'k', CLAUDE_CODE_OAUTH_TOKEN: 'o', ANTHROPIC_AUTH_TOKEN: 'b' };
    assert.deepEqual(credentialFrom(all), { kind: 'api_key', value: 'k' });
    assert.deepEqual(credentialFrom({ ...all, ANTHROPIC_API_KEY: '' }), { kind: 'oauth', value: 'o' });
    assert.deepEqual(credentialFrom({ ...all, ANTHROPIC_API_KEY: ' ', CLAUDE_CODE_OAUTH_TOKEN: undefined }), { kind: 'auth_token', value: 'b' });
    assert.equal(credentialFrom({ PATH: '/bin' }), null);
  });
});

describe('upstreamHeaders', () => {
  test('swaps the credential and keeps the rest', () => {
    const cred: ApiCredential = { kind: 'api_key', value: REAL };
    const out = upstreamHeaders({ 'x-api-key': 'tok', authorization: 'Bearer tok', host: 'proxy', 'transfer-encoding': 'chunked', 'content-type': 'application/json', 'content-length': '12' }, cred);
    assert.deepEqual(out, { 'content-type': 'application/json', 'content-length': '12', 'x-api-key': REAL });
  });
});
