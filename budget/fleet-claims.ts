// The fires' claims across the fleet (./fleet-db.ts): one row per (agent, scheduled slot), taken
// in one statement, so of the hosts that fire the same slot at once exactly one starts a session;
// the others learn who has it.
import type { FleetSql } from './fleet-db.js';

export type Claim = { agent: string; slot: string; host: string };
export type ClaimResult = { won: true } | { won: false; host: string; at: string };

// Takes the slot, or says which host took it first (this one too: a slot fires once).
export async function claimFire(db: FleetSql, c: Claim): Promise<ClaimResult> {
  const r = await db.query(`INSERT INTO fleet_claims (agent, slot, host) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [c.agent, c.slot, c.host]);
  if (r.rowCount === 1) return { won: true };
  const other = await db.query<{ host: string; claimed_at: Date }>('SELECT host, claimed_at FROM fleet_claims WHERE agent = $1 AND slot = $2', [c.agent, c.slot]);
  const row = other.rows[0];
  // Taken and let go between the two statements: the next fire tries again.
  if (!row) return { won: false, host: 'another host', at: new Date().toISOString() };
  return { won: false, host: row.host, at: new Date(row.claimed_at).toISOString() };
}

// A claim whose fire started no session (refused before the charge): the slot is free again.
export async function releaseFire(db: FleetSql, c: Claim): Promise<void> {
  await db.query('DELETE FROM fleet_claims WHERE agent = $1 AND slot = $2 AND host = $3', [c.agent, c.slot, c.host]);
}
