// The hosts of the fleet as the database last heard them (./fleet-db.ts): each host's heartbeat
// writes the database's time and how far its own clock was from it; what each runs and spent today
// is read from the claims and the reservations.
import type { FleetQuery } from './fleet-db.js';

// age_ms: since its last heartbeat, on the database's clock (no host's skew in it).
export type FleetHost = { host: string; seen_at: string; age_ms: number; skew_ms: number; version: string; running: number; spent_today_usd: number; reserved_today_usd: number };

// This host heard now; `localMs`: its own clock as it sent the statement.
export async function heardFrom(db: FleetQuery, host: string, localMs: number, version: string): Promise<void> {
  await db.query(
    `INSERT INTO fleet_hosts (host, seen_at, skew_ms, version) VALUES ($1, now(), $2::float8 - extract(epoch FROM now()) * 1000, $3)
      ON CONFLICT (host) DO UPDATE SET seen_at = excluded.seen_at, skew_ms = excluded.skew_ms, version = excluded.version`, [host, localMs, version]);
}

// Every host, with its live claims and the day's spend and what it holds in reservations.
export async function fleetHosts(db: FleetQuery, day: string): Promise<FleetHost[]> {
  const r = await db.query<{ host: string; seen_at: Date; age_ms: number; skew_ms: number; version: string; running: number; spent: number; reserved: number }>(
    `SELECT h.host, h.seen_at, greatest(0, extract(epoch FROM now() - h.seen_at) * 1000)::float8 AS age_ms, h.skew_ms, h.version,
        (SELECT count(*)::int FROM fleet_claims c WHERE c.host = h.host AND c.ended_at IS NULL AND c.lease_until > now()) AS running,
        (SELECT coalesce(sum(spent_usd), 0)::float8 FROM fleet_reservations r WHERE r.host = h.host AND r.day = $1) AS spent,
        (SELECT coalesce(sum(CASE WHEN status = 'held' AND expires_at > now() THEN greatest(0, reserved_usd - spent_usd) ELSE 0 END), 0)::float8 FROM fleet_reservations r WHERE r.host = h.host AND r.day = $1) AS reserved
      FROM fleet_hosts h ORDER BY h.host`, [day]);
  return r.rows.map((x) => ({ host: x.host, seen_at: new Date(x.seen_at).toISOString(), age_ms: Math.round(x.age_ms), skew_ms: Math.round(x.skew_ms), version: x.version, running: x.running, spent_today_usd: x.spent, reserved_today_usd: x.reserved }));
}

// This host's clock minus the database's (as skew_ms above), by one round trip (its middle).
export async function clockSkewMs(db: FleetQuery, now: () => number = Date.now): Promise<{ skewMs: number; roundTripMs: number }> {
  const sent = now();
  const r = await db.query<{ ms: number }>('SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms');
  const back = now();
  return { skewMs: Math.round((sent + back) / 2 - Number(r.rows[0].ms)), roundTripMs: back - sent };
}
