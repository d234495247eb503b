// The API proxy as the meter, driven directly (no CLI): each call priced from the usage the
// upstream reported, compressed or not, with the bytes the client gets unchanged; max_tokens
// lowered to fit the session's reservation; and spenders against small day caps, whose served
// cost (priced from the upstream's own log) stays within one request's input of the cap, while
// the rule before reservations overshoots.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, test, type TestContext } from 'node:test';
import { Ledger } from '../../../budget/ledger.js';
import { SessionMeter } from '../../../budget/meter.js';
import { startsBeforeReservations, type DayTotals } from '../../../budget/policy.js';
import { costAt, lookupPrice, type CallUsage } from '../../../budget/pricing.js';
import { reservationFor } from '../../../budget/reservation.js';
import { startApiProxy, type ApiProxy } from '../../../sessions/wall/api-proxy.js';
import { tempDir, waitFor } from '../../helpers.js';
import { seededRng as rng } from '../../../memory/learning/wander.js';

const quiet = { warn() {}, info() {}, debug() {} };
const MODEL = 'claude-sonnet-5';
const PRICE = lookupPrice(MODEL).price;

type Served = { usage: CallUsage; maxTokens: number; bodyBytes: number };
type Plan = { inputTokens?: number; outputTokens?: number; encoding?: 'gzip' | 'br' | 'identity'; json?: boolean };

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

// A loopback imitation of the API's usage: it answers each call with the tokens `plan` picks (never
// more output than max_tokens, like the API) and logs what it served.
async function usageUpstream(t: TestContext, plan: (body: any, bytes: number) => Plan) {
  const served: Served[] = [];
  const sent: Buffer[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = JSON.parse(raw.toString());
      const p = plan(body, raw.length);
      const input = p.inputTokens ?? Math.ceil(raw.length / 4);
      const output = Math.min(body.max_tokens, p.outputTokens ?? body.max_tokens);
      served.push({ usage: { input, cacheWrite: 0, cacheRead: 0, output }, maxTokens: body.max_tokens, bodyBytes: raw.length });
      const text = p.json
        ? JSON.stringify({ type: 'message', model: MODEL, content: [{ type: 'text', text: 'x' }], usage: { input_tokens: input, output_tokens: output } })
        : sse('message_start', { type: 'message_start', message: { model: MODEL, usage: { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } }) +
          sse('ping', { type: 'ping' }) +
          sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'word '.repeat(200) } }) +
          sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: output } }) +
          sse('message_stop', { type: 'message_stop' });
      const enc = p.encoding ?? 'identity';
      const bytes = enc === 'gzip' ? zlib.gzipSync(text) : enc === 'br' ? zlib.brotliCompressSync(Buffer.from(text)) : Buffer.from(text);
      sent.push(bytes);
      res.writeHead(200, { 'content-type': p.json ? 'application/json' : 'text/event-stream', ...(enc === 'identity' ? {} : { 'content-encoding': enc }) });
      // In pieces, as a stream arrives.
      for (let i = 0; i < bytes.length; i += 97) res.write(bytes.subarray(i, i + 97));
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, served, sent };
}

