// Fires claimed at most once across hosts (issue 55), on a real PostgreSQL: the same slot fired
// on two hosts at once, fifty times, starts exactly one session each time (budget/fleet-claims.ts:
// one INSERT ... ON CONFLICT DO NOTHING); the control, a look at the slot and the claim apart,
// starts two.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connectFleet, migrate } from '../../budget/fleet-db.js';
import { claimFire, endClaim, releaseFire, renewClaims } from '../../budget/fleet-claims.js';
import { claimSlot } from '../../daemon/schedule/claim-slot.js';
import { FIXTURES, ROOT, tempDir } from '../helpers.js';
import { NEEDS_POSTGRES, startCluster, type Cluster } from '../pg-cluster.js';

const ROUNDS = 50;

test('the slot a fire claims is the start of the tick\'s hour in the budget\'s time zone', () => {
  assert.equal(claimSlot(new Date('2026-12-07T03:59:59.900Z'), 'UTC').toISOString(), '2026-12-07T03:00:00.000Z');
  assert.equal(claimSlot(new Date('2026-12-07T03:00:00.000Z'), 'Europe/Paris').toISOString(), '2026-12-07T03:00:00.000Z');
  // Half an hour off UTC: the local hour 09:00-10:00 in Kolkata is 03:30-04:30 UTC.
  assert.equal(claimSlot(new Date('2026-12-07T04:10:00Z'), 'Asia/Kolkata').toISOString(), '2026-12-07T03:30:00.000Z');
  assert.equal(claimSlot(new Date('2026-12-07T03:20:00Z'), 'Asia/Kolkata').toISOString(), '2026-12-07T02:30:00.000Z');
});

