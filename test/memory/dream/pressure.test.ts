import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dreamReason } from '../../../memory/dream/pressure.js';

const now = new Date('2026-11-30T12:00:00Z');
const limits = { after: 200, everyMs: 24 * 3_600_000 };
const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000).toISOString();

for (const [what, p, dream] of [
  ['nothing observed since the last dream', { observations_since: 0, last_dream_at: hoursAgo(100) }, false],
  ['nothing observed, never dreamed', { observations_since: 0, last_dream_at: null }, false],
  ['many observations, dreamed an hour ago', { observations_since: 200, last_dream_at: hoursAgo(1) }, true],
  ['one short of dream_after, dreamed an hour ago', { observations_since: 199, last_dream_at: hoursAgo(1) }, false],
  ['a few observations, last dream past dream_every', { observations_since: 3, last_dream_at: hoursAgo(25) }, true],
  ['a few observations, last dream within dream_every', { observations_since: 3, last_dream_at: hoursAgo(23) }, false],
  ['a few observations, never dreamed, the oldest past dream_every', { observations_since: 3, last_dream_at: null, first_since_at: hoursAgo(30) }, true],
  ['a few observations, never dreamed, all recent', { observations_since: 3, last_dream_at: null, first_since_at: hoursAgo(1) }, false],
  ['many observations, never dreamed, all recent', { observations_since: 250, last_dream_at: null, first_since_at: hoursAgo(1) }, true],
] as const) {
  test(`dream pressure: ${what} -> ${dream ? 'dream' : 'no dream'}`, () => {
    const why = dreamReason(p, now, limits);
    assert.equal(why !== null, dream, String(why));
  });
}
