import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backoffChange, failureStreak, holdOf, type HoldRow } from '../../budget/holds.js';

const S = { afterFailures: 3, baseMs: 3_600_000, maxMs: 24 * 3_600_000, rateLimitMs: 15 * 60_000 };
let n = 0;
// Rows newest first; each ended at `end`.
const row = (outcome: string, end: string, retry_at: string | null = null): HoldRow => ({ id: `s${++n}`, outcome, started_at: end, ended_at: end, retry_at });

describe('holds and backoff from ledger rows', () => {
  test('a rate-limited session holds the agent until the reset time the API gave', () => {
    const rows = [row('rate_limited', '2026-12-01T10:00:00.000Z', '2026-12-01T15:00:00.000Z'), row('ok', '2026-12-01T08:00:00.000Z')];
    const h = holdOf(rows, new Date('2026-12-01T12:00:00Z'), S);
    assert.equal(h?.kind, 'rate_limited');
    assert.equal(h?.until, '2026-12-01T15:00:00Z');
    assert.equal(holdOf(rows, new Date('2026-12-01T15:00:01Z'), S), null, 'the hold ends at the reset');
  });

  test('a rate limit without a reset time backs off, doubling with each rate-limited session', () => {
    const one = [row('rate_limited', '2026-12-01T10:00:00.000Z')];
    assert.equal(holdOf(one, new Date('2026-12-01T10:05:00Z'), S)?.until, '2026-12-01T10:15:00Z');
    const two = [row('rate_limited', '2026-12-01T10:20:00.000Z'), ...one];
    assert.equal(holdOf(two, new Date('2026-12-01T10:25:00Z'), S)?.until, '2026-12-01T10:50:00Z');
  });

  test('fewer failures in a row than after_failures hold nothing', () => {
    const rows = [row('error', '2026-12-01T10:00:00.000Z'), row('timeout', '2026-12-01T09:00:00.000Z'), row('ok', '2026-12-01T08:00:00.000Z')];
    assert.equal(holdOf(rows, new Date('2026-12-01T10:01:00Z'), S), null);
  });

  test('three failures in a row back off one base; each further failure doubles it, up to max', () => {
    const three = [row('error', '2026-12-01T10:00:00.000Z'), row('error', '2026-12-01T09:00:00.000Z'), row('loop', '2026-12-01T08:00:00.000Z')];
    const h = holdOf(three, new Date('2026-12-01T10:30:00Z'), S);
    assert.equal(h?.kind, 'backoff');
    assert.equal(h?.until, '2026-12-01T11:00:00Z');
    assert.equal(h?.failures, 3);
    const five = [row('error', '2026-12-01T12:00:00.000Z'), row('error', '2026-12-01T11:00:00.000Z'), ...three];
    assert.equal(holdOf(five, new Date('2026-12-01T12:30:00Z'), S)?.until, '2026-12-01T16:00:00Z');
    const many = Array.from({ length: 12 }, (_, i) => row('error', new Date(Date.parse('2026-12-01T12:00:00Z') - i * 60_000).toISOString()));
    assert.equal(holdOf(many, new Date('2026-12-01T12:30:00Z'), S)?.until, '2026-12-02T12:00:00Z', 'capped at max (24h)');
  });

  test('an ok session ends the streak; rate limits and abandoned sessions neither count nor break it', () => {
    assert.equal(failureStreak([row('error', 'x'), row('ok', 'x'), row('error', 'x'), row('error', 'x')]).count, 1);
    assert.equal(failureStreak([row('error', 'x'), row('rate_limited', 'x'), row('abandoned', 'x'), row('error', 'x')]).count, 2);
  });

  test('the backoff change is reported on the session that starts it and the one that ends it, not between', () => {
    const f = (o: string) => row(o, '2026-12-01T10:00:00.000Z');
    assert.equal(backoffChange([f('error'), f('error')], S), null);
    assert.deepEqual(backoffChange([f('error'), f('error'), f('error')], S), { change: 'started', failures: 3 });
    assert.equal(backoffChange([f('error'), f('error'), f('error'), f('error')], S), null, 'the fourth failure is not a new start');
    assert.deepEqual(backoffChange([f('ok'), f('error'), f('error'), f('error'), f('error')], S), { change: 'recovered', failures: 4 });
    assert.equal(backoffChange([f('ok'), f('error'), f('ok')], S), null, 'an ok after a short streak is no recovery');
  });
});
