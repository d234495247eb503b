// The fleet's database, named only by the env file's NIGHTSHIFT_DATABASE_URL (a secret: it may
// carry a password, so it is never in the config or a log line). Unset, the site is one host on
// its embedded SQLite, as ever. Pure: the URL read, and the words that may name it.
import { FleetSetupError } from '../core/errors.js';

export const FLEET_URL_VAR = 'NIGHTSHIFT_DATABASE_URL';

// url: what the client connects with; where: `host:port/database`, the only part said anywhere.
export type FleetTarget = { url: string; where: string };

// Null when the variable is unset or empty (no fleet); a value that is no PostgreSQL URL is refused.
export function fleetTarget(env: NodeJS.ProcessEnv): FleetTarget | null {
  const url = env[FLEET_URL_VAR]?.trim();
  if (!url) return null;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new FleetSetupError(`${FLEET_URL_VAR} is not a URL: expected \`postgres://USER:PASSWORD@HOST:5432/DATABASE\` in the env file`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new FleetSetupError(`${FLEET_URL_VAR} is a ${u.protocol.replace(/:$/, '')} URL: expected \`postgres://USER:PASSWORD@HOST:5432/DATABASE\` in the env file`);
  }
  if (!u.hostname) throw new FleetSetupError(`${FLEET_URL_VAR} names no host: expected \`postgres://USER:PASSWORD@HOST:5432/DATABASE\` in the env file`);
  const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || '(the user\'s database)';
  return { url, where: `${u.hostname}:${u.port || '5432'}/${db}` };
}
