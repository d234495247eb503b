// Holds and releases across the fleet (budget/fleet-holds.ts) on a real PostgreSQL: a host reads
// the holds the other hosts set, never its own (its ledger is its own word); a release lifts the
// holds set before it and none set after; the writes are idempotent and never go back in time.
// The pure merge (budget/holds.ts withFleetHolds) and the releases adopted (budget/hold-releases.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectFleet, migrate, type FleetDb } from '../../budget/fleet-db.js';
import { publishHold, publishRelease, readFleetHolds } from '../../budget/fleet-holds.js';
import { withFleetHolds, type Hold } from '../../budget/holds.js';
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
});
