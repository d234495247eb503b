// doctor's look at the fleet's database (docs/fleet.md), only when the env file names
// NIGHTSHIFT_DATABASE_URL: it can be reached, and its schema is the version this nightshift
// writes. It reads; it never migrates.
import type { CheckFacts } from '../../report/embed.js';
import type { Config } from '../../config/schema.js';
import { FLEET_URL_VAR, fleetTarget } from '../../config/fleet-url.js';
import { fleetHost } from '../tick/fleet-link.js';

// Clocks further apart than this are said: a slot is named by each host's own clock, and a
// session's start and its lease by the database's.
export const MAX_SKEW_MS = 2000;

// Pure: the hosts whose clock is off the database's by more than MAX_SKEW_MS (this one measured
// now, the others as their last heartbeat found them), in words; null: none.
export function skewProblem(own: { host: string; skewMs: number }, others: Array<{ host: string; skew_ms: number }>): string | null {
  const off = [{ host: own.host, skew_ms: own.skewMs }, ...others.filter((o) => o.host !== own.host)].filter((h) => Math.abs(h.skew_ms) > MAX_SKEW_MS);
  if (!off.length) return null;
  return `clock skew against the database: ${off.map((h) => `${h.host} ${h.skew_ms > 0 ? '+' : ''}${(h.skew_ms / 1000).toFixed(1)} s`).join(', ')} (more than ${MAX_SKEW_MS / 1000} s)`;
}

export async function fleetCheck(config: Pick<Config, 'fleet'>, env: NodeJS.ProcessEnv, redact: (t: string) => string): Promise<CheckFacts | null> {
  if (!env[FLEET_URL_VAR]?.trim()) return null;
  const fail = (detail: string, fix: string): CheckFacts => ({ name: 'fleet', status: 'fail', detail: redact(detail), fix });
  let target;
  try {
    target = fleetTarget(env)!;
  } catch (err) {
    return fail((err as Error).message, `set ${FLEET_URL_VAR} to postgres://USER:PASSWORD@HOST:5432/DATABASE in the env file`);
  }
  const { connectFleet, schemaVersion, schemaProblem, FLEET_SCHEMA_VERSION } = await import('../../budget/fleet-db.js');
  let db;
  try {
    // A check answers or says why within its bound: each answer is waited for as long as the connection.
    db = await connectFleet(target, { connectTimeoutMs: config.fleet.connect_timeout, answerTimeoutMs: config.fleet.connect_timeout, redact });
  } catch (err) {
    return fail((err as Error).message.replace(/; nothing was claimed.*$/, ''), `start PostgreSQL at ${target.where}, or correct ${FLEET_URL_VAR} in the env file; until then no session starts here`);
  }
  try {
    const v = await schemaVersion(db);
    const problem = schemaProblem(v, target.where);
    if (problem) return fail(problem, v < FLEET_SCHEMA_VERSION ? 'nightshift db migrate' : 'upgrade nightshift on this host');
    const host = fleetHost(config);
    const { clockSkewMs, fleetHosts } = await import('../../budget/fleet-hosts.js');
    const own = await clockSkewMs(db);
    const hosts = await fleetHosts(db, new Date().toISOString().slice(0, 10));
    const detail = `${target.where}: reachable, schema version ${v}; this host is \`${host}\`; hosts seen: ${hosts.length ? hosts.map((h) => h.host).join(', ') : 'none yet'}`;
    const skew = skewProblem({ host, skewMs: own.skewMs }, hosts);
    if (skew) return { name: 'fleet', status: 'warn', detail: redact(`${detail}; ${skew}`), fix: 'keep every host\'s clock synchronised (systemd-timesyncd or chrony) with the database\'s' };
    return { name: 'fleet', status: 'ok', detail, fix: null };
  } catch (err) {
    return fail((err as Error).message, `see ${FLEET_URL_VAR}'s database at ${target.where}`);
  } finally {
    await db.close();
  }
}
