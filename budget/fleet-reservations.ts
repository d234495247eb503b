// The day's reservations across the fleet (./fleet-db.ts): a session's charge is one transaction
// against the day's row, locked (an upsert that updates it), so two hosts cannot both take what is left; the session
// id is its idempotency key (the same charge twice takes nothing more); the reservation expires
// at the session's own wall-clock limit plus grace, and an expired one gives the day back all but
// what it recorded as spent. Its settle records the spend and releases the rest.
import { dayTotalsOf, type DayTotals } from './policy.js';
import type { FleetQuery, FleetSql } from './fleet-db.js';

export type FleetCharge = { session: string; day: string; agent: string; host: string; expiresInMs: number };

// Every row of the day counts as a session (settled, expired or held); a held one counts its
// recorded spend as spent and the rest of its reservation as reserved; the others their spend.
const TOTALS = `SELECT agent, count(*)::int AS n,
    coalesce(sum(spent_usd), 0)::float8 AS usd,
    coalesce(sum(CASE WHEN status = 'held' AND expires_at > now() THEN greatest(0, reserved_usd - spent_usd) ELSE 0 END), 0)::float8 AS reserved
  FROM fleet_reservations WHERE day = $1 GROUP BY agent`;

async function totals(db: FleetQuery, day: string): Promise<DayTotals> {
  return dayTotalsOf((await db.query<{ agent: string; n: number; usd: number; reserved: number }>(TOTALS, [day])).rows);
}

// The fleet's day as every host sees it (a look: no lock, nothing written).
export function fleetDayTotals(db: FleetQuery, day: string): Promise<DayTotals> {
  return totals(db, day);
}

// Charges the session across the fleet: `decide` (budget/policy.ts chargeFor) reads the day's
// totals under the day's lock, and its reservation is written before the lock is let go. A refusal
// writes nothing and is returned; a charge already taken under this id is returned as it stands.
export async function reserveInFleet<R extends { ok: true; usd: number } | { ok: false }>(db: FleetSql, c: FleetCharge, decide: (today: DayTotals) => R): Promise<R | { ok: true; usd: number; again: true }> {
  return await db.transaction(async (tx) => {
    // The day's row, made if new, and locked either way: the upsert's update takes its row lock,
    // held to the commit. Then one read under the lock: the day's totals, and this session's
    // charge if it was taken before. Both go out with the BEGIN (pipelined, ./fleet-db.ts), and the
    // reservation's insert with the COMMIT: the lock is held for one round trip.
    // (A held reservation past its time counts only its spend; its status is tidied at a connect.)
    const [, read] = await Promise.all([
      tx.query('INSERT INTO fleet_days (day) VALUES ($1) ON CONFLICT (day) DO UPDATE SET day = excluded.day', [c.day]),
      tx.query<{ agent: string | null; n: number; usd: number; reserved: number; had: number | null }>(
        `SELECT agent, n, usd, reserved, NULL::float8 AS had FROM (${TOTALS}) t
          UNION ALL SELECT NULL, 0, 0, 0, (SELECT reserved_usd FROM fleet_reservations WHERE session_id = $2)`, [c.day, c.session]),
    ]);
    const rows = read.rows;
    const had = rows.find((r) => r.agent === null)?.had;
    if (had !== null && had !== undefined) return { ok: true as const, usd: had, again: true as const };
    const decided = decide(dayTotalsOf(rows.filter((r) => r.agent !== null) as Array<{ agent: string; n: number; usd: number; reserved: number }>));
    if (decided.ok) {
      // Not awaited: it is sent now and awaited after the COMMIT goes out behind it.
      void tx.query(`INSERT INTO fleet_reservations (session_id, day, agent, host, reserved_usd, status, expires_at)
        VALUES ($1, $2, $3, $4, $5, 'held', now() + make_interval(secs => $6::float8 / 1000))`, [c.session, c.day, c.agent, c.host, decided.usd, c.expiresInMs]);
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
