import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fitCall, inputWorstUsd, MIN_MAX_TOKENS, reservationFor, type CallPlan } from '../../budget/reservation.js';
import { lookupPrice, price } from '../../budget/pricing.js';
import { chargeFor, chargeGuard, type DayTotals, type Limits } from '../../budget/policy.js';

const sonnet = lookupPrice('claude-sonnet-5').price;
const limits = { maxUsdPerDay: 1, maxUsdPerSession: 0.4, minSessionUsd: 0.1 };

describe('reservation at the charge', () => {
  for (const [name, spent, reserved, l, expected] of [
    ['an empty day reserves the whole ceiling', 0, 0, limits, 0.4],
    ['what is left, when less than the ceiling', 0.7, 0, limits, 0.3],
    ['a running session\'s reservation counts as taken', 0.3, 0.4, limits, 0.3],
    ['left exactly the minimum: starts with it', 0.9, 0, limits, 0.1],
    ['left below the minimum: no start', 0.95, 0, limits, null],
    ['a day reserved to its cap: no start', 0.2, 0.8, limits, null],
    ['a day spent past its cap (a forced run): no start', 1.3, 0, limits, null],
    ['the minimum is never above the ceiling', 0.96, 0, { maxUsdPerDay: 1, maxUsdPerSession: 0.04, minSessionUsd: 0.1 }, 0.04],
    ['float sums do not cost a start: 0.1 left is 0.1', 0.7 + 0.1 + 0.1, 0, limits, 0.1],
  ] as const) {
    test(`${name}: ${expected ?? 'skip'}`, () => {
      const r = reservationFor({ costUsd: spent, reservedUsd: reserved }, l);
      assert.equal(r.ok ? r.usd : null, expected, JSON.stringify(r));
      if (!r.ok) {
        assert.equal(r.limit, 'max_usd_per_day');
        assert.match(r.reason, /budget\.min_session_usd/);
      }
    });
  }
});

// The fleet writes a charge decided before the day was read wherever the day's totals are within
// its guard (budget/fleet-reservations.ts): the guard must never admit a day on which that charge
// would pass a limit, or reserve past the cap.
describe('a charge\'s guard', () => {
  const cents = (n: number) => Math.round(n * 100) / 100;
  test('on 20000 random days, a day within the guard of a roomy day\'s charge passes every limit with it', () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    // Whole cents, or with a tail under a millionth of a dollar (a cap of $1.0000006 is valid).
    const usd = (n: number) => (rnd() < 0.5 ? cents(n) : Math.round(n * 1e7) / 1e7);
    let within = 0;
    let outside = 0;
    for (let i = 0; i < 20_000; i++) {
      const l: Limits = { maxSessionsPerDay: 1 + Math.floor(rnd() * 6), maxUsdPerDay: usd(0.5 + rnd() * 2), maxUsdPerSession: usd(0.05 + rnd() * 1.5), minSessionUsd: cents(rnd() * 0.3), maxRunsPerDay: rnd() < 0.5 ? null : Math.floor(rnd() * 4) };
      const mine = Math.floor(rnd() * 4);
      const others = Math.floor(rnd() * 4);
      const today: DayTotals = { sessions: mine + others, costUsd: usd(rnd() * 2.5), reservedUsd: usd(rnd() * 1.5), byAgent: { a: { sessions: mine, costUsd: 0 } } };
      const roomy = chargeFor('a', { sessions: 0, costUsd: 0, reservedUsd: 0, byAgent: {} }, l, false);
      if (!roomy.ok) continue;
      const g = chargeGuard(l, roomy.usd);
      // The guard as the fleet's statement reads it (budget/fleet-reservations.ts RESERVE_WITHIN).
      const ok = today.sessions < g.sessionsBelow && (g.agentRunsBelow === null || mine < g.agentRunsBelow) && today.costUsd < g.capUsd
        && Math.round((g.capUsd - today.costUsd - today.reservedUsd) * 1e6) / 1e6 >= g.usd;
      if (!ok) {
        outside++;
        continue;
      }
      within++;
      const now = chargeFor('a', today, l, false);
      assert.ok(now.ok, `${JSON.stringify({ l, today })}: ${JSON.stringify(now)}`);
      assert.ok(now.usd >= roomy.usd, `${JSON.stringify({ l, today })}: decided now ${now.usd}, guarded ${roomy.usd}`);
      // Past the cap by no more than reservationFor's own rounding to a millionth.
      assert.ok(today.costUsd + today.reservedUsd + roomy.usd <= l.maxUsdPerDay + 5e-7 + 1e-12, JSON.stringify({ l, today }));
    }
    // Both sides were drawn, often.
    assert.ok(within > 1000 && outside > 1000, `${within} within, ${outside} outside`);
  });

  test('the guard of a charge is the limits it was decided by, and the charge', () => {
    assert.deepEqual(chargeGuard({ maxSessionsPerDay: 5, maxUsdPerDay: 1, maxUsdPerSession: 0.3, minSessionUsd: 0.05, maxRunsPerDay: 2 }, 0.3),
      { sessionsBelow: 5, agentRunsBelow: 2, capUsd: 1, usd: 0.3 });
  });
});

