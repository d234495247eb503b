// A start's link to the fleet (docs/fleet.md), made only when the env file names
// NIGHTSHIFT_DATABASE_URL: connected at its first use (a tick with nothing due never connects),
// its schema checked then, closed at the start's end. Unreachable, every use throws
// FleetUnavailableError: the start fails closed. While this start holds a claim or a reservation,
// its heartbeat renews them (every quarter of `fleet.lease`); what it could not write (a settle, a
// claim's end, a hold, a release) is spooled under state_dir and written by the next start that
// connects.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FLEET_URL_VAR, fleetTarget } from '../../config/fleet-url.js';
import type { Config } from '../../config/schema.js';
import type { FleetDb } from '../../budget/fleet-db.js';
import { claimCharged, claimFire, endClaim, releaseFire, renewClaims, settleCrashed, type Claim } from '../../budget/fleet-claims.js';
import { expireReservations, renewReservation, settleInFleet } from '../../budget/fleet-reservations.js';
import { heardFrom } from '../../budget/fleet-hosts.js';
import { publishHold, publishRelease, readFleetHolds, type FleetHolds } from '../../budget/fleet-holds.js';
import type { Hold } from '../../budget/holds.js';
import { version } from '../../core/version.js';
import type { Logger } from '../../logs/logger.js';
import { claimSlot } from '../schedule/claim-slot.js';

// What waits in the spool for the database: a session's settle, a claim's end, this host's hold on
// an agent (null: none now), the operator's release.
export type Spooled =
  | { kind: 'settle'; session: string; spent_usd: number }
  | { kind: 'end'; claim: Claim; outcome: string }
  | { kind: 'hold'; agent: string; hold: Hold | null; at: string }
  | { kind: 'release'; agents: string[]; at: string };

export type FleetLink = {
  host: string;
  grace: number;
  lease: number;
  // fleet.max_concurrent: the sessions the whole fleet runs at once (null: each host's own bound alone).
  maxConcurrent: number | null;
  switches: FleetSwitches;
  get(): Promise<FleetDb>;
  close(): Promise<void>;
  // Kept alive by the heartbeat until the returned function is called.
  holdClaim(c: Claim): () => void;
  holdReservation(session: string, spent: () => number): () => void;
  // Written now if the database answers (true), else kept for the next start (false; never lost,
  // never twice: every write is idempotent).
  write(s: Spooled): Promise<boolean>;
  // The holds other hosts set and the releases, read now (budget/fleet-holds.ts).
  holds(now: Date): Promise<FleetHolds>;
  // Connects (and so writes what waits in the spool) only when something waits there.
  flush(): Promise<void>;
};

// Test-only switches for the negative controls (test/fixtures/fleet-tick.mjs); never read from
// the environment or the config. holds: false, a settled session's hold is not written through;
// streak: false, the sessions other hosts ran are not read into a failure streak.
export type FleetSwitches = { heartbeat?: boolean; spool?: boolean; perAgent?: boolean; holds?: boolean; streak?: boolean };

// This host's name in the fleet.
export function fleetHost(config: Pick<Config, 'fleet'>): string {
  return config.fleet.host ?? os.hostname();
}

export const spoolDir = (stateDir: string) => path.join(stateDir, 'fleet-spool');

