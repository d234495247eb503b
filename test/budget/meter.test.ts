import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SessionMeter, type MeterState } from '../../budget/meter.js';
import { costAt, lookupPrice, UNKNOWN_PRICE } from '../../budget/pricing.js';

const body = (o: Record<string, unknown> = {}) => Buffer.from(JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 32_000, stream: true, messages: [{ role: 'user', content: 'hi' }], ...o }));
const usage = (input: number, output: number) => ({ usage: { input, cacheWrite: 0, cacheRead: 0, output }, model: 'claude-sonnet-5', complete: true });

describe('price table', () => {
  for (const [model, input, output] of [
    ['claude-sonnet-5', 3, 15], ['claude-opus-4-5-20251101', 5, 25], ['claude-opus-4-1-20250805', 15, 75], ['claude-3-opus-20240229', 15, 75],
    ['claude-haiku-4-5', 1, 5], ['claude-3-5-haiku-20241022', 0.8, 4], ['claude-3-haiku-20240307', 0.25, 1.25], ['gateway-model-x', 15, 75],
  ] as const) {
    test(`${model}: $${input}/$${output}`, async () => {
      const p = lookupPrice(model).price;
      assert.deepEqual([p.input, p.output], [input, output]);
      assert.equal(lookupPrice(model).known, model !== 'gateway-model-x');
    });
  }
  test('budget.prices overrides and adds: exact name first, then the longest part', async () => {
    const o = { 'gateway-model': { input: 2, output: 8 }, 'gateway-model-x': { input: 1, output: 4, cache_read: 0.05 }, sonnet: { input: 6, output: 30 } };
    assert.deepEqual(lookupPrice('gateway-model-x', o).price, { input: 1, output: 4, cache_write: 1.25, cache_write_1h: 2, cache_read: 0.05 });
    assert.equal(lookupPrice('gateway-model-y', o).price.input, 2);
    assert.equal(lookupPrice('claude-sonnet-5', o).price.input, 6);
  });
  test('cache writes (5 minutes and an hour), reads and web searches are priced', async () => {
    const p = lookupPrice('claude-sonnet-5').price;
    assert.equal(Math.round(costAt(p, { input: 1e6, cacheWrite: 2e6, cacheWrite1h: 1e6, cacheRead: 1e6, output: 1e6, webSearches: 3 }) * 1e6) / 1e6, 28.08); // 3 + 3.75 + 6 + 0.3 + 15 + 0.03
  });
});

