// doctor's look at the fleet's database (docs/fleet.md), only when the env file names
// NIGHTSHIFT_DATABASE_URL: it can be reached, and its schema is the version this nightshift
// writes. It reads; it never migrates.
import type { CheckFacts } from '../../report/embed.js';
import type { Config } from '../../config/schema.js';
import { FLEET_URL_VAR, fleetTarget } from '../../config/fleet-url.js';
import { fleetHost } from '../tick/fleet-link.js';

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
    db = await connectFleet(target, { connectTimeoutMs: config.fleet.connect_timeout, redact });
  } catch (err) {
    return fail((err as Error).message.replace(/; nothing was claimed.*$/, ''), `start PostgreSQL at ${target.where}, or correct ${FLEET_URL_VAR} in the env file; until then no session starts here`);
  }
  try {
    const v = await schemaVersion(db);
    const problem = schemaProblem(v, target.where);
    if (problem) return fail(problem, v < FLEET_SCHEMA_VERSION ? 'nightshift db migrate' : 'upgrade nightshift on this host');
    return { name: 'fleet', status: 'ok', detail: `${target.where}: reachable, schema version ${v}; this host is \`${fleetHost(config)}\``, fix: null };
  } catch (err) {
    return fail((err as Error).message, `see ${FLEET_URL_VAR}'s database at ${target.where}`);
  } finally {
    await db.close();
  }
}