// Null without NIGHTSHIFT_DATABASE_URL: the embedded SQLite alone, as ever. A URL that is no
// PostgreSQL's is refused at the first use, once the fire's row is written.
export function fleetLink(config: Pick<Config, 'fleet' | 'state_dir'>, env: NodeJS.ProcessEnv, redact: (t: string) => string, logger?: Logger, switches: FleetSwitches = {}): FleetLink | null {
  if (!env[FLEET_URL_VAR]?.trim()) return null;
  const host = fleetHost(config);
  const lease = config.fleet.lease;
  const said = (err: unknown) => redact(String((err as Error)?.message ?? err));
  let opened: Promise<FleetDb> | null = null;
  const claims = new Map<string, Claim>();
  const reservations = new Map<string, () => number>();
  let timer: NodeJS.Timeout | null = null;
  let failing = false;

  const beat = async () => {
    try {
      const db = await link.get();
      await renewClaims(db, host, [...claims.values()], lease);
      for (const [session, spent] of reservations) await renewReservation(db, session, spent(), lease);
      await heardFrom(db, host, Date.now(), version());
      if (failing) logger?.info({ event: 'fleet_heartbeat_back' }, "the fleet's database answers the heartbeat again");
      failing = false;
    } catch (err) {
      // Mid-session, an outage is no reason to stop: the session goes on within what it holds.
      if (!failing) logger?.warn({ event: 'fleet_heartbeat_failed', err: said(err) }, `the fleet's heartbeat could not be written (the sessions go on within their reservations): ${said(err)}`);
      failing = true;
    }
  };
  const beating = () => {
    const want = switches.heartbeat !== false && (claims.size > 0 || reservations.size > 0);
    if (want && !timer) {
      timer = setInterval(() => void beat(), Math.max(250, Math.floor(lease / 4)));
      timer.unref();
    } else if (!want && timer) {
      clearInterval(timer);
      timer = null;
    }
  };

  // A hold's file is replaced by the agent's next one: only this host's latest hold matters.
  const spoolName = (s: Spooled) => {
    if (s.kind === 'settle') return `settle-${s.session}.json`;
    if (s.kind === 'end') return `end-${s.claim.agent}-${Date.parse(s.claim.slot)}-${s.claim.host}.json`;
    if (s.kind === 'hold') return `hold-${s.agent}.json`;
    return `release-${Date.parse(s.at)}.json`;
  };
  const spoolFile = (s: Spooled) => path.join(spoolDir(config.state_dir), spoolName(s));
  const apply = async (db: FleetDb, s: Spooled) => {
    if (s.kind === 'settle') await settleInFleet(db, s.session, s.spent_usd);
    else if (s.kind === 'end') await endClaim(db, s.claim, s.outcome);
    else if (s.kind === 'hold') await publishHold(db, host, s.agent, s.hold, s.at);
    else await publishRelease(db, host, s.agents, s.at);
  };
  // What earlier starts could not write, written now; a file that cannot be read is said and kept.
  const replay = async (db: FleetDb) => {
    const dir = spoolDir(config.state_dir);
    let names: string[];
    try {
      names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
    } catch {
      return;
    }
    for (const n of names) {
      const file = path.join(dir, n);
      let s: Spooled;
      try {
        s = JSON.parse(fs.readFileSync(file, 'utf8')) as Spooled;
      } catch (err) {
        logger?.warn({ event: 'fleet_spool_unreadable', file, err: said(err) }, `a spooled fleet write cannot be read, kept: ${file}: ${said(err)}`);
        continue;
      }
      await apply(db, s);
      fs.rmSync(file, { force: true });
      logger?.info({ event: 'fleet_spool_written', spooled: s }, `a fleet write an earlier start spooled is written: ${n}`);
    }
  };

  const link: FleetLink = {
    host,
    grace: config.fleet.grace,
    lease,
    maxConcurrent: config.fleet.max_concurrent ?? null,
    switches,
    get() {
      opened ??= (async () => {
        const target = fleetTarget(env)!;
        const m = await import('../../budget/fleet-db.js');
        const db = await m.connectFleet(target, { connectTimeoutMs: config.fleet.connect_timeout, redact });
        try {
          await m.checkSchema(db);
        } catch (err) {
          await db.close();
          throw err;
        }
        if (switches.spool !== false) await replay(db);
        // A dead host's claims and reservations, settled by whichever host looks first.
        for (const c of await settleCrashed(db)) {
          logger?.warn({ event: 'fleet_claim_crashed', claim: c }, `host ${c.host}'s claim on ${c.agent} (slot ${c.slot}${c.session ? `, session ${c.session}` : ''}) passed its lease without a heartbeat: settled crashed`);
        }
        await expireReservations(db);
        await heardFrom(db, host, Date.now(), version());
        return db;
      })();
      // A failed connection is tried again by the next use (the spool and the heartbeat retry).
      opened.catch(() => (opened = null));
      return opened;
    },
    async close() {
      claims.clear();
      reservations.clear();
      beating();
      const o = opened;
      opened = null;
      await o?.then((db) => db.close(), () => {});
    },
    holdClaim(c) {
      const key = `${c.agent}\0${c.slot}`;
      claims.set(key, c);
      beating();
      return () => {
        claims.delete(key);
        beating();
      };
    },
    holdReservation(session, spent) {
      reservations.set(session, spent);
      beating();
      return () => {
        reservations.delete(session);
        beating();
      };
    },
    async flush() {
      if (switches.spool === false) return;
      let waiting = false;
      try {
        waiting = fs.readdirSync(spoolDir(config.state_dir)).some((n) => n.endsWith('.json'));
      } catch {
        return;
      }
      if (!waiting) return;
      await link.get().then(() => {}, (err: unknown) => {
        logger?.warn({ event: 'fleet_spool_waits', err: said(err) }, `fleet writes wait in ${spoolDir(config.state_dir)}: the database cannot be reached yet: ${said(err)}`);
      });
    },
    async holds(now) {
      const f = await readFleetHolds(await link.get(), host, now);
      return switches.streak === false ? { ...f, rows: {} } : f;
    },
    async write(s) {
      try {
        await apply(await link.get(), s);
        return true;
      } catch (err) {
        if (switches.spool === false) throw err;
        const file = spoolFile(s);
        fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
        fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(s)}\n`, { mode: 0o600 });
        fs.renameSync(`${file}.tmp`, file);
        logger?.warn({ event: 'fleet_write_spooled', file, err: said(err) }, `the fleet's database did not take ${spooledWhat(s)}; spooled for the next start (${file}): ${said(err)}`);
        return false;
      }
    },
  };
  return link;
}

