// The fleet as any host sees it (docs/fleet.md), for `status`, the page and `fires --fleet`: the
// hosts as their heartbeats left them, the live claims (sessions running anywhere), the fleet's
// day. A read only: nothing is claimed, settled or heard. Without NIGHTSHIFT_DATABASE_URL, null
// and pg is never loaded (budget/fleet-db.ts is imported only past that check).
import { FleetUnavailableError } from '../../core/errors.js';
import { fleetTarget } from '../../config/fleet-url.js';
import type { Config } from '../../config/schema.js';
import type { FleetDb } from '../../budget/fleet-db.js';
import type { FleetHost } from '../../budget/fleet-hosts.js';
import type { ClaimRow } from '../../budget/fleet-claims.js';
import { dayOf } from '../../config/day.js';
import { fleetHost } from './fleet-link.js';

export type FleetLook = {
  // host:port/database: the only part of the URL said anywhere.
  database: string;
  this_host: string;
  // Why the fleet cannot be seen now (unreachable, a schema it does not know); null: it answered.
  error: string | null;
  hosts: FleetHost[];
  running: ClaimRow[];
  day: { date: string; sessions: number; cost_usd: number; reserved_usd: number } | null;
};

type Connect = (config: Pick<Config, 'fleet'>, env: NodeJS.ProcessEnv, redact: (t: string) => string) => Promise<FleetDb>;

// One connection for a look, its schema checked (a version this nightshift does not know is said,
// not read). Unreachable: FleetUnavailableError naming host:port/db. Each answer is waited for as
// long as the connection (fleet.connect_timeout): an operator's status, or the page, is never held
// by a database that stopped answering mid-look.
export const connectForLook: Connect = async (config, env, redact) => {
  const target = fleetTarget(env)!;
  const { connectFleet, checkSchema } = await import('../../budget/fleet-db.js');
  const db = await connectFleet(target, { connectTimeoutMs: config.fleet.connect_timeout, answerTimeoutMs: config.fleet.connect_timeout, redact });
  try {
    await checkSchema(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
};

// What an outage says in a look: the cause, without the tick's "nothing was claimed" tail.
export function lookError(err: unknown, redact: (t: string) => string): string {
  const m = String((err as Error)?.message ?? err);
  return redact(err instanceof FleetUnavailableError ? m.replace(/; nothing was claimed.*$/s, '') : m);
}

// Null without the URL. Never throws: an outage or a bad URL is `error`, and status goes on with
// this host's own state. `connect` is the seam for the redaction's control.
export async function fleetLook(config: Pick<Config, 'fleet' | 'budget'>, env: NodeJS.ProcessEnv, redact: (t: string) => string, at: Date, connect: Connect = connectForLook): Promise<FleetLook | null> {
  let database: string;
  try {
    const target = fleetTarget(env);
    if (!target) return null;
    database = target.where;
  } catch (err) {
    return { database: '(not a URL)', this_host: fleetHost(config), error: lookError(err, redact), hosts: [], running: [], day: null };
  }
  const base = { database, this_host: fleetHost(config) };
  let db: FleetDb;
  try {
    db = await connect(config, env, redact);
  } catch (err) {
    return { ...base, error: lookError(err, redact), hosts: [], running: [], day: null };
  }
  try {
    const date = dayOf(at, config.budget.timezone);
    const [{ fleetHosts }, { listClaims }, { fleetDayTotals }] = await Promise.all([import('../../budget/fleet-hosts.js'), import('../../budget/fleet-claims.js'), import('../../budget/fleet-reservations.js')]);
    const hosts = await fleetHosts(db, date);
    const running = await listClaims(db, { live: true });
    const t = await fleetDayTotals(db, date);
    return { ...base, error: null, hosts, running, day: { date, sessions: t.sessions, cost_usd: t.costUsd, reserved_usd: t.reservedUsd } };
  } catch (err) {
    return { ...base, error: lookError(err, redact), hosts: [], running: [], day: null };
  } finally {
    await db.close();
  }
}

// `fires --fleet`: every host's claims since `since`, newest first. Unlike the look, an outage
// throws (FleetUnavailableError, exit 69): the operator asked for the fleet's record.
export async function fleetFires(config: Pick<Config, 'fleet'>, env: NodeJS.ProcessEnv, redact: (t: string) => string, since: Date, agent?: string): Promise<ClaimRow[]> {
  const db = await connectForLook(config, env, redact);
  try {
    const { listClaims } = await import('../../budget/fleet-claims.js');
    return await listClaims(db, { since, agent });
  } finally {
    await db.close();
  }
}
