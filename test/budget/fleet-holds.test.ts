// Holds and releases across the fleet (budget/fleet-holds.ts) on a real PostgreSQL: a host reads
// the holds the other hosts set, never its own (its ledger is its own word); a release lifts the
// holds set before it and none set after; the writes are idempotent and never go back in time.
// The pure merge (budget/holds.ts withFleetHolds) and the releases adopted (budget/hold-releases.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectFleet, migrate, type FleetDb } from '../../budget/fleet-db.js';
import { publishHold, publishRelease, readFleetHolds } from '../../budget/fleet-holds.js';
import { holdOf, withFleetHolds, withFleetRows, type Hold, type HoldRow } from '../../budget/holds.js';
import { claimFire, endClaim, settleCrashed } from '../../budget/fleet-claims.js';
import { adoptReleases, newerReleases, readReleases } from '../../budget/hold-releases.js';
import { tempDir } from '../helpers.js';
import { NEEDS_POSTGRES, startCluster, type Cluster } from '../pg-cluster.js';

const hold = (until: string, session = 's-1'): Hold => ({ kind: 'rate_limited', until, reason: 'rate limited (the API gave this reset time)', failures: 1, session });

test('of an agent held on this host and on another, the longer wait holds it', () => {
  const mine = { a: hold('2026-12-07T10:00:00Z'), b: hold('2026-12-07T12:00:00Z') };
  const fleet = { a: { ...hold('2026-12-07T11:00:00Z'), host: 'h2' }, b: { ...hold('2026-12-07T11:00:00Z'), host: 'h2' }, c: { ...hold('2026-12-07T09:00:00Z'), host: 'h3' } };
  assert.deepEqual(Object.fromEntries(Object.entries(withFleetHolds(mine, fleet)).map(([k, v]) => [k, [v.until, v.host ?? 'here']])), {
    a: ['2026-12-07T11:00:00Z', 'h2'], b: ['2026-12-07T12:00:00Z', 'here'], c: ['2026-12-07T09:00:00Z', 'h3'],
  });
});

const row = (id: string, outcome: string, ended: string): HoldRow => ({ id, outcome, started_at: ended, ended_at: ended, retry_at: null });
const settings = { afterFailures: 3, baseMs: 60_000, maxMs: 3_600_000, rateLimitMs: 60_000 };

test('failures on two hosts in turn make one streak: three of them back the agent off, where each host alone counted two', () => {
  const now = new Date('2026-12-07T08:04:30Z');
  const mine = { gardener: [row('a2', 'error', '2026-12-07T08:04:00Z'), row('a1', 'timeout', '2026-12-07T08:00:00Z')] };
  const others = { gardener: [row('b1', 'error', '2026-12-07T08:02:00Z'), row('b0', 'ok', '2026-12-07T07:00:00Z')] };
  const merged = withFleetRows(mine, others);
  assert.deepEqual(merged.gardener.map((r) => r.id), ['a2', 'b1', 'a1', 'b0'], 'one history, newest first');
  const h = holdOf(merged.gardener, now, settings);
  assert.equal(h?.kind, 'backoff');
  assert.equal(h?.failures, 3);
  assert.equal(h?.until, '2026-12-07T08:05:00Z', 'the backoff runs from the newest failure');
  // Control: each host's rows alone hold nothing.
  assert.equal(holdOf(mine.gardener, now, settings), null);
  assert.equal(holdOf(others.gardener, now, settings), null);
});

test('another host\'s rate limit is left to its own shared hold; an agent only other hosts ran gets their rows', () => {
  const now = new Date('2026-12-07T08:10:00Z');
  const merged = withFleetRows({ a: [row('a1', 'ok', '2026-12-07T08:00:00Z')] }, { a: [row('b1', 'rate_limited', '2026-12-07T08:05:00Z')], b: [row('b2', 'error', '2026-12-07T08:01:00Z')] });
  assert.deepEqual(merged.a.map((r) => r.id), ['a1']);
  assert.equal(holdOf(merged.a, now, settings), null, 'read here it would be a rate limit with no reset time');
  assert.deepEqual(merged.b.map((r) => r.id), ['b2']);
});

test('another host\'s releases are adopted where they are later than this host\'s own, once', (t) => {
  const dir = tempDir(t);
  assert.deepEqual(newerReleases({ a: '2026-12-07T10:00:00.000Z' }, { a: '2026-12-07T09:00:00.000Z', b: '2026-12-07T09:00:00.000Z' }), { b: '2026-12-07T09:00:00.000Z' });
  assert.deepEqual(adoptReleases(dir, { a: '2026-12-07T10:00:00.000Z' }), { a: '2026-12-07T10:00:00.000Z' });
  assert.deepEqual(adoptReleases(dir, { a: '2026-12-07T10:00:00.000Z' }), {});
  assert.deepEqual(readReleases(dir), { a: '2026-12-07T10:00:00.000Z' });
});

