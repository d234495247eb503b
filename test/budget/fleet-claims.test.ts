// Fires claimed at most once across hosts (issue 55), on a real PostgreSQL: the same slot fired
// on two hosts at once, fifty times, starts exactly one session each time (budget/fleet-claims.ts:
// one INSERT ... ON CONFLICT DO NOTHING); the control, a look at the slot and the claim apart,
// starts two.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connectFleet, migrate } from '../../budget/fleet-db.js';
import { claimFire, releaseFire } from '../../budget/fleet-claims.js';
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

  test('a claim says which host has the slot; one let go (no session charged) may be taken again', async () => {
    const db = await connectFleet({ url: pg.url(pg.createDb()), where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
    try {
      await migrate(db);
      const slot = '2026-12-07T03:00:00.000Z';
      assert.deepEqual(await claimFire(db, { agent: 'gardener', slot, host: 'host-a' }), { won: true });
      const lost = await claimFire(db, { agent: 'gardener', slot, host: 'host-b' });
      assert.equal(lost.won, false);
      assert.equal((lost as { host: string }).host, 'host-a');
      // Another agent, or the next hour, is a slot of its own.
      assert.deepEqual(await claimFire(db, { agent: 'scribe', slot, host: 'host-b' }), { won: true });
      assert.deepEqual(await claimFire(db, { agent: 'gardener', slot: '2026-12-07T04:00:00.000Z', host: 'host-b' }), { won: true });
      // Only its holder lets it go.
      await releaseFire(db, { agent: 'gardener', slot, host: 'host-b' });
      assert.equal((await claimFire(db, { agent: 'gardener', slot, host: 'host-b' })).won, false);
      await releaseFire(db, { agent: 'gardener', slot, host: 'host-a' });
      assert.deepEqual(await claimFire(db, { agent: 'gardener', slot, host: 'host-b' }), { won: true });
    } finally {
      await db.close();
    }
  });
});