describe('session meter', () => {
  test('a call that fits goes as sent (re-serialised to the same bytes) and is priced from its usage', async () => {
    const states: MeterState[] = [];
    const m = new SessionMeter({ reservationUsd: 1, persist: (s) => states.push(s) });
    const raw = body();
    const a = await m.admit(raw);
    assert.ok(a.ok);
    assert.equal(a.body.toString(), raw.toString());
    assert.equal(a.lowered, null);
    assert.ok(m.state().pendingUsd > 0.48, 'the worst case is held while it runs');
    m.finish(a.call, usage(1000, 200));
    assert.equal(m.state().pendingUsd, 0);
    assert.equal(Math.round(m.state().spentUsd * 1e6), 3000 + 3000);
    assert.equal(states.length, 2, 'persisted when it went and when it ended');
  });
  test('max_tokens is lowered to what is left, and a call that cannot fit is refused and marks the meter exhausted', async () => {
    const m = new SessionMeter({ reservationUsd: 0.05 });
    const a = await m.admit(body());
    assert.ok(a.ok && a.lowered);
    const sent = JSON.parse(a.body.toString());
    assert.equal(sent.max_tokens, a.lowered.to);
    assert.ok(a.lowered.to < 32_000 && a.lowered.to > 3000);
    // A second call while the first is in flight sees only what the first leaves.
    const b = await m.admit(body());
    assert.equal(b.ok, false);
    assert.match(m.exhausted ?? '', /reservation has \$0\.0000 left/);
    m.finish(a.call, usage(100, 10));
    assert.ok((await m.admit(body())).ok, 'the first call spent little: room again');
  });
  test('a call whose usage could not be read counts its worst case; an unfinished stream its whole max_tokens', async () => {
    const m = new SessionMeter({ reservationUsd: null });
    const a = await m.admit(body({ max_tokens: 1000 }));
    assert.ok(a.ok);
    const worst = m.state().pendingUsd;
    assert.equal(m.finish(a.call, null), worst);
    const b = await m.admit(body({ max_tokens: 1000 }));
    assert.ok(b.ok);
    assert.equal(Math.round(m.finish(b.call, { ...usage(10, 5), complete: false }) * 1e6), 30 + 15_000);
    assert.equal(m.state().worstCaseCalls, 2);
  });
  test('a duplicate max_tokens cannot slip a larger value past the meter: what goes is what was read', async () => {
    const m = new SessionMeter({ reservationUsd: 0.05 });
    const a = await m.admit(Buffer.from('{"max_tokens":64000,"model":"claude-sonnet-5","messages":[],"max_tokens":100}'));
    assert.ok(a.ok);
    assert.equal(a.body.toString(), '{"max_tokens":100,"model":"claude-sonnet-5","messages":[]}');
  });
  test('a body that is not JSON, or has no max_tokens, is refused; a closed meter refuses all', async () => {
    const m = new SessionMeter({ reservationUsd: 1 });
    assert.equal((await m.admit(Buffer.from('{"max_tokens":'))).ok, false);
    assert.equal((await m.admit(body({ max_tokens: undefined }))).ok, false);
    m.close('the session is over');
    assert.deepEqual(await m.admit(body()), { ok: false, reason: 'the session is over' });
  });
  test('an unknown model is priced at the dearest known and said once', async () => {
    const warned: object[] = [];
    const m = new SessionMeter({ reservationUsd: null, warn: (o) => warned.push(o) });
    for (let i = 0; i < 3; i++) {
      const a = await m.admit(body({ model: 'renamed-by-gateway', max_tokens: 10 }));
      assert.ok(a.ok);
      m.finish(a.call, { usage: { input: 1e5, cacheWrite: 0, cacheRead: 0, output: 0 }, model: 'renamed-by-gateway', complete: true });
    }
    assert.equal(warned.length, 1);
    assert.equal(UNKNOWN_PRICE.input, 15, 'the dearest row: opus 4.1 at $15/$75');
    assert.equal(Math.round(m.state().spentUsd * 1e6) / 1e6, 3 * 1.5); // 100k tokens at $15/M, three times
  });
  test('a record that cannot be written keeps the call from going (fail closed)', async () => {
    const m = new SessionMeter({ reservationUsd: 1, persist: () => { throw new Error('disk full'); } });
    const a = await m.admit(body());
    assert.equal(a.ok, false);
    assert.match(!a.ok ? a.reason : '', /disk full/);
    assert.equal(m.state().pendingUsd, 0);
  });
});

describe('what goes upstream', () => {
  test('a body whose max_tokens is one literal key goes byte for byte; a second one, or an escape that could spell one, is re-serialised', async () => {
    const m = new SessionMeter({ reservationUsd: 100 });
    const spaced = Buffer.from('{ "model": "claude-sonnet-5", "max_tokens": 100, "messages": [] }');
    const a = await m.admit(spaced);
    assert.ok(a.ok && a.body === spaced);
    for (const raw of ['{"max_tokens":64000,"messages":[{"role":"user","content":"\\"max_tokens\\" and \\"max_tokens\\""}],"max_tokens":100}', '{"max_tok\\u0065ns":64000,"max_tokens":100,"messages":[]}']) {
      const b = await m.admit(Buffer.from(raw));
      assert.ok(b.ok);
      assert.equal(JSON.parse(b.body.toString()).max_tokens, JSON.parse(raw).max_tokens);
      assert.equal(b.body.toString().match(/max_tokens/g)?.length, raw.includes('content') ? 3 : 1, b.body.toString());
    }
  });
  test('a call is priced by the model the API says it ran, unless the operator priced the name the request used', async () => {
    const m = new SessionMeter({ reservationUsd: null, prices: { 'my-gateway': { input: 1, output: 1 } } });
    const a = await m.admit(body({ model: 'claude-haiku-4-5', max_tokens: 10 }));
    assert.ok(a.ok);
    assert.equal(m.finish(a.call, { usage: { input: 1e5, cacheWrite: 0, cacheRead: 0, output: 0 }, model: 'claude-opus-4-1', complete: true }), 1.5);
    const b = await m.admit(body({ model: 'my-gateway', max_tokens: 10 }));
    assert.ok(b.ok);
    assert.equal(m.finish(b.call, { usage: { input: 1e5, cacheWrite: 0, cacheRead: 0, output: 0 }, model: 'claude-opus-4-1', complete: true }), 0.1);
  });
});

