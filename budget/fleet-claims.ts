// The fires' claims across the fleet (./fleet-db.ts): one row per (agent, scheduled slot), so of
// the hosts that fire the same slot at once exactly one starts a session; and at most one live
// claim per agent, so a session still running from an earlier slot is never started twice. A claim
// holds a lease (the database's clock), renewed by its host's heartbeat while it works; a claim
// past its lease (its host died) is settled 'crashed' by the next host that looks.
import type { FleetQuery, FleetSql } from './fleet-db.js';

export type Claim = { agent: string; slot: string; host: string };
// `full`: the fleet's site-wide bound (fleet.max_concurrent) was met by the live claims counted.
export type ClaimResult = { won: true } | { won: false; host: string; at: string; slot: string; running: boolean } | { won: false; full: { running: number; max: number } };
export type Crashed = { agent: string; slot: string; host: string; session: string | null };

// Any constant: with the agent's name, the advisory lock a claim takes, so two hosts claiming
// different slots of one agent at once take turns.
const CLAIM_LOCK = 5_505_506;
// With fleet.max_concurrent, the lock every claim takes first (its second key 0).
const SITE_LOCK = 5_505_507;

// Live claims past their lease, settled 'crashed' (their host stopped renewing them).
export async function settleCrashed(db: FleetQuery, agent?: string): Promise<Crashed[]> {
  const r = await db.query<{ agent: string; slot: Date; host: string; session_id: string | null }>(
    `UPDATE fleet_claims SET ended_at = now(), outcome = 'crashed'
      WHERE ended_at IS NULL AND lease_until <= now() AND ($1::text IS NULL OR agent = $1)
      RETURNING agent, slot, host, session_id`, [agent ?? null]);
  return r.rows.map((x) => ({ agent: x.agent, slot: new Date(x.slot).toISOString(), host: x.host, session: x.session_id }));
}

// Takes the slot with a lease of `leaseMs`, or says which host has the agent: one that claimed this
// slot first (this one too: a slot fires once), or one whose claim on an earlier slot is still live.
// `perAgent: false` is the negative control's seam (the slot's row alone decides).
// `maxConcurrent` (fleet.max_concurrent): a new claim is taken only while fewer claims than it are
// live across the fleet, counted under a lock every claim then takes first (one claim at a time
// in the whole fleet, so two hosts cannot both take the last place).
export async function claimFire(db: FleetSql, c: Claim & { leaseMs: number }, o: { perAgent?: boolean; maxConcurrent?: number | null } = {}): Promise<ClaimResult & { crashed: Crashed[] }> {
  return await db.transaction(async (tx) => {
    const max = o.maxConcurrent ?? null;
    if (max !== null) await tx.query('SELECT pg_advisory_xact_lock($1, 0)', [SITE_LOCK]);
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CLAIM_LOCK, c.agent]);
    const crashed = await settleCrashed(tx, c.agent);
    if (o.perAgent !== false) {
      const live = await tx.query<{ host: string; claimed_at: Date; slot: Date }>(
        'SELECT host, claimed_at, slot FROM fleet_claims WHERE agent = $1 AND ended_at IS NULL AND slot <> $2 ORDER BY claimed_at LIMIT 1', [c.agent, c.slot]);
      const l = live.rows[0];
      if (l) return { won: false as const, host: l.host, at: new Date(l.claimed_at).toISOString(), slot: new Date(l.slot).toISOString(), running: true, crashed };
    }
    if (max !== null) {
      // A slot claimed before is said as such; only a new claim counts against the bound.
      const taken = await tx.query('SELECT 1 FROM fleet_claims WHERE agent = $1 AND slot = $2', [c.agent, c.slot]);
      if (!taken.rows.length) {
        const live = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM fleet_claims WHERE ended_at IS NULL AND lease_until > now()');
        if (live.rows[0].n >= max) return { won: false as const, full: { running: live.rows[0].n, max }, crashed };
      }
    }
    const r = await tx.query(
      `INSERT INTO fleet_claims (agent, slot, host, lease_until) VALUES ($1, $2, $3, now() + make_interval(secs => $4::float8 / 1000))
        ON CONFLICT DO NOTHING`, [c.agent, c.slot, c.host, c.leaseMs]);
    if (r.rowCount === 1) return { won: true as const, crashed };
    const other = await tx.query<{ host: string; claimed_at: Date }>('SELECT host, claimed_at FROM fleet_claims WHERE agent = $1 AND slot = $2', [c.agent, c.slot]);
    const row = other.rows[0];
    return { won: false as const, host: row?.host ?? 'another host', at: row ? new Date(row.claimed_at).toISOString() : new Date().toISOString(), slot: c.slot, running: false, crashed };
  });
}