describe('fitting a call into what is left', () => {
  const plan = (o: Partial<CallPlan> = {}): CallPlan => ({ bodyBytes: 3000, maxTokens: 32_000, thinkingBudget: null, cache: 'none', price: sonnet, ...o });
  // 3000 bytes: 1000 tokens of input at $3/M = $0.003; output $15/M.
  for (const [name, p, left, expected] of [
    ['fits whole: unchanged', plan(), 1, { maxTokens: 32_000, thinkingBudget: null }],
    ['lowered to what fits', plan(), 0.003 + 1000 * 15e-6, { maxTokens: 1000, thinkingBudget: null }],
    ['the floor still fits: lowered to it', plan(), 0.003 + MIN_MAX_TOKENS * 15e-6, { maxTokens: MIN_MAX_TOKENS, thinkingBudget: null }],
    ['below the floor: refused', plan(), 0.003 + (MIN_MAX_TOKENS - 1) * 15e-6, null],
    ['the input alone does not fit: refused', plan(), 0.002, null],
    ['nothing left: refused', plan(), 0, null],
    ['a small call that fits is not raised to the floor', plan({ maxTokens: 10 }), 0.003 + 10 * 15e-6, { maxTokens: 10, thinkingBudget: null }],
    ['a thinking budget above the new max_tokens comes down under it', plan({ thinkingBudget: 8000 }), 0.003 + 4000 * 15e-6, { maxTokens: 4000, thinkingBudget: 3999 }],
    ['a thinking budget below it stays', plan({ thinkingBudget: 2000 }), 0.003 + 4000 * 15e-6, { maxTokens: 4000, thinkingBudget: 2000 }],
    ['thinking needs room above 1024: refused below', plan({ thinkingBudget: 8000 }), 0.003 + 1000 * 15e-6, null],
  ] as const) {
    test(`${name}`, () => {
      const f = fitCall(p, left);
      assert.deepEqual(f.action === 'forward' ? { maxTokens: f.maxTokens, thinkingBudget: f.thinkingBudget } : null, expected, JSON.stringify(f));
      if (f.action === 'forward') assert.ok(f.worstUsd <= left + 1e-12, `worst ${f.worstUsd} > left ${left}`);
      else assert.match(f.reason, /reservation has \$/);
    });
  }
  test('input is priced at the dearest cache write the body names', () => {
    const p = price({ input: 4, output: 20 });
    assert.equal(inputWorstUsd({ bodyBytes: 3e6, cache: 'none', price: p }), 4);
    assert.equal(inputWorstUsd({ bodyBytes: 3e6, cache: '5m', price: p }), 5);
    assert.equal(inputWorstUsd({ bodyBytes: 3e6, cache: '1h', price: p }), 8);
  });
});