// The CLI's WebSearch (2.1.332): the server tool beside its own tools, max_uses 8.
const WEB_SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 8 };
const cliTools = Array.from({ length: 20 }, (_, i) => ({ name: `Tool${i}`, description: 'Runs a thing.', input_schema: { type: 'object', properties: { p: { type: 'string' } } } }));

describe('server tools in the worst case', () => {
  test('WebSearch with max_uses 8 and $0.05 left: refused, naming what it adds (control: counted without the server tool, the same call is admitted and a real run of it bills $0.215)', async () => {
    const raw = body({ max_tokens: 1000, tools: [...cliTools, WEB_SEARCH] });
    const m = new SessionMeter({ reservationUsd: 0.05 });
    const a = await m.admit(raw);
    assert.equal(a.ok, false);
    if (!a.ok) assert.match(a.reason, /\$0\.0800 and 80000 tokens of it server tools/);
    // The control: the meter before (no server tool in the worst case) admits the same call.
    const before = new SessionMeter({ reservationUsd: 0.05 });
    const b = await before.admit(body({ max_tokens: 1000, tools: cliTools }));
    assert.equal(b.ok, true);
    // What the review's call billed: 8 searches and their results as input.
    const billed = costAt(lookupPrice('claude-sonnet-5').price, { input: 44_000, cacheWrite: 0, cacheRead: 0, output: 1000, webSearches: 8 });
    assert.ok(billed > 0.2 && billed > 0.05, String(billed));
  });
  test('found by the fast path (a body read by its top-level keys) and by the full read (a body with media): $0.32 more than without it', async () => {
    const worst = async (o: Record<string, unknown>) => {
      const m = new SessionMeter({ reservationUsd: 100 });
      assert.equal((await m.admit(body(o))).ok, true);
      m.dispose();
      return m.state().pendingUsd;
    };
    // 8 × $0.01 + 80,000 tokens at $3 a million, whichever way the body is read.
    const added = 0.08 + 0.24;
    const fast = (await worst({ tools: [...cliTools, WEB_SEARCH] })) - (await worst({ tools: cliTools }));
    const image = { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] };
    const full = (await worst({ tools: [...cliTools, WEB_SEARCH], messages: [image] })) - (await worst({ tools: cliTools, messages: [image] }));
    assert.ok(Math.abs(fast - added) < 1e-3 && Math.abs(full - added) < 1e-3, `${fast} ${full}`);
  });
  test('web_search without max_uses is refused: its searches are unbounded', async () => {
    const a = await new SessionMeter({ reservationUsd: 100 }).admit(body({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }));
    assert.equal(a.ok, false);
    if (!a.ok) assert.match(a.reason, /without a whole max_uses/);
  });
  test('a server tool with no known price is refused with its name; the agent can allow it (control: allowed, it goes)', async () => {
    const raw = body({ tools: [...cliTools, { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 3 }] });
    const a = await new SessionMeter({ reservationUsd: 100 }).admit(raw);
    assert.equal(a.ok, false);
    if (!a.ok) assert.match(a.reason, /the server tool "web_fetch_20250910": the meter knows no price for it.*server_tools: \[web_fetch_20250910\]/);
    assert.equal((await new SessionMeter({ reservationUsd: 100, serverTools: ['web_fetch_20250910'] }).admit(raw)).ok, true);
  });
  test('client tools with a type (bash, text editor) are not server tools', async () => {
    const a = await new SessionMeter({ reservationUsd: 100 }).admit(body({ tools: [{ type: 'bash_20250124', name: 'bash' }, { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }] }));
    assert.equal(a.ok, true);
  });
});