describe('the fleet\'s holds', { skip: NEEDS_POSTGRES }, () => {
  let pg: Cluster;
  let db: FleetDb;
  before(async () => {
    pg = await startCluster();
    db = await connectFleet({ url: pg.url(pg.createDb()), where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
    await migrate(db);
  });
  after(async () => {
    await db?.close();
    pg?.close();
  });

  test('a host reads the others\' holds in force, never its own; a release lifts those set before it and none set after', async () => {
    const now = new Date('2026-12-07T08:00:00Z');
    await publishHold(db, 'h1', 'gardener', hold('2026-12-07T09:00:00Z'), '2026-12-07T07:50:00.000Z');
    await publishHold(db, 'h1', 'old', hold('2026-12-07T07:59:00Z'), '2026-12-07T07:00:00.000Z');
    assert.deepEqual((await readFleetHolds(db, 'h1', now)).holds, {}, 'its own hold is its ledger\'s to say');
    const seen = await readFleetHolds(db, 'h2', now);
    assert.deepEqual(Object.keys(seen.holds), ['gardener'], 'a hold past its end holds nothing');
    assert.deepEqual(seen.holds.gardener, { ...hold('2026-12-07T09:00:00Z'), reason: 'rate limited (the API gave this reset time) (on host h1)', host: 'h1' });
    // Released on h2; written twice (a spooled write replayed), then an older one: the latest stays.
    for (const at of ['2026-12-07T07:55:00.000Z', '2026-12-07T07:55:00.000Z', '2026-12-07T07:51:00.000Z']) await publishRelease(db, 'h2', ['gardener'], at);
    const lifted = await readFleetHolds(db, 'h3', now);
    assert.deepEqual([lifted.holds, lifted.releases], [{}, { gardener: '2026-12-07T07:55:00.000Z' }]);
    // A hold set after the release holds again; an older write of h1's never replaces its newer one.
    await publishHold(db, 'h1', 'gardener', hold('2026-12-07T10:00:00Z', 's-2'), '2026-12-07T07:58:00.000Z');
    await publishHold(db, 'h1', 'gardener', hold('2026-12-07T09:00:00Z', 's-1'), '2026-12-07T07:50:00.000Z');
    assert.equal((await readFleetHolds(db, 'h3', now)).holds.gardener?.session, 's-2');
    // h1's session that settled with no hold takes its row out.
    await publishHold(db, 'h1', 'gardener', null, '2026-12-07T07:59:00.000Z');
    assert.deepEqual((await readFleetHolds(db, 'h3', now)).holds, {});
  });

  test('the sessions other hosts ran of an agent come back as rows, newest first: never this host\'s own, a live claim, or one that ran no session; a crashed one as abandoned', async () => {
    const claim = async (host: string, agent: string, slot: string, outcome: string | null, session: string | null, leaseMs = 60_000) => {
      const c = { agent, slot, host };
      assert.equal((await claimFire(db, { ...c, leaseMs })).won, true);
      if (session) await db.query('UPDATE fleet_claims SET session_id = $4 WHERE agent = $1 AND slot = $2 AND host = $3', [agent, slot, host, session]);
      if (outcome) await endClaim(db, c, outcome);
    };
    await claim('r1', 'scout', '2026-12-07T01:00:00Z', 'error', 'r1-s1');
    await claim('r1', 'scout', '2026-12-07T02:00:00Z', 'timeout', 'r1-s2');
    await claim('r2', 'scout', '2026-12-07T03:00:00Z', 'error', 'r2-s3');
    await claim('r1', 'scout', '2026-12-07T04:00:00Z', 'refused', null);
    await claim('r1', 'scout', '2026-12-07T05:00:00Z', null, 'r1-dead', 0);
    assert.deepEqual((await settleCrashed(db, 'scout')).map((c) => c.session), ['r1-dead']);
    await claim('r1', 'scout', '2026-12-07T06:00:00Z', null, 'r1-live');
    const seen = (await readFleetHolds(db, 'r2', new Date())).rows.scout ?? [];
    assert.deepEqual(seen.map((r) => [r.id, r.outcome]), [['r1-dead', 'abandoned'], ['r1-s2', 'timeout'], ['r1-s1', 'error']]);
    assert.ok(seen.every((r) => r.retry_at === null && Date.parse(r.ended_at!) >= Date.parse(r.started_at)));
  });
});