type Got = { status: number; body: Buffer; headers: http.IncomingHttpHeaders };
function post(p: ApiProxy, body: unknown): Promise<Got> {
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const u = new URL(p.url);
    const req = http.request({ host: u.hostname, port: u.port, path: '/v1/messages?beta=true', method: 'POST', agent: false, headers: { 'x-api-key': p.token, 'content-type': 'application/json', 'content-length': data.length, 'accept-encoding': 'gzip, br' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

// A compressed reply is read from its copy a moment after the client has its last byte.
const metered = (m: SessionMeter) => waitFor(() => m.state().pendingUsd === 0, 5000, 'the meter to price the call');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const messages = (bytes: number) => [{ role: 'user', content: 'a'.repeat(Math.max(1, bytes)) }];
const servedUsd = (s: Served[]) => s.reduce((sum, x) => sum + costAt(PRICE, x.usage), 0);


describe('api proxy meter', () => {
  for (const encoding of ['identity', 'gzip', 'br'] as const) {
    test(`a ${encoding} stream is metered from a copy: the client's bytes hash the same as the upstream's, and the meter equals the upstream's usage`, async (t) => {
      const up = await usageUpstream(t, () => ({ inputTokens: 1234, outputTokens: 567, encoding }));
      const meter = new SessionMeter({ reservationUsd: 5 });
      const p = await startApiProxy({ upstream: up.url, credential: { kind: 'api_key', value: 'k' }, logger: quiet, redact: (x) => x, meter });
      t.after(() => p.close());
      const got = await post(p, { model: MODEL, max_tokens: 4000, stream: true, messages: messages(100) });
      assert.equal(got.status, 200);
      assert.equal(got.headers['content-encoding'], encoding === 'identity' ? undefined : encoding);
      assert.equal(sha(got.body), sha(up.sent[0]), 'the bytes the client got are the upstream\'s');
      await metered(meter);
      assert.equal(meter.state().spentUsd, servedUsd(up.served));
      assert.equal(meter.state().spentUsd, (1234 * 3 + 567 * 15) / 1e6);
      assert.equal(p.stats.metered, 1);
      assert.equal(p.stats.meterErrors, 0);
    });
  }

  test('a JSON reply is metered from its usage', async (t) => {
    const up = await usageUpstream(t, () => ({ inputTokens: 10, outputTokens: 20, json: true, encoding: 'gzip' }));
    const meter = new SessionMeter({ reservationUsd: 5 });
    const p = await startApiProxy({ upstream: up.url, credential: null, logger: quiet, redact: (x) => x, meter });
    t.after(() => p.close());
    assert.equal((await post(p, { model: MODEL, max_tokens: 100, messages: messages(10) })).status, 200);
    await metered(meter);
    assert.equal(meter.state().spentUsd, (10 * 3 + 20 * 15) / 1e6);
  });

  test('a damaged compressed reply reaches the client as sent and is counted at its worst case, logged', async (t) => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        res.end('this is not gzip');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => server.close(() => r())));
    const warned: object[] = [];
    const meter = new SessionMeter({ reservationUsd: 5 });
    const p = await startApiProxy({ upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, credential: null, logger: { ...quiet, warn: (o: object) => warned.push(o) }, redact: (x) => x, meter });
    t.after(() => p.close());
    const got = await post(p, { model: MODEL, max_tokens: 1000, stream: true, messages: messages(30) });
    assert.equal(got.body.toString(), 'this is not gzip');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(p.stats.meterErrors, 1);
    assert.ok(warned.some((w) => (w as { event?: string }).event === 'api_proxy_meter_error'));
    assert.equal(meter.state().worstCaseCalls, 1);
    assert.ok(meter.state().spentUsd >= 1000 * 15e-6, 'the whole max_tokens counted');
  });

  test('max_tokens is lowered to what the reservation holds, and a call that cannot fit gets our 400 with x-should-retry: false and never goes up', async (t) => {
    const up = await usageUpstream(t, () => ({}));
    const meter = new SessionMeter({ reservationUsd: 0.1 });
    const p = await startApiProxy({ upstream: up.url, credential: null, logger: quiet, redact: (x) => x, meter });
    t.after(() => p.close());
    const first = await post(p, { model: MODEL, max_tokens: 32_000, stream: true, messages: messages(300), metadata: { user_id: 'x' } });
    assert.equal(first.status, 200);
    assert.ok(up.served[0].maxTokens < 32_000 && up.served[0].maxTokens > 6000, `lowered to ${up.served[0].maxTokens}`);
    assert.equal(p.stats.lowered, 1);
    const second = await post(p, { model: MODEL, max_tokens: 32_000, stream: true, messages: messages(300) });
    assert.equal(second.status, 400);
    assert.equal(second.headers['x-should-retry'], 'false');
    assert.match(JSON.parse(second.body.toString()).error.message, /^nightshift: the session's budget reservation has \$/);
    assert.equal(up.served.length, 1, 'the refused call never reached the upstream');
    assert.ok(meter.exhausted);
    assert.ok(servedUsd(up.served) <= 0.1);
  });

  // [seed, max_usd_per_day, max_usd_per_session]: the issue's $0.05/$0.04 first.
  const DAYS = [[1, 0.05, 0.04], [2, 0.4, 0.15], [3, 0.25, 0.25], [4, 1, 0.3], [5, 0.12, 0.05], [6, 0.6, 0.2], [7, 2, 0.5], [8, 1.5, 0.4], [9, 0.8, 0.1], [10, 3, 1], [11, 0.3, 0.08], [12, 2, 0.25]] as const;

  // One day of spenders: sessions start while the rule lets them; each makes calls of random size
  // until the proxy refuses one (or it stops by itself). Returns what the upstream served.
  async function spendDay(t: TestContext, seed: number, rule: 'reservations' | 'before', l: { cap: number; ceiling: number; min: number }) {
    const r = rng(seed);
    // The upstream counts input at 2 to 5 bytes a token: sometimes more tokens than bytes/3 guesses.
    const up = await usageUpstream(t, (body, bytes) => ({ inputTokens: Math.ceil(bytes / (2 + r() * 3)), outputTokens: r() < 0.5 ? body.max_tokens : Math.floor(r() * body.max_tokens), encoding: r() < 0.3 ? 'gzip' : 'identity' }));
    const ledger = Ledger.open(path.join(tempDir(t), 'ledger.db'));
    t.after(() => ledger.close());
    const day = '2026-12-01';
    let calls = 0;
    let maxInputUsd = 0;
    for (let s = 0; s < 40; s++) {
      const id = `s${s}`;
      const row = { id, agent: 'spender', day, started_at: `${day}T10:00:00.000Z`, transcript: null, model: MODEL, supervisor_pid: process.pid, supervisor_start: null };
      let reserve: number | null;
      if (rule === 'reservations') {
        const got = ledger.open(row, (today: DayTotals) => reservationFor(today, { maxUsdPerDay: l.cap, maxUsdPerSession: l.ceiling, minSessionUsd: l.min }));
        if (!got || !got.ok) break;
        reserve = got.usd;
      } else {
        reserve = startsBeforeReservations(ledger.dayTotals(day), { maxUsdPerDay: l.cap, maxUsdPerSession: l.ceiling });
        if (reserve === null) break;
        ledger.open(row);
      }
      const meter = new SessionMeter({ reservationUsd: rule === 'reservations' ? reserve : null, persist: (m) => ledger.meter(id, m) });
      // Before reservations: the session's ceiling refused calls once the spend had passed it.
      const p = await startApiProxy({ upstream: up.url, credential: null, logger: quiet, redact: (x) => x, meter, refuse: rule === 'before' ? () => (meter.committedUsd() > l.ceiling ? 'ceiling passed' : null) : undefined });
      for (let c = 0; c < 30; c++) {
        const bytes = Math.floor(300 + r() * 8000);
        const got = await post(p, { model: MODEL, max_tokens: Math.floor(200 + r() * 4000), stream: true, messages: messages(bytes) });
        if (got.status !== 200) break;
        await metered(meter);
        calls++;
        maxInputUsd = Math.max(maxInputUsd, costAt(PRICE, { ...up.served.at(-1)!.usage, output: 0 }));
        if (r() < 0.05) break;
      }
      await p.close();
      const m = meter.state();
      ledger.settle(row, { outcome: 'ok', ended_at: `${day}T10:01:00.000Z`, duration_ms: 1, cost_usd: m.spentUsd + m.pendingUsd, cost_estimated: false, turns: calls, exit_code: 0, result: null, error: null, input_tokens: 0, output_tokens: 0, metered_calls: m.calls });
    }
    return { served: servedUsd(up.served), ledger: ledger.dayTotals(day).costUsd, calls, maxInputUsd };
  }

  test('spenders at random sizes against small caps: what the upstream served never passes the cap by more than one request\'s input, and the ledger holds it to the cent', { timeout: 120_000 }, async (t) => {
    let total = 0;
    const figures: string[] = [];
    for (const [seed, cap, ceiling] of DAYS) {
      const d = await spendDay(t, seed, 'reservations', { cap, ceiling, min: 0.01 });
      total += d.calls;
      figures.push(`cap $${cap}: served $${d.served.toFixed(4)} over ${d.calls} calls`);
      assert.ok(d.served <= cap + d.maxInputUsd + 1e-9, `seed ${seed}: served $${d.served} against a cap of $${cap} (one input at most $${d.maxInputUsd})`);
      assert.ok(Math.abs(d.ledger - d.served) < 0.005, `seed ${seed}: the ledger says $${d.ledger}, the upstream served $${d.served}`);
      assert.ok(d.served > cap * 0.5, `seed ${seed}: the day was used (served $${d.served} of $${cap})`);
    }
    t.diagnostic(figures.join('; '));
    assert.ok(total >= 200, `a few hundred calls, got ${total}`);
  });

  test('the control: the start rule before reservations (start while spent < cap, spend to the ceiling) overshoots the same caps', { timeout: 120_000 }, async (t) => {
    let over = 0;
    const figures: string[] = [];
    for (const [seed, cap, ceiling] of DAYS) {
      const d = await spendDay(t, seed, 'before', { cap, ceiling, min: 0.01 });
      figures.push(`cap $${cap}: served $${d.served.toFixed(4)} (${((d.served / cap - 1) * 100).toFixed(0)}% over)`);
      if (d.served > cap + d.maxInputUsd) over++;
    }
    t.diagnostic(figures.join('; '));
    assert.ok(over >= DAYS.length * 0.6, `Expected most days to overshoot by more than one input, got ${over} of ${DAYS.length}: ${figures.join('; ')}`);
  });
});
