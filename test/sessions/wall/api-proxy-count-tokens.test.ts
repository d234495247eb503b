// The meter asks the API for its own count (issue 52 part 3): a call carrying an image, a PDF or a
// server tool is admitted by count_tokens, asked through the session's API proxy with the session's
// credential, each part once a session. The upstream is the imitation API, whose count_tokens
// counts as it bills: a PDF's pages as a renderer counts them. The PDF here lies in its page tree's
// /Count (1, over 100 pages), which pdf.js believes: the worker's count. Control: an upstream
// without count_tokens (404), where the meter falls back to the worker, admits the call, and the API
// bills it past the reservation.
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test, type TestContext } from 'node:test';
import { SessionMeter } from '../../../budget/meter.js';
import { lookupPrice } from '../../../budget/pricing.js';
import { startApiProxy, type ApiProxy } from '../../../sessions/wall/api-proxy.js';
import { startFakeApi, TEST_API_KEY, type FakeApi } from '../../fake-api.js';
import { pdf } from '../../fixtures/media-files.js';

const quiet = { warn() {}, info() {}, debug() {} };
const MODEL = 'claude-sonnet-4-5';
const PRICE = lookupPrice(MODEL).price;
const PAGES = 100;
// The API bills this file 100 pages (~100,000 tokens, $0.30 of Sonnet input); pdf.js reads 1.
const LYING = pdf(PAGES, { count: 1 });
const RESERVATION = 0.25;

async function setup(t: TestContext, o: { countTokens?: boolean; reservation?: number } = {}) {
  const api: FakeApi = await startFakeApi({ countTokens: o.countTokens });
  t.after(() => api.close());
  const meter = new SessionMeter({ reservationUsd: o.reservation ?? RESERVATION });
  t.after(() => meter.dispose());
  const proxy = await startApiProxy({ upstream: api.url, credential: { kind: 'api_key', value: TEST_API_KEY }, logger: quiet, redact: (s) => s, meter });
  t.after(() => proxy.close());
  return { api, meter, proxy };
}

function call(p: ApiProxy, content: unknown[], extra: Record<string, unknown> = {}): Promise<{ status: number; body: string }> {
  const data = Buffer.from(JSON.stringify({ model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content }], ...extra }));
  return new Promise((resolve, reject) => {
    const u = new URL(p.url);
    const req = http.request({ host: u.hostname, port: u.port, path: '/v1/messages', method: 'POST', agent: false, headers: { 'x-api-key': p.token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'content-length': data.length } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

const doc = (b: Buffer) => ({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b.toString('base64') } });
const billedUsd = (api: FakeApi) => api.served.reduce((s, r) => s + (r.usage.input_tokens * PRICE.input + r.usage.output_tokens * PRICE.output) / 1e6, 0);

// mutation: meter-without-count-tokens, caught here.
describe('count_tokens admission', () => {
  test('a PDF whose /Count under-states its pages is counted by the API: refused before it goes against a reservation it would pass', async (t) => {
    const { api, proxy } = await setup(t);
    const r = await call(proxy, [doc(LYING), { type: 'text', text: 'summarise' }]);
    assert.equal(r.status, 400, r.body);
    assert.match(r.body, /reservation has \$0\.25/);
    assert.ok(api.countTokens >= 2, 'the part and its baseline were counted by the API');
    assert.equal(api.served.length, 0, 'nothing billed');
  });

  test('negative control: without count_tokens the worker counts pdf.js\'s 1 page, the call goes, and the API bills it past the reservation', async (t) => {
    const { api, proxy, meter } = await setup(t, { countTokens: false });
    const r = await call(proxy, [doc(LYING), { type: 'text', text: 'summarise' }]);
    assert.equal(r.status, 200, r.body);
    assert.ok(billedUsd(api) > RESERVATION, `billed $${billedUsd(api)}`);
    assert.ok(api.served[0].usage.input_tokens >= PAGES * 1000);
    assert.match(String(meter.apiCounts.unavailable), /404/, 'asked no more this session');
  });

  test('each part is counted once a session; a text-only call never asks', async (t) => {
    const { api, proxy } = await setup(t, { reservation: 5 });
    assert.equal((await call(proxy, [{ type: 'text', text: 'hello' }])).status, 200);
    assert.equal(api.countTokens, 0, 'a text-only call does not ask');
    assert.equal((await call(proxy, [doc(LYING), { type: 'text', text: 'one' }])).status, 200);
    const asked = api.countTokens;
    assert.equal(asked, 2);
    // The CLI sends the file again with every later call: not asked again.
    assert.equal((await call(proxy, [doc(LYING), { type: 'text', text: 'two, longer now' }])).status, 200);
    assert.equal(api.countTokens, asked);
  });

  test('a server tool is counted by the API (its definitions) beside its uses\' bound; once a session', async (t) => {
    const { api, proxy, meter } = await setup(t, { reservation: 5 });
    const tools = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }];
    assert.equal((await call(proxy, [{ type: 'text', text: 'search' }], { tools })).status, 200);
    assert.equal(api.countTokens, 2);
    assert.equal((await call(proxy, [{ type: 'text', text: 'search again' }], { tools })).status, 200);
    assert.equal(api.countTokens, 2);
    assert.equal(meter.apiCounts.unavailable, null);
  });
});
