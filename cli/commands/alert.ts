// `nightshift alert --unit NAME`: what OnFailure= runs; works with a broken or missing config.
import { logLevel } from '../log-level.js';
import type { EnvContext } from '../context.js';

export const help = `Usage: nightshift alert --unit NAME [--config PATH]

Reports that a systemd unit failed: an error event in journald and the daily log, and an embed
to Discord (DISCORD_WEBHOOK_URL; through the outbox). Used by OnFailure=. Works with a broken or
missing config: what validates is used, defaults for the rest, and the embed names what could
not be read. systemd's MONITOR_SERVICE_RESULT, MONITOR_EXIT_CODE, MONITOR_EXIT_STATUS and
MONITOR_INVOCATION_ID are included when set; so are the unit's last journal lines when readable.
An env file others may read is warned of, not refused: the failure path must still report the
failure (systemd has put its variables in the environment already).
Exits 0 when the alert was sent or queued (or Discord is not configured), 1 when it was neither.`;

export const stage = 'env';
// The alarm must not share a failure it can only report: an insecure env file is warned of.
export const lenientEnvFile = true;

export async function run({ configFile, flags, io, env, envFile, journal }: EnvContext): Promise<number> {
  const { alertCommand } = await import('./health.js');
  return alertCommand(configFile, flags.unit, { out: io.out, redact: io.redact, env, envFile, now: () => new Date(), level: logLevel(env.NIGHTSHIFT_LOG_LEVEL).level, journal });
}
