// Several hosts under one day's budget (issue 55), on a real PostgreSQL: a charge takes its
// reservation in one transaction against the day's row (budget/fleet-reservations.ts), so eight
// supervisors on two hosts cannot together reserve or spend past the cap; an expired reservation
// gives the day its money back; the session id keeps a charge from being taken twice.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ledger } from '../../budget/ledger.js';
import { chargeFor, chargeGuard, type DayTotals, type Limits } from '../../budget/policy.js';
import { connectFleet, migrate, type FleetDb } from '../../budget/fleet-db.js';
import { expireReservations, fleetDayTotals, releaseInFleet, renewReservation, reserveInFleet, settleInFleet } from '../../budget/fleet-reservations.js';
import { racer, ROOT, tempDir } from '../helpers.js';
import { NEEDS_POSTGRES, startCluster, type Cluster } from '../pg-cluster.js';

const RACERS = 8;
const DAY = '2026-12-07';
const limits = { maxSessionsPerDay: 100, maxUsdPerDay: 1, maxUsdPerSession: 1, minSessionUsd: 0.05, maxRunsPerDay: null };

describe('the fleet\'s reservations', { skip: NEEDS_POSTGRES }, () => {
  let pg: Cluster;
  before(async () => {
    pg = await startCluster();
  });
  after(() => pg?.close());

  async function freshDb(): Promise<{ url: string; db: FleetDb }> {
    const url = pg.url(pg.createDb());
    const db = await connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (t) => t });
    await migrate(db);
    return { url, db };
  }

  async function race(t: Parameters<typeof tempDir>[0], how: 'inside' | 'apart') {
    const { url, db } = await freshDb();
    const dir = tempDir(t);
    const hosts = ['host-a', 'host-b'];
    for (const h of hosts) {
      fs.mkdirSync(path.join(dir, h));
      Ledger.open(path.join(dir, h, 'ledger.db')).close();
    }
    const barrier = path.join(dir, 'barrier');
    fs.mkdirSync(barrier);
    const results = await Promise.all(Array.from({ length: RACERS }, (_, n) => {
      const host = hosts[n % 2];
      return racer('fleet-racer.mjs', [url, host, path.join(dir, host), String(n), how, barrier, String(RACERS), path.join(ROOT, 'dist')], n);
    }));
    const fleet = await fleetDayTotals(db, '2026-12-07');
    const reserved = (await db.query<{ s: number }>('SELECT coalesce(sum(reserved_usd), 0)::float8 AS s FROM fleet_reservations')).rows[0].s;
    const local = hosts.map((h) => {
      const l = Ledger.open(path.join(dir, h, 'ledger.db'));
      try {
        return l.dayTotals('2026-12-07');
      } finally {
        l.close();
      }
    });
    await db.close();
    return { fleet, reserved, local, started: results.filter((r) => r.ok === true).length };
  }

  // mutation: fleet-reserve-unlocked (the day's row not locked), caught here.
  test('eight supervisors on two hosts racing for a $1 day reserve and spend no more than $1 between them', async (t) => {
    const r = await race(t, 'inside');
    assert.ok(r.reserved <= 1 + 1e-9, `reserved ${r.reserved}`);
    assert.ok(r.fleet.costUsd <= 1 + 1e-9, `spent ${r.fleet.costUsd}`);
    // The day was used, not refused wholesale: $0.30 + $0.30 + $0.30 + $0.10.
    assert.equal(r.started, 4);
    assert.equal(r.fleet.sessions, 4);
    // Each host's own ledger holds its own sessions, and together they are the fleet's.
    assert.equal(r.local[0].sessions + r.local[1].sessions, 4);
    assert.ok(Math.abs(r.local[0].costUsd + r.local[1].costUsd - r.fleet.costUsd) < 1e-9);
  });

  test('the control: the fleet\'s day read first and recorded apart lets all eight start, past the cap', async (t) => {
    const r = await race(t, 'apart');
    assert.equal(r.started, RACERS);
    assert.ok(r.fleet.costUsd > 1, `spent ${r.fleet.costUsd}: the cap passed`);
  });

  // mutation: fleet-connection-shared-mid-transaction, caught here.
  test('sessions side by side on one host share its connection: eight charges at once on it reserve no more than the cap', async () => {
    const { db } = await freshDb();
    try {
      const charges = Array.from({ length: RACERS }, (_, n) => reserveInFleet(db, { session: `s${n}`, day: DAY, agent: `agent-${n}`, host: 'host-a', expiresInMs: 3_600_000 }, (today) => chargeFor(`agent-${n}`, today, { ...limits, maxUsdPerSession: 0.3 }, false), (usd) => chargeGuard({ ...limits, maxUsdPerSession: 0.3 }, usd)));
      // A settle of another session arriving mid-way lands in no charge's transaction.
      const settled = settleInFleet(db, 'nobody', 0);
      const r = await Promise.all(charges);
      assert.equal(await settled, false);
      assert.deepEqual(r.map((x) => (x.ok ? x.usd : 0)), [0.3, 0.3, 0.3, 0.1, 0, 0, 0, 0]);
      const today = await fleetDayTotals(db, DAY);
      assert.ok(today.reservedUsd <= 1 + 1e-9, `reserved ${today.reservedUsd}`);
    } finally {
      await db.close();
    }
  });

  test('an expired reservation gives the day its money back; one within its time holds it (control)', async () => {
    const { db } = await freshDb();
    try {
      const decide = (agent: string) => (today: Parameters<typeof chargeFor>[1]) => chargeFor(agent, today, limits, false);
      const guard = (usd: number) => chargeGuard(limits, usd);
      // A host that died mid-session: its reservation is past its time at once.
      const dead = await reserveInFleet(db, { session: 'dead', day: DAY, agent: 'a', host: 'host-a', expiresInMs: 0 }, decide('a'), guard);
      assert.deepEqual(dead, { ok: true, usd: 1 });
      const next = await reserveInFleet(db, { session: 'next', day: DAY, agent: 'b', host: 'host-b', expiresInMs: 3_600_000 }, decide('b'), guard);
      assert.deepEqual(next, { ok: true, usd: 1 });
      // Its status is tidied by the next connect (daemon/tick/fleet-link.ts), the money back already.
      assert.equal(await expireReservations(db), 1);
      assert.equal((await db.query<{ status: string }>(`SELECT status FROM fleet_reservations WHERE session_id = 'dead'`)).rows[0].status, 'expired');
      // Control: `next` holds its dollar for its whole time: a third is refused.
      const third = await reserveInFleet(db, { session: 'third', day: DAY, agent: 'c', host: 'host-a', expiresInMs: 3_600_000 }, decide('c'), guard);
      assert.equal(third.ok, false);
      assert.match((third as { reason: string }).reason, /budget\.max_usd_per_day: \$0\.00 left of \$1\.00 today \(\$0\.00 spent, \$1\.00 reserved/);
      // Its settle gives back what it did not spend: $0.25 spent, $0.75 free again.
      assert.equal(await settleInFleet(db, 'next', 0.25), true);
      const fourth = await reserveInFleet(db, { session: 'fourth', day: DAY, agent: 'c', host: 'host-a', expiresInMs: 3_600_000 }, decide('c'), guard);
      assert.deepEqual(fourth, { ok: true, usd: 0.75 });
      // The dead host comes back and settles what it really spent: counted, once.
      assert.equal(await settleInFleet(db, 'dead', 0.1), true);
      const today = await fleetDayTotals(db, DAY);
      assert.equal(today.sessions, 3);
      assert.ok(Math.abs(today.costUsd - 0.35) < 1e-9, `spent ${today.costUsd}`);
    } finally {
      await db.close();
    }
  });

  test('the same charge taken twice (its session id) reserves once; one released never counts', async () => {
    const { db } = await freshDb();
    try {
      const c = { session: 's1', day: DAY, agent: 'a', host: 'host-a', expiresInMs: 3_600_000 };
      const first = await reserveInFleet(db, c, (today) => chargeFor('a', today, { ...limits, maxUsdPerSession: 0.4 }, false), (usd) => chargeGuard({ ...limits, maxUsdPerSession: 0.4 }, usd));
      const again = await reserveInFleet(db, c, (today) => chargeFor('a', today, { ...limits, maxUsdPerSession: 0.4 }, false), (usd) => chargeGuard({ ...limits, maxUsdPerSession: 0.4 }, usd));
      assert.deepEqual(first, { ok: true, usd: 0.4 });
      assert.deepEqual(again, { ok: true, usd: 0.4, again: true });
      let today = await fleetDayTotals(db, DAY);
      assert.deepEqual([today.sessions, today.reservedUsd], [1, 0.4]);
      // A charge the local ledger refused is released: as if never taken.
      await releaseInFleet(db, 's1');
      today = await fleetDayTotals(db, DAY);
      assert.deepEqual([today.sessions, today.reservedUsd, today.costUsd], [0, 0, 0]);
    } finally {
      await db.close();
    }
  });

  // mutations: fleet-guard-committed-unchecked, fleet-guard-sessions-unchecked, fleet-guard-runs-unchecked,
  // fleet-guard-runs-unlimited-read, caught here: each edge of the guarded write (budget/fleet-reservations.ts RESERVE_WITHIN) is
  // met from both sides. Inside, the charge a roomy day gets is written in one round trip (decided
  // once, on no totals); outside, the day is read under its lock and decided on again.
  test('the guarded write takes a roomy day\'s charge just inside each limit, and reads the day just outside it', async () => {
    const { db } = await freshDb();
    const L: Limits = { maxSessionsPerDay: 5, maxUsdPerDay: 1, maxUsdPerSession: 0.3, minSessionUsd: 0.05, maxRunsPerDay: 2 };
    let n = 0;
    // A day as the other sessions left it: each [agent, reserved, spent, settled?, expired?].
    async function day(name: string, rows: Array<[string, number, number, boolean, boolean?]>) {
      for (const [agent, reserved, spent, settled, expired] of rows) {
        const id = `${name}-${n++}`;
        await reserveInFleet(db, { session: id, day: name, agent, host: 'host-b', expiresInMs: expired ? 0 : 3_600_000 }, () => ({ ok: true as const, usd: reserved }), null);
        if (settled) await settleInFleet(db, id, spent);
        else if (spent) await renewReservation(db, id, spent, expired ? 0 : 3_600_000);
      }
    }
    async function charge(name: string, l: Limits) {
      const seen: DayTotals[] = [];
      const r = await reserveInFleet(db, { session: `${name}-me`, day: name, agent: 'me', host: 'host-a', expiresInMs: 3_600_000 }, (today) => {
        seen.push(today);
        return chargeFor('me', today, l, false);
      }, (usd) => chargeGuard(l, usd));
      return { r, read: seen.length > 1 };
    }
    try {
      const cases: Array<[string, Array<[string, number, number, boolean, boolean?]>, boolean, number | string, Partial<Limits>?]> = [
        // $0.70 taken ($0.20 spent and settled, $0.50 held): $0.30 still fits.
        ['cap-inside', [['x', 0.3, 0.2, true], ['y', 0.5, 0, false]], false, 0.3],
        // A millionth more: the day is read, and what is left reserved.
        ['cap-outside', [['x', 0.3, 0.200001, true], ['y', 0.5, 0, false]], true, 0.299999],
        // Held and part spent counts the larger of the two once: $0.4 held of which $0.1 spent.
        ['held-spent', [['x', 0.4, 0.1, false], ['y', 0.3, 0.3, true]], false, 0.3],
        ['held-spent-outside', [['x', 0.4, 0.1, false], ['y', 0.31, 0.31, true]], true, 0.29],
        // A reservation past its time counts only what it spent.
        ['expired', [['x', 1, 0.7, false, true]], false, 0.3],
        // Four sessions of five: one more starts; five: none.
        ['sessions-inside', [['x', 0.05, 0, true], ['y', 0.05, 0, true], ['z', 0.05, 0, true], ['w', 0.05, 0, true]], false, 0.3],
        ['sessions-outside', [['x', 0.05, 0, true], ['y', 0.05, 0, true], ['z', 0.05, 0, true], ['w', 0.05, 0, true], ['v', 0.05, 0, true]], true, 'max_sessions_per_day'],
        // One run of the agent's two: one more; two: none.
        ['runs-inside', [['me', 0.05, 0, true]], false, 0.3],
        ['runs-outside', [['me', 0.05, 0, true], ['me', 0.05, 0, true]], true, 'max_runs_per_day'],
        // No runs limit (the default): the agent's own runs never send it to the read.
        ['runs-unlimited', [['me', 0.05, 0, true], ['me', 0.05, 0, true], ['me', 0.05, 0, true]], false, 0.3, { maxRunsPerDay: null }],
        // Under a millionth of a dollar: a cap of $1.0000006 with $0.7000014 spent leaves
        // $0.299999 as reservationFor rounds it, less than the ceiling: read, and that reserved.
        ['sub-micro', [['x', 0.7000014, 0.7000014, true]], true, 0.299999, { maxUsdPerDay: 1.0000006 }],
        // Counts past PostgreSQL's integer, as the config allows them: inside, not an error.
        ['huge-limits', [['me', 0.05, 0, true]], false, 0.3, { maxRunsPerDay: 3_000_000_000, maxSessionsPerDay: 1e21 }],
      ];
      for (const [name, rows, read, expected, over] of cases) {
        await day(name, rows);
        const { r, read: wasRead } = await charge(name, { ...L, ...over });
        assert.equal(r.ok ? r.usd : (r as { limit: string }).limit, expected, `${name}: ${JSON.stringify(r)}`);
        assert.equal(wasRead, read, `${name}: the day ${read ? 'should' : 'should not'} have been read under its lock`);
      }
    } finally {
      await db.close();
    }
  });

  // mutation: fleet-guard-before-lock, caught here. The guarded write's sums are taken after the
  // day's lock is given (a statement of its own): a charge committed while it waited is counted.
  test('a charge committed while the guarded write waits for the day\'s lock is counted: $0.80 held elsewhere leaves $0.20', async () => {
    const { url, db } = await freshDb();
    const other = await connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (t) => t });
    const watch = await connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (t) => t });
    const L: Limits = { ...limits, maxUsdPerSession: 0.3 };
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let first: Promise<void> = Promise.resolve();
    try {
      // Another host's charge, its transaction held open on the day's lock until released; mine
      // starts once that lock is taken.
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      first = other.transaction(async (tx) => {
        await tx.query('INSERT INTO fleet_days (day) VALUES ($1) ON CONFLICT (day) DO UPDATE SET day = excluded.day', [DAY]);
        await tx.query(`INSERT INTO fleet_reservations (session_id, day, agent, host, reserved_usd, status, expires_at) VALUES ('other', $1, 'x', 'host-b', 0.8, 'held', now() + interval '1 hour')`, [DAY]);
        locked();
        await held;
      });
      await isLocked;
      const mine = reserveInFleet(db, { session: 'me', day: DAY, agent: 'me', host: 'host-a', expiresInMs: 3_600_000 }, (today) => chargeFor('me', today, L, false), (usd) => chargeGuard(L, usd));
      // Until PostgreSQL says the charge waits on a lock.
      for (let i = 0; ; i++) {
        const r = await watch.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        if (r.rows[0].n > 0) break;
        assert.ok(i < 1000, 'the charge never waited on the day\'s lock');
        await new Promise((r) => setTimeout(r, 10));
      }
      release();
      await first;
      const r = await mine;
      assert.deepEqual(r, { ok: true, usd: 0.2 });
      const today = await fleetDayTotals(db, DAY);
      assert.ok(today.reservedUsd <= 1 + 1e-9, `reserved ${today.reservedUsd}`);
    } finally {
      // Never left holding the lock: each connection closes after its turn.
      release();
      await first.catch(() => {});
      await Promise.all([db.close(), other.close(), watch.close()]);
    }
  });
});
