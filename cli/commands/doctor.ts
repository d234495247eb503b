// `nightshift doctor [--fix] [--alert]`: works with a broken or missing config (health.ts reads it
// leniently), and reads the env file leniently too: a bad env file is one of its findings.
import path from 'node:path';
import { logLevel } from '../log-level.js';
import type { EnvContext } from '../context.js';

export const help = `Usage: nightshift doctor [--json] [--fix] [--alert] [--prefix DIR] [--config PATH]

Checks, each ok, WARN or FAIL with a one-line fix: config, env (the env file: its mode, its lines),
credential (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, from the environment or the env file),
api (the key is tried once on the API's token counter, which is not billed: a refused key fails),
agents, permission (as root the CLI refuses bypassPermissions for agents without allowed_tools),
cli (claude --version), unit cli (the installed nightshift.service finds it on its own PATH), wall
cli (the CLI is not under /tmp, which the wall hides), sandbox (a real bwrap sandbox starts), access (state_dir, log_dir, the vault,
the ledger and the memory database are writable by this user: else who owns them and the chown),
ledger and memory (integrity; never created), vault (a git work tree git does not refuse as of
"dubious ownership") and remote (git ls-remote; an empty one with the branch the first push makes), run lock and git lock (stale: the owner is gone),
schedule (a dispatch rule that daemon.schedule or the installed nightshift.timer can never fire),
discord (the webhook answers) and outbox (reports waiting), silence (the last ok session is younger
than alerts.max_silence) and failures (fewer than alerts.max_consecutive_failures in a row). Sends
what the outbox holds first, like every start. Works with a broken or missing config (the config
check fails and names the problems).
  --fix     first do the safe fixes and say what was done: make a missing state_dir (0700) and
            log_dir, chmod 600 the env file, chmod 700 state_dir
  --alert   when a check fails, post the doctor's embed to Discord (through the outbox)
  --prefix  where the units are installed (default /etc/systemd/system): the unit cli and
            schedule checks read nightshift.service and nightshift.timer there
  --json    {ok, config, checks: [{name, status, detail, fix}], alert, fixed (with --fix)}
Exits 1 when a check fails, else 0.`;

export const stage = 'env';
export const lenientEnvFile = true;

export async function run({ configFile, flags, io, env, envFile, journal, deps }: EnvContext): Promise<number> {
  const { doctorCommand } = await import('./health.js');
  // At a terminal, short human log lines, as every other command writes them (cli/main.ts).
  const human = deps.stderrIsTTY && !journal && !flags.json ? { color: !env.NO_COLOR } : undefined;
  const tableAtTerminal = !!deps.stdoutIsTTY && !flags.json;
  // The units installed in --prefix (default /etc/systemd/system), as next and status read them.
  const timerFile = flags.prefix === undefined ? undefined : path.join(path.resolve(flags.prefix), 'nightshift.timer');
  return doctorCommand(configFile, flags, { out: io.out, redact: io.redact, env, envFile, now: () => new Date(), level: logLevel(env.NIGHTSHIFT_LOG_LEVEL).level, journal, human, tableAtTerminal, timerFile });
}
