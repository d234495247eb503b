// The day's reservations across the fleet (./fleet-db.ts): a session's charge is one transaction
// against the day's row, locked (an upsert that updates it), so two hosts cannot both take what is left; the session
// id is its idempotency key (the same charge twice takes nothing more); the reservation expires
// at the session's own wall-clock limit plus grace, and an expired one gives the day back all but
// what it recorded as spent. Its settle records the spend and releases the rest.
import { dayTotalsOf, type ChargeGuard, type DayTotals } from './policy.js';
import type { FleetQuery, FleetSql, Prepared } from './fleet-db.js';

export type FleetCharge = { session: string; day: string; agent: string; host: string; expiresInMs: number };

// Every row of the day counts as a session (settled, expired or held); a held one counts its
// recorded spend as spent and the rest of its reservation as reserved; the others their spend.
const HELD = `CASE WHEN status = 'held' AND expires_at > now() THEN greatest(0, reserved_usd - spent_usd) ELSE 0 END`;
const TOTALS = `SELECT agent, count(*)::int AS n,
    coalesce(sum(spent_usd), 0)::float8 AS usd,
    coalesce(sum(${HELD}), 0)::float8 AS reserved
  FROM fleet_reservations WHERE day = $1 GROUP BY agent`;

async function totals(db: FleetQuery, day: string): Promise<DayTotals> {
  return dayTotalsOf((await db.query<{ agent: string; n: number; usd: number; reserved: number }>(TOTALS, [day])).rows);
}

// The fleet's day as every host sees it (a look: no lock, nothing written).
export function fleetDayTotals(db: FleetQuery, day: string): Promise<DayTotals> {
  return totals(db, day);
}

// A charge's statements, prepared (./fleet-db.ts): the day's row made if new and locked (the
// upsert's update takes its row lock, held to the commit); the reservation written only if the
// day's totals, summed after the lock, are within the charge's guard (budget/policy.ts
// chargeGuard; a statement of its own, so it sees every charge committed before the lock was
// given; the limits as numeric, which takes any count the config does); the day's totals and this
// session's earlier charge; the reservation.
const LOCK_DAY: Prepared = { name: 'nightshift_lock_day', text: 'INSERT INTO fleet_days (day) VALUES ($1) ON CONFLICT (day) DO UPDATE SET day = excluded.day' };
const READ_DAY: Prepared = {
  name: 'nightshift_read_day',
  text: `SELECT agent, n, usd, reserved, NULL::float8 AS had FROM (${TOTALS}) t
    UNION ALL SELECT NULL, 0, 0, 0, (SELECT reserved_usd FROM fleet_reservations WHERE session_id = $2)`,
};
const RESERVE_WITHIN: Prepared = {
  name: 'nightshift_reserve_within',
  text: `INSERT INTO fleet_reservations (session_id, day, agent, host, reserved_usd, status, expires_at)
    SELECT $1, $2, $3, $4, $5::float8, 'held', now() + make_interval(secs => $6::float8 / 1000)
    FROM (SELECT count(*) AS n, count(*) FILTER (WHERE agent = $3) AS mine,
        coalesce(sum(spent_usd), 0)::float8 AS usd, coalesce(sum(${HELD}), 0)::float8 AS reserved
      FROM fleet_reservations WHERE day = $2) t
    WHERE t.n < $7::numeric AND ($8::numeric IS NULL OR t.mine < $8::numeric) AND t.usd < $9::numeric
      AND round($9::numeric - t.usd::numeric - t.reserved::numeric, 6) >= $5::float8::numeric
    ON CONFLICT (session_id) DO NOTHING`,
};
const RESERVE: Prepared = {
  name: 'nightshift_reserve',
  text: `INSERT INTO fleet_reservations (session_id, day, agent, host, reserved_usd, status, expires_at)
    VALUES ($1, $2, $3, $4, $5, 'held', now() + make_interval(secs => $6::float8 / 1000))`,
};

// A day no session has charged yet: what a charge decides when the day has room.
const NO_TOTALS: DayTotals = { sessions: 0, costUsd: 0, reservedUsd: 0, byAgent: {} };