// A claim whose fire started no session (refused before the charge): the slot is free again.
export async function releaseFire(db: FleetQuery, c: Claim): Promise<void> {
  await db.query('DELETE FROM fleet_claims WHERE agent = $1 AND slot = $2 AND host = $3 AND ended_at IS NULL', [c.agent, c.slot, c.host]);
}

// The claim's session, once charged (a crash then names it).
export async function claimCharged(db: FleetQuery, c: Claim, session: string): Promise<void> {
  await db.query('UPDATE fleet_claims SET session_id = $4 WHERE agent = $1 AND slot = $2 AND host = $3', [c.agent, c.slot, c.host, session]);
}

// The claim's end, with the session's outcome. Idempotent; it also ends a claim already settled
// 'crashed' (the host came back): the real outcome replaces the guess.
export async function endClaim(db: FleetQuery, c: Claim, outcome: string): Promise<void> {
  await db.query('UPDATE fleet_claims SET ended_at = coalesce(ended_at, now()), outcome = $4 WHERE agent = $1 AND slot = $2 AND host = $3', [c.agent, c.slot, c.host, outcome]);
}

// The heartbeat: this host's live claims named here keep their lease `leaseMs` ahead.
export async function renewClaims(db: FleetQuery, host: string, claims: Array<Pick<Claim, 'agent' | 'slot'>>, leaseMs: number): Promise<number> {
  if (!claims.length) return 0;
  const r = await db.query(
    `UPDATE fleet_claims c SET lease_until = greatest(c.lease_until, now() + make_interval(secs => $4::float8 / 1000))
      FROM unnest($2::text[], $3::timestamptz[]) AS u(agent, slot)
      WHERE c.agent = u.agent AND c.slot = u.slot AND c.host = $1 AND c.ended_at IS NULL`,
    [host, claims.map((x) => x.agent), claims.map((x) => x.slot), leaseMs]);
  return r.rowCount ?? 0;
}

// A claim as the fleet knows it (`fires --fleet`, status): `live` on the database's clock (its
// lease not passed, not ended); one live past its lease is a host that stopped beating, settled
// 'crashed' by the next host that connects.
export type ClaimRow = { agent: string; slot: string; host: string; session: string | null; claimed_at: string; lease_until: string; ended_at: string | null; outcome: string | null; live: boolean };

// The claims made since `since` (newest first), or only the live ones. A read: nothing is settled.
export async function listClaims(db: FleetQuery, o: { since?: Date; live?: boolean; agent?: string; limit?: number }): Promise<ClaimRow[]> {
  const r = await db.query<{ agent: string; slot: Date; host: string; session_id: string | null; claimed_at: Date; lease_until: Date; ended_at: Date | null; outcome: string | null; live: boolean }>(
    `SELECT agent, slot, host, session_id, claimed_at, lease_until, ended_at, outcome, (ended_at IS NULL AND lease_until > now()) AS live
      FROM fleet_claims
      WHERE ($1::timestamptz IS NULL OR claimed_at >= $1) AND ($2::boolean IS NOT TRUE OR (ended_at IS NULL AND lease_until > now())) AND ($3::text IS NULL OR agent = $3)
      ORDER BY claimed_at DESC, agent LIMIT $4`, [o.since ?? null, o.live ?? false, o.agent ?? null, o.limit ?? 1000]);
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return r.rows.map((x) => ({ agent: x.agent, slot: iso(x.slot)!, host: x.host, session: x.session_id, claimed_at: iso(x.claimed_at)!, lease_until: iso(x.lease_until)!, ended_at: iso(x.ended_at), outcome: x.outcome, live: x.live }));
}

// Pure: a claim's state in words: its outcome once ended, else running, or its lease passed
// without a heartbeat (the next host that connects settles it crashed).
export function claimState(c: Pick<ClaimRow, 'outcome' | 'live' | 'ended_at'>): string {
  if (c.ended_at) return c.outcome ?? 'ended';
  return c.live ? 'running' : 'lease passed (its host stopped beating)';
}
