import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Ledger } from '../../budget/ledger.js';
import { windowHold, windowLines, windowsFrom, type UsageWindow } from '../../budget/windows.js';
import { tempDir } from '../helpers.js';

const NOW = new Date('2026-12-01T20:00:00Z');
const headers = (h: Record<string, string>) => (k: string) => h[k];
const w = (name: string, utilization: number, resets_at: string | null): UsageWindow => ({ name, utilization, resets_at, seen_at: NOW.toISOString() });

describe('usage windows', () => {
  test('read from the headers the CLI reads: utilization a fraction, reset in epoch seconds (or milliseconds)', () => {
    const got = windowsFrom(headers({
      'anthropic-ratelimit-unified-5h-utilization': '0.85', 'anthropic-ratelimit-unified-5h-reset': '1764622800',
      'anthropic-ratelimit-unified-7d-utilization': '0.4', 'anthropic-ratelimit-unified-7d-reset': '1765000000000',
      'anthropic-ratelimit-unified-overage-utilization': 'n/a',
    }), NOW);
    assert.deepEqual(got.map((x) => [x.name, x.utilization, x.resets_at]), [['5h', 0.85, '2025-12-01T21:00:00.000Z'], ['7d', 0.4, '2025-12-06T05:46:40.000Z']]);
    assert.deepEqual(windowsFrom(headers({}), NOW), [], 'an API key: none');
  });
  for (const [name, windows, held] of [
    ['85% with the limit at 80% holds until the reset', [w('5h', 0.85, '2026-12-01T23:00:00.000Z')], '5h'],
    ['50% runs', [w('5h', 0.5, '2026-12-01T23:00:00.000Z')], null],
    ['a window past its reset no longer holds', [w('5h', 0.95, '2026-12-01T19:00:00.000Z')], null],
    ['the 7-day window holds too', [w('5h', 0.1, null), w('7d', 0.8, '2026-12-05T00:00:00.000Z')], '7d'],
    ['overage is not the allotment: it does not hold', [w('overage', 1, null)], null],
  ] as const) {
    test(name, () => {
      const h = windowHold([...windows], 0.8, NOW);
      assert.equal(h?.window ?? null, held);
      if (h) assert.match(h.reason, new RegExp(`^budget\\.max_window_utilization: the ${held} usage window is at \\d+% \\(unattended sessions may use 80%\\)`));
      if (h?.until) assert.ok(h.reason.includes(`resets at ${h.until}`));
    });
  }
  test('a weekly-only plan (no 5-hour window in the reply): held at the share on the 7-day window, and only that window shown', () => {
    const got = windowsFrom(headers({ 'anthropic-ratelimit-unified-7d-utilization': '0.86', 'anthropic-ratelimit-unified-7d-reset': '1796090400' }), NOW);
    assert.deepEqual(got.map((x) => [x.name, x.utilization, x.resets_at]), [['7d', 0.86, '2026-12-01T02:00:00.000Z']]);
    const hold = windowHold(got, 0.8, new Date('2026-11-28T00:00:00Z'));
    assert.equal(hold?.window, '7d');
    assert.equal(hold?.until, '2026-12-01T02:00:00.000Z');
    assert.equal(windowHold(got, 0.9, new Date('2026-11-28T00:00:00Z')), null, 'under the share: runs');
    const lines = windowLines(got, 0.8);
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^7d +86% used \(limit 80%\), resets 2026-12-01T02:00:00.000Z/);
    assert.ok(!lines.join('\n').includes('5h'));
  });
  test('the ledger keeps the last value of each window', (t) => {
    const l = Ledger.open(path.join(tempDir(t), 'l.db'));
    t.after(() => l.close());
    l.recordWindows([w('5h', 0.3, null), w('7d', 0.2, null)]);
    l.recordWindows([w('5h', 0.85, '2026-12-01T23:00:00.000Z')]);
    assert.deepEqual(l.windows().map((x) => [x.name, x.utilization]), [['5h', 0.85], ['7d', 0.2]]);
  });
});