// Charges the session across the fleet: `decide` (budget/policy.ts chargeFor) reads the day's
// totals, and its reservation is written before the day's lock is let go. A refusal writes nothing
// and is returned; a charge already taken under this id is returned as it stands.
// With `guard` (budget/policy.ts chargeGuard), the charge a day with room gets is tried first in
// one round trip, written only if the day's totals under the lock are within its guard; when they
// are not (the day near a limit, or the charge taken before), the day is read under its lock and
// decided on (two more). Null: always the read (a test's control).
export async function reserveInFleet<R extends { ok: true; usd: number } | { ok: false }>(db: FleetSql, c: FleetCharge, decide: (today: DayTotals) => R, guard: ((usd: number) => ChargeGuard) | null): Promise<R | { ok: true; usd: number; again: true }> {
  const roomy = guard ? decide(NO_TOTALS) : null;
  if (roomy?.ok && guard) {
    const g = guard(roomy.usd);
    let taken = 0;
    // Nothing awaited in the transaction: BEGIN, the lock, the guarded write and COMMIT go out
    // together, and the lock is held only while PostgreSQL runs them.
    await db.transaction(async (tx) => {
      void tx.query(LOCK_DAY, [c.day]);
      void tx.query(RESERVE_WITHIN, [c.session, c.day, c.agent, c.host, g.usd, c.expiresInMs, g.sessionsBelow, g.agentRunsBelow, g.capUsd])
        .then((r) => (taken = r.rowCount ?? 0), () => {});
    });
    if (taken === 1) return roomy;
  }
  return await db.transaction(async (tx) => {
    // The day's row, made if new, and locked either way: the upsert's update takes its row lock,
    // held to the commit. Then one read under the lock: the day's totals, and this session's
    // charge if it was taken before. Both go out with the BEGIN (pipelined, ./fleet-db.ts), and the
    // reservation's insert with the COMMIT: the lock is held for one round trip.
    // (A held reservation past its time counts only its spend; its status is tidied at a connect.)
    const [, read] = await Promise.all([
      tx.query(LOCK_DAY, [c.day]),
      tx.query<{ agent: string | null; n: number; usd: number; reserved: number; had: number | null }>(READ_DAY, [c.day, c.session]),
    ]);
    const rows = read.rows;
    const had = rows.find((r) => r.agent === null)?.had;
    if (had !== null && had !== undefined) return { ok: true as const, usd: had, again: true as const };
    const decided = decide(dayTotalsOf(rows.filter((r) => r.agent !== null) as Array<{ agent: string; n: number; usd: number; reserved: number }>));
    if (decided.ok) {
      // Not awaited: it is sent now and awaited after the COMMIT goes out behind it.
      void tx.query(RESERVE, [c.session, c.day, c.agent, c.host, decided.usd, c.expiresInMs]);
    }
    return decided;
  });
}

// The session's end: what it spent is recorded and the rest of its reservation goes back to the
// day. Idempotent (a second settle writes the same), and it also settles a reservation that had
// expired (the host came back): the real spend replaces the guess. False: no such reservation.
export async function settleInFleet(db: FleetSql, session: string, spentUsd: number): Promise<boolean> {
  const r = await db.query(`UPDATE fleet_reservations SET status = 'settled', spent_usd = $2, settled_at = coalesce(settled_at, now()) WHERE session_id = $1`, [session, Math.max(0, spentUsd)]);
  return r.rowCount === 1;
}

// A charge that never became a session (the local ledger refused it): as if never taken.
export async function releaseInFleet(db: FleetSql, session: string): Promise<void> {
  await db.query(`DELETE FROM fleet_reservations WHERE session_id = $1 AND status = 'held'`, [session]);
}

// The heartbeat: a held reservation stays `leaseMs` ahead of now at least, and what the session
// has spent so far is written through (a host that dies leaves that much counted).
export async function renewReservation(db: FleetQuery, session: string, spentUsd: number, leaseMs: number): Promise<boolean> {
  const r = await db.query(
    `UPDATE fleet_reservations SET expires_at = greatest(expires_at, now() + make_interval(secs => $3::float8 / 1000)), spent_usd = greatest(spent_usd, $2)
      WHERE session_id = $1 AND status = 'held'`, [session, Math.max(0, spentUsd), leaseMs]);
  return r.rowCount === 1;
}

// Held reservations past their time, given back to the day (all but what they recorded as spent).
export async function expireReservations(db: FleetQuery): Promise<number> {
  const r = await db.query(`UPDATE fleet_reservations SET status = 'expired' WHERE status = 'held' AND expires_at <= now()`);
  return r.rowCount ?? 0;
}

// Each agent's sessions across the fleet: today's count and its latest start (dispatch's
// max_runs_per_day and min_interval read it beside the host's own ledger).
export async function fleetHistory(db: FleetQuery, day: string): Promise<Record<string, { today: number; lastStartedAt: Date | null }>> {
  const r = await db.query<{ agent: string; today: number; last: Date | null }>(
    'SELECT agent, (count(*) FILTER (WHERE day = $1))::int AS today, max(reserved_at) AS last FROM fleet_reservations GROUP BY agent', [day]);
  return Object.fromEntries(r.rows.map((x) => [x.agent, { today: x.today, lastStartedAt: x.last ? new Date(x.last) : null }]));
}
