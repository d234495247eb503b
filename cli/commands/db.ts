// `nightshift db migrate`: brings the fleet's PostgreSQL (NIGHTSHIFT_DATABASE_URL in the env file)
// up to the schema this nightshift writes. Run once per upgrade, from any one host; a host never
// migrates on its own, and refuses to run on a version it does not know.
import { EXIT, FleetSetupError, UsageError } from '../../core/errors.js';
import { didYouMean } from '../../core/suggest.js';
import { FLEET_URL_VAR, fleetTarget } from '../../config/fleet-url.js';
import type { FullContext } from '../context.js';

export const help = `Usage: nightshift db migrate [--json] [--config PATH] [--environment-file PATH]

Applies the fleet database's missing schema versions (docs/fleet.md), each in a transaction of its
own under an advisory lock, so two hosts migrating at once take turns. The database is the one
${FLEET_URL_VAR} in the env file names (never the config: it may carry a password). Without it the
site runs on its embedded SQLite, which needs no migration. A database at a version newer than
this nightshift knows is refused and left as it is: upgrade nightshift on this host.
--json: {database, from, to, applied: [{version, what}]} (database: host:port/name, no password)

Exit codes: 0 migrated (or already current), 69 the database cannot be reached, 78 no
${FLEET_URL_VAR}, or a database newer than this nightshift.`;

export const stage = 'full';

export async function run({ config, positionals, flags, io, env }: FullContext): Promise<number> {
  const [verb] = positionals;
  if (verb !== 'migrate') throw new UsageError(`Expected \`nightshift db migrate\`, got \`db ${verb ?? ''}\`.${verb ? didYouMean(verb, ['migrate']) : ''}`);
  const target = fleetTarget(env);
  if (!target) throw new FleetSetupError(`${FLEET_URL_VAR} is not set in the env file: this site runs on its embedded SQLite, which needs no migration (docs/fleet.md sets up a fleet)`);
  const { connectFleet, migrate } = await import('../../budget/fleet-db.js');
  const db = await connectFleet(target, { connectTimeoutMs: config.fleet.connect_timeout, redact: io.redact });
  try {
    const m = await migrate(db);
    if (flags.json) io.out(JSON.stringify({ database: m.where, from: m.from, to: m.to, applied: m.applied }));
    else io.out(m.applied.length
      ? `${m.where}: schema version ${m.from} -> ${m.to} (${m.applied.map((a) => `${a.version}: ${a.what}`).join('; ')})`
      : `${m.where}: schema version ${m.to}, current: nothing to apply`);
    return EXIT.OK;
  } finally {
    await db.close();
  }
}
