// A start's link to the fleet (docs/fleet.md), made only when the env file names
// NIGHTSHIFT_DATABASE_URL: connected at its first use (a tick with nothing due never connects),
// its schema checked then, closed at the start's end. Unreachable, every use throws
// FleetUnavailableError: the start fails closed.
import os from 'node:os';
import { FLEET_URL_VAR, fleetTarget } from '../../config/fleet-url.js';
import type { Config } from '../../config/schema.js';
import type { FleetDb } from '../../budget/fleet-db.js';
import { claimFire, releaseFire } from '../../budget/fleet-claims.js';
import { claimSlot } from '../schedule/claim-slot.js';

export type FleetLink = { host: string; grace: number; get(): Promise<FleetDb>; close(): Promise<void> };

// This host's name in the fleet.
export function fleetHost(config: Pick<Config, 'fleet'>): string {
  return config.fleet.host ?? os.hostname();
}

// Null without NIGHTSHIFT_DATABASE_URL: the embedded SQLite alone, as ever. A URL that is no
// PostgreSQL's is refused at the first use, once the fire's row is written.
export function fleetLink(config: Pick<Config, 'fleet'>, env: NodeJS.ProcessEnv, redact: (t: string) => string): FleetLink | null {
  if (!env[FLEET_URL_VAR]?.trim()) return null;
  let opened: Promise<FleetDb> | null = null;
  return {
    host: fleetHost(config),
    grace: config.fleet.grace,
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
        return db;
      })();
      return opened;
    },
    async close() {
      const o = opened;
      opened = null;
      await o?.then((db) => db.close(), () => {});
    },
  };
}

// The fire's claim on (agent, the tick's hour): null when this host has it, else why not (the
// host that has it, for the fire's row). `release` lets it go when no session was charged.
export async function claimForFire(link: FleetLink, agent: string, at: Date, timezone: string): Promise<{ lost: string } | { release: () => Promise<void> }> {
  const db = await link.get();
  const slot = claimSlot(at, timezone).toISOString();
  const c = { agent, slot, host: link.host };
  const r = await claimFire(db, c);
  if (r.won) return { release: () => releaseFire(db, c) };
  return { lost: `its slot ${slot} was claimed by host ${r.host}${r.host === link.host ? ' (this one)' : ''} at ${r.at}` };
}