describe('the fleet\'s fire claims', { skip: NEEDS_POSTGRES }, () => {
  let pg: Cluster;
  before(async () => {
    pg = await startCluster();
  });
  after(() => pg?.close());

  async function fireBoth(t: Parameters<typeof tempDir>[0], how: 'claim' | 'look'): Promise<number[][]> {
    const url = pg.url(pg.createDb());
    const db = await connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
    await migrate(db);
    await db.close();
    const barrier = tempDir(t);
    return await Promise.all(['host-a', 'host-b'].map((host) => new Promise<number[]>((resolve, reject) => {
      const c = spawn(process.execPath, [path.join(FIXTURES, 'fleet-claimer.mjs'), url, host, String(ROUNDS), how, barrier, path.join(ROOT, 'dist')], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (err += d));
      c.on('error', reject);
      c.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${host} exited ${code}: ${err}`))));
    })));
  }

  test('the same slot fired on two hosts at once, fifty times: exactly one session each time', async (t) => {
    const [a, b] = await fireBoth(t, 'claim');
    const perRound = Array.from({ length: ROUNDS }, (_, i) => Number(a.includes(i)) + Number(b.includes(i)));
    assert.deepEqual(perRound, Array(ROUNDS).fill(1));
  });

  test('the control: a look at the slot and the claim apart start two sessions', async (t) => {
    const [a, b] = await fireBoth(t, 'look');
    const perRound = Array.from({ length: ROUNDS }, (_, i) => Number(a.includes(i)) + Number(b.includes(i)));
    assert.deepEqual(perRound, Array(ROUNDS).fill(2));
  });

  const open = async () => {
    const db = await connectFleet({ url: pg.url(pg.createDb()), where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
    await migrate(db);
    return db;
  };
  const LEASE = 60_000;

  test('a claim says which host has the slot; an agent whose claim is live is claimed nowhere else; one let go (no session charged) may be taken again', async () => {
    const db = await open();
    try {
      const slot = '2026-12-07T03:00:00.000Z';
      const a = { agent: 'gardener', slot, host: 'host-a' };
      assert.equal((await claimFire(db, { ...a, leaseMs: LEASE })).won, true);
      const lost = await claimFire(db, { ...a, host: 'host-b', leaseMs: LEASE });
      assert.deepEqual([lost.won, (lost as { host: string }).host, (lost as { running: boolean }).running], [false, 'host-a', false]);
      // Another agent is a slot of its own; the next hour of one still running is not.
      assert.equal((await claimFire(db, { agent: 'scribe', slot, host: 'host-b', leaseMs: LEASE })).won, true);
      const next = { agent: 'gardener', slot: '2026-12-07T04:00:00.000Z', host: 'host-b' };
      const running = await claimFire(db, { ...next, leaseMs: LEASE });
      assert.deepEqual([running.won, (running as { host: string }).host, (running as { running: boolean }).running], [false, 'host-a', true]);
      // Ended, the agent may run again, in a slot of its own.
      await endClaim(db, a, 'ok');
      assert.equal((await claimFire(db, { ...next, leaseMs: LEASE })).won, true);
      assert.equal((await claimFire(db, { ...a, host: 'host-b', leaseMs: LEASE })).won, false, 'a slot fires once');
      // Only its holder lets it go.
      await releaseFire(db, { ...next, host: 'host-a' });
      assert.equal((await claimFire(db, { ...next, host: 'host-c', leaseMs: LEASE })).won, false);
      await releaseFire(db, next);
      assert.equal((await claimFire(db, { ...next, host: 'host-c', leaseMs: LEASE })).won, true);
    } finally {
      await db.close();
    }
  });

  // mutation: fleet-claim-per-slot-only, caught here.
  for (const control of [false, true]) {
    test(control
      ? 'the control: without the heartbeat, a claim past its lease is settled crashed and the agent is claimed again elsewhere while it still runs'
      : 'a session longer than the lease: its host\'s heartbeat renews the claim, and the other host does not claim the agent', async () => {
      const db = await open();
      try {
        const a = { agent: 'gardener', slot: '2026-12-07T03:00:00.000Z', host: 'host-a' };
        assert.equal((await claimFire(db, { ...a, leaseMs: 1000 })).won, true);
        // Three leases long; the heartbeat beats every quarter of one.
        for (let waited = 0; waited < 3000; waited += 250) {
          await new Promise((r) => setTimeout(r, 250));
          if (!control) assert.equal(await renewClaims(db, 'host-a', [a], 1000), 1);
        }
        const b = await claimFire(db, { agent: 'gardener', slot: '2026-12-07T04:00:00.000Z', host: 'host-b', leaseMs: 1000 });
        if (control) {
          assert.equal(b.won, true, 'the harm: a second session of the agent');
          assert.deepEqual(b.crashed, [{ ...a, session: null }]);
          const [row] = (await db.query<{ outcome: string }>('SELECT outcome FROM fleet_claims WHERE slot = $1', [a.slot])).rows;
          return assert.equal(row.outcome, 'crashed');
        }
        assert.equal(b.won, false);
        assert.equal((b as { host: string }).host, 'host-a');
        assert.deepEqual(b.crashed, []);
      } finally {
        await db.close();
      }
    });
  }

  test('with the per-agent check off, the next slot of an agent still running is claimed (the mutation\'s harm, shown through claimFire)', async () => {
    const db = await open();
    try {
      assert.equal((await claimFire(db, { agent: 'gardener', slot: '2026-12-07T03:00:00.000Z', host: 'host-a', leaseMs: LEASE })).won, true);
      assert.equal((await claimFire(db, { agent: 'gardener', slot: '2026-12-07T04:00:00.000Z', host: 'host-b', leaseMs: LEASE }, { perAgent: false })).won, true);
    } finally {
      await db.close();
    }
  });

  // mutation: fleet-max-concurrent-unlocked, fleet-max-concurrent-ignored, caught here.
  // Eight hosts' fires of eight agents at one instant against fleet.max_concurrent: 2: two are
  // claimed, six told the bound; a claim that ends, or whose host died (its lease past), frees its
  // place; a slot claimed before is said as claimed, not as full. Control: without the bound, all eight.
  for (const max of [2, null]) {
    test(max === null ? 'the control: without fleet.max_concurrent, eight agents\' fires at once are all claimed' : 'fleet.max_concurrent 2: of eight agents fired at once on eight connections, two are claimed and six told the bound; an ended or dead claim frees a place', async () => {
      const url = pg.url(pg.createDb());
      const dbs = await Promise.all(Array.from({ length: 8 }, () => connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x })));
      try {
        await migrate(dbs[0]);
        const slot = '2026-12-07T03:00:00.000Z';
        const r = await Promise.all(dbs.map((db, i) => claimFire(db, { agent: `agent-${i}`, slot, host: `host-${i}`, leaseMs: 600_000 }, { maxConcurrent: max })));
        const won = r.filter((x) => x.won).length;
        if (max === null) return assert.equal(won, 8);
        assert.equal(won, 2);
        for (const x of r.filter((y) => !y.won)) assert.deepEqual((x as { full?: unknown }).full, { running: 2, max: 2 });
        const winners = r.map((x, i) => (x.won ? i : -1)).filter((i) => i >= 0);
        // The same slot asked for again by its winner: claimed already (this host), not full.
        const again = await claimFire(dbs[0], { agent: `agent-${winners[0]}`, slot, host: 'host-x', leaseMs: 600_000 }, { maxConcurrent: 2 });
        assert.equal('full' in again, false, JSON.stringify(again));
        assert.equal((again as { host: string }).host, `host-${winners[0]}`);
        // One ends: one place.
        await endClaim(dbs[0], { agent: `agent-${winners[0]}`, slot, host: `host-${winners[0]}` }, 'ok');
        const loser = r.findIndex((x) => !x.won);
        assert.equal((await claimFire(dbs[1], { agent: `agent-${loser}`, slot, host: `host-${loser}`, leaseMs: 600_000 }, { maxConcurrent: 2 })).won, true);
        const next = r.findIndex((x, i) => !x.won && i !== loser);
        assert.equal('full' in (await claimFire(dbs[2], { agent: `agent-${next}`, slot, host: `host-${next}`, leaseMs: 600_000 }, { maxConcurrent: 2 })), true);
        // The claim just taken is past its lease (its host died, its heartbeat stopped): its place is free.
        await dbs[0].query(`UPDATE fleet_claims SET lease_until = now() - interval '1 second' WHERE agent = $1`, [`agent-${loser}`]);
        assert.equal((await claimFire(dbs[2], { agent: `agent-${next}`, slot, host: `host-${next}`, leaseMs: 600_000 }, { maxConcurrent: 2 })).won, true);
      } finally {
        await Promise.all(dbs.map((d) => d.close()));
      }
    });
  }
});
