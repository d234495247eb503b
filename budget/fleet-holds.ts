// The holds and hold releases across the fleet (./fleet-db.ts): each host writes the hold its own
// ledger decides for an agent (./holds.ts) when a session of the agent settles there, and the
// operator's release from any host; every host's dispatch reads the others' holds, and a release
// lifts on every host the holds set before it. Both writes are idempotent (a spooled one written
// twice changes nothing) and never move a row back in time.
import type { Hold, HoldRow } from './holds.js';
import type { FleetQuery } from './fleet-db.js';

// What the fleet says of the agents' holds, as another host sees it: the holds other hosts set
// and no release has lifted (each naming its host), the last release of each agent, and the
// sessions other hosts ran of each agent, newest first, as rows for its failure streak.
export type FleetHolds = { holds: Record<string, Hold>; releases: Record<string, string>; rows: Record<string, HoldRow[]> };

// Rows enough of another host's sessions of an agent for any streak that still changes a wait
// (daemon/schedule/holds.ts reads as many of its own).
const OTHER_ROWS = 40;

// This host's hold on `agent` now (null: none), as of `at` (this host's clock).
export async function publishHold(db: FleetQuery, host: string, agent: string, hold: Hold | null, at: string): Promise<void> {
  if (!hold) {
    await db.query('DELETE FROM fleet_holds WHERE agent = $1 AND host = $2 AND set_at <= $3', [agent, host, at]);
    return;
  }
  await db.query(
    `INSERT INTO fleet_holds (agent, host, kind, until, reason, failures, session_id, set_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
      ON CONFLICT (agent, host) DO UPDATE SET kind = EXCLUDED.kind, until = EXCLUDED.until, reason = EXCLUDED.reason,
        failures = EXCLUDED.failures, session_id = EXCLUDED.session_id, set_at = EXCLUDED.set_at
      WHERE fleet_holds.set_at <= EXCLUDED.set_at`,
    [agent, host, hold.kind, hold.until, hold.reason, hold.failures, hold.session, at]);
}

// The operator's release of `agents` at `at` (the releasing host's clock); a later one kept.
export async function publishRelease(db: FleetQuery, host: string, agents: string[], at: string): Promise<void> {
  if (!agents.length) return;
  await db.query(
    `INSERT INTO fleet_hold_releases (agent, host, released_at) SELECT a, $2, $3 FROM unnest($1::text[]) AS a
      ON CONFLICT (agent) DO UPDATE SET host = EXCLUDED.host, released_at = EXCLUDED.released_at
      WHERE fleet_hold_releases.released_at < EXCLUDED.released_at`,
    [agents, host, at]);
}

const clock = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');

// The other hosts' holds in force at `now` that no release came after, and every release.
export async function readFleetHolds(db: FleetQuery, host: string, now: Date): Promise<FleetHolds> {
  const held = await db.query<{ agent: string; host: string; kind: Hold['kind']; until: Date; reason: string; failures: number; session_id: string }>(
    `SELECT h.agent, h.host, h.kind, h.until, h.reason, h.failures, h.session_id FROM fleet_holds h
      LEFT JOIN fleet_hold_releases r ON r.agent = h.agent
      WHERE h.host <> $1 AND h.until > $2 AND (r.released_at IS NULL OR r.released_at < h.set_at)
      ORDER BY h.until DESC`, [host, now]);
  const holds: Record<string, Hold> = {};
  // The longest wait of an agent held on several hosts.
  for (const h of held.rows) holds[h.agent] ??= { kind: h.kind, until: clock(new Date(h.until)), reason: `${h.reason} (on host ${h.host})`, failures: h.failures, session: h.session_id, host: h.host };
  const rel = await db.query<{ agent: string; released_at: Date }>('SELECT agent, released_at FROM fleet_hold_releases');
  // The other hosts' ended claims that ran a session: its outcome as that host settled it. A claim
  // settled 'crashed' (its host died) reads as this host's own 'abandoned': it breaks no streak.
  const ran = await db.query<{ agent: string; session_id: string; outcome: string; claimed_at: Date; ended_at: Date }>(
    `SELECT agent, session_id, outcome, claimed_at, ended_at FROM (
        SELECT agent, session_id, outcome, claimed_at, ended_at, row_number() OVER (PARTITION BY agent ORDER BY ended_at DESC) AS k
          FROM fleet_claims WHERE host <> $1 AND ended_at IS NOT NULL AND session_id IS NOT NULL AND outcome IS NOT NULL) t
      WHERE k <= $2 ORDER BY agent, ended_at DESC`, [host, OTHER_ROWS]);
  const rows: Record<string, HoldRow[]> = {};
  for (const r of ran.rows) {
    (rows[r.agent] ??= []).push({ id: r.session_id, outcome: r.outcome === 'crashed' ? 'abandoned' : r.outcome, started_at: new Date(r.claimed_at).toISOString(), ended_at: new Date(r.ended_at).toISOString(), retry_at: null });
  }
  return { holds, releases: Object.fromEntries(rel.rows.map((r) => [r.agent, new Date(r.released_at).toISOString()])), rows };
}