const spooledWhat = (s: Spooled) => s.kind === 'settle' ? `a settle of ${s.session}` : s.kind === 'end' ? "a claim's end" : s.kind === 'hold' ? `${s.agent}'s hold` : `the release of ${s.agents.join(', ')}`;

export type FireClaim = { claim: Claim; release(): Promise<void>; charged(session: string): Promise<void>; end(outcome: string): Promise<void> };

// The fire's claim on (agent, the tick's hour): this host's, held by the heartbeat until it is let
// go or ended; else why not (the host that has it, for the fire's row).
export async function claimForFire(link: FleetLink, agent: string, at: Date, timezone: string): Promise<{ lost: string } | FireClaim> {
  const db = await link.get();
  const slot = claimSlot(at, timezone).toISOString();
  const c: Claim = { agent, slot, host: link.host };
  const r = await claimFire(db, { ...c, leaseMs: link.lease }, { perAgent: link.switches.perAgent, maxConcurrent: link.maxConcurrent });
  if ('full' in r) return { lost: `fleet.max_concurrent reached: ${r.full.running} of ${r.full.max} sessions running across the fleet` };
  if (!r.won) {
    const mine = r.host === link.host ? ' (this one)' : '';
    return { lost: r.running ? `it is running on host ${r.host}${mine} (claimed for slot ${r.slot} at ${r.at})` : `its slot ${slot} was claimed by host ${r.host}${mine} at ${r.at}` };
  }
  const unhold = link.holdClaim(c);
  return {
    claim: c,
    async release() {
      unhold();
      await releaseFire(db, c);
    },
    charged: (session) => claimCharged(db, c, session).catch(() => {}),
    async end(outcome) {
      unhold();
      await link.write({ kind: 'end', claim: c, outcome });
    },
  };
}
