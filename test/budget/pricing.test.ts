import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SessionMeter } from '../../budget/meter.js';
import { costWith, lookupPrice, surchargeFor, surcharged } from '../../budget/pricing.js';
import { fitCall } from '../../budget/reservation.js';
import { png } from '../fixtures/media-files.js';

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const usage = (input: number, output: number) => ({ input, cacheWrite: 0, cacheRead: 0, output });

// Prices written out from Anthropic's pages, not from the table under test.
describe('features that raise the price', () => {
  for (const [name, model, f, input, output] of [
    ['standard', 'claude-opus-4-6', {}, 5, 25],
    ['speed "standard"', 'claude-opus-4-6', { speed: 'standard' }, 5, 25],
    ['fast mode on opus 4.6: 6x ($30/$150)', 'claude-opus-4-6', { speed: 'fast' }, 30, 150],
    ['fast mode on opus 4.7: 6x', 'claude-opus-4-7-20260416', { speed: 'fast' }, 30, 150],
    ['fast mode on opus 4.8: 2x', 'claude-opus-4-8', { speed: 'fast' }, 10, 50],
    ['fast mode on opus 5: 2x ($10/$50)', 'claude-opus-5', { speed: 'fast' }, 10, 50],
    ['inference_geo us: 1.1x', 'claude-sonnet-4-6', { inferenceGeo: 'us' }, 3.3, 16.5],
    ['inference_geo global: standard', 'claude-sonnet-4-6', { inferenceGeo: 'global' }, 3, 15],
    ['fast and us together', 'claude-opus-5', { speed: 'fast', inferenceGeo: 'us' }, 11, 55],
  ] as const) {
    test(`${name}: $${input}/$${output}`, async () => {
      const s = surchargeFor(model, f);
      assert.ok(!('refuse' in s), JSON.stringify(s));
      const p = surcharged(lookupPrice(model).price, s, 1000);
      assert.deepEqual([round(p.input), round(p.output)], [input, output]);
    });
  }
  for (const [name, model, f, why] of [
    ['fast mode on a model with no published multiplier', 'claude-opus-5-5', { speed: 'fast' }, /no published fast-mode multiplier/],
    ['fast mode on sonnet (not offered)', 'claude-sonnet-5', { speed: 'fast' }, /no published fast-mode multiplier/],
    ['an unknown speed', 'claude-opus-5', { speed: 'turbo' }, /`speed` "turbo"/],
    ['an unknown inference_geo', 'claude-opus-5', { inferenceGeo: 'eu' }, /`inference_geo` "eu"/],
  ] as const) {
    test(`refused: ${name}`, async () => {
      const s = surchargeFor(model, f);
      assert.ok('refuse' in s);
      assert.match(s.refuse, why);
    });
  }
  test('long context: past 200k input tokens, 2x input and cache, 1.5x output, for the whole call', async () => {
    const sonnet = lookupPrice('claude-sonnet-4-6').price;
    const none = { inputMultiplier: 1, outputMultiplier: 1 };
    assert.equal(round(costWith(sonnet, none, usage(200_000, 1000))), 0.615); // 0.6 + 0.015
    assert.equal(round(costWith(sonnet, none, usage(200_001, 1000))), round((200_001 * 6 + 1000 * 22.5) / 1e6));
    assert.equal(round(costWith(sonnet, none, { input: 1000, cacheWrite: 0, cacheRead: 250_000, output: 0 })), round((1000 * 6 + 250_000 * 0.6) / 1e6), 'cache reads count toward the 200k');
  });
});

describe('the meter prices what the body asks for', () => {
  const body = (o: object) => Buffer.from(JSON.stringify({ model: 'claude-opus-4-6', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }], ...o }));
  test('a fast-mode call is priced at its rate, admitted and settled (control: the same call standard)', async () => {
    const fast = new SessionMeter({ reservationUsd: 10 });
    const a = await fast.admit(body({ speed: 'fast' }));
    assert.ok(a.ok);
    assert.equal(round(fast.finish(a.call, { usage: usage(10_000, 1000), model: 'claude-opus-4-6', complete: true })), 0.45); // 10k x $30/M + 1k x $150/M
    const std = new SessionMeter({ reservationUsd: 10 });
    const b = await std.admit(body({}));
    assert.ok(b.ok);
    assert.equal(round(std.finish(b.call, { usage: usage(10_000, 1000), model: 'claude-opus-4-6', complete: true })), 0.075);
  });
  test('fast mode lowers max_tokens to fit at its rate: a $0.05 reservation fits 1,000 output tokens standard, not fast', async () => {
    const std = await (new SessionMeter({ reservationUsd: 0.05 })).admit(body({}));
    assert.ok(std.ok && std.lowered === null);
    const fast = await (new SessionMeter({ reservationUsd: 0.05 })).admit(body({ speed: 'fast' }));
    assert.ok(fast.ok && fast.lowered !== null && fast.lowered.to < 1000, JSON.stringify(fast));
  });
  test('fast mode the meter cannot price is refused before it goes', async () => {
    const a = await (new SessionMeter({ reservationUsd: 10 })).admit(body({ model: 'claude-opus-5-5', speed: 'fast' }));
    assert.equal(a.ok, false);
  });
});

describe('images are counted by their pixels', () => {
  const hundred = () => {
    const data = png(1092, 1092).toString('base64');
    const content = Array.from({ length: 100 }, () => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }));
    return Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 1000, messages: [{ role: 'user', content }] }));
  };
  test('100 images of 1092x1092 (159,000 tokens, $0.477 on sonnet) against a $0.25 reservation: refused before it goes', async () => {
    const raw = hundred();
    const a = await (new SessionMeter({ reservationUsd: 0.25 })).admit(raw);
    assert.equal(a.ok, false);
    assert.match(!a.ok ? a.reason : '', /159000 tokens of it images and PDF pages/);
    // Control: the estimate from the body's bytes alone (what the meter did before) admits it.
    const bytesOnly = fitCall({ bodyBytes: raw.length, maxTokens: 1000, thinkingBudget: null, cache: 'none', price: lookupPrice('claude-sonnet-4-6').price }, 0.25);
    assert.equal(bytesOnly.action, 'forward');
  });
  test('the same call with room for it goes, re-serialised as it was counted', async () => {
    const raw = hundred();
    const a = await (new SessionMeter({ reservationUsd: 1 })).admit(raw);
    assert.ok(a.ok);
    assert.deepEqual(JSON.parse(a.body.toString()), JSON.parse(raw.toString()));
  });
});
