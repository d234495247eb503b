// `nightshift systemd print|install`: the units rendered with this install's paths. Both check
// first what would fail later: a calendar spec systemd cannot read or that reaches no rule, a
// service user that does not exist (no default: leaving --user out once meant User=root), and a
// CLI the units could not start (they get its folder on Environment=PATH=).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { Config } from '../../config/schema.js';
import { checkCalendar } from '../../daemon/schedule/calendar.js';
import { EXIT, UsageError } from '../../core/errors.js';
import { installUnits, makeWritablePaths, privateTmpWarnings, renderUnits, ROOT, SYSTEM_UNIT_DIRS, UNIT_DIR, unitPath, unitPathProblems, writeMonitorEnv } from '../../daemon/systemd.js';
import { unitReach } from '../../daemon/unit-reach.js';
import { shellWord } from '../../core/file-access.js';
import path from 'node:path';
import type { FullContext } from '../context.js';
import { ensureSessionUser, sessionUserWarnings, shareWithGroup } from '../../daemon/session-user-setup.js';

export type SystemdIo = { out: (t: string) => void; err: (t: string) => void; redact: (t: string) => string; env: NodeJS.ProcessEnv };
type Flags = { user?: string; 'on-calendar'?: string; prefix?: string };

// Whether the user exists for the system (NSS through getent, else /etc/passwd).
export function userExists(user: string, pathEnv: string | undefined): boolean {
  const r = spawnSync('getent', ['passwd', user], { stdio: 'ignore', env: { PATH: pathEnv || '/usr/bin:/bin' }, timeout: 10_000 });
  if (!r.error) return r.status === 0;
  try {
    return fs.readFileSync('/etc/passwd', 'utf8').split('\n').some((l) => l.split(':')[0] === user);
  } catch {
    return false;
  }
}

// Pure over the probes: what stops `install`, one line each.
export function installProblems(flags: Flags, probes: { userExists: (u: string) => boolean; calendar: (spec: string) => { ok: boolean | null; error?: string } }): string[] {
  const out: string[] = [];
  if (!flags.user) out.push('Expected --user NAME: the user the units run as (create one: useradd --system --user-group nightshift), or --user root explicitly');
  else if (flags.user !== 'root' && !probes.userExists(flags.user)) out.push(`Expected --user to name an existing user, got \`${flags.user}\`: create it first (useradd --system --user-group --shell /usr/sbin/nologin ${flags.user})`);
  if (flags['on-calendar'] !== undefined) {
    const c = probes.calendar(flags['on-calendar']);
    if (c.ok === false) out.push(`Expected --on-calendar to be a systemd calendar expression like \`hourly\` or \`*-*-* 06,18:00:00\` (see man systemd.time), got \`${flags['on-calendar']}\`: systemd-analyze says: ${c.error}`);
  }
  return out;
}

export async function systemdCommand(config: Config, positionals: string[], flags: Flags, io: SystemdIo): Promise<number> {
  const [action, ...rest] = positionals;
  if ((action !== 'print' && action !== 'install') || rest.length) throw new UsageError('Expected `nightshift systemd print|install --user NAME [--on-calendar SPEC] [--prefix DIR]`');
  const calendar = (spec: string) => checkCalendar(spec, io.env.PATH, 1);
  // print renders what install would write: the same --user, never a silent User=root.
  const problems = installProblems(flags, { userExists: (u) => userExists(u, io.env.PATH), calendar });
  const spec = flags['on-calendar'];
  if (spec !== undefined && !problems.length) {
    // As doctor checks daemon.schedule: a timer that never reaches a rule stops it silently.
    const { calendarReach } = await import('../../daemon/health/doctor-setup.js');
    const reach = calendarReach(config, `--on-calendar ${spec}`, [spec], io.env.PATH);
    problems.push(...reach.never.map((l) => `${l}: give --on-calendar a spec that reaches it (hourly reaches every rule), or change the rule in ${config.file}`));
  }
  const node = process.execPath;
  const run = unitPath(config.claude.command, io.env.PATH ?? '', node);
  if (run.problem) problems.push(run.problem);
  // A space is quoted in the units; what no quoting carries is refused.
  problems.push(...unitPathProblems([
    ['vault', config.vault], ['state_dir', config.state_dir], ['log_dir', config.log_dir], ['git.lock_file', config.git.lock_file], ['the config file', config.file],
    ['node', node], ['nightshift', ROOT], ...run.path.split(':').map((d): [string, string] => ['a folder of the units\' PATH', d]),
  ]));
  const prefix = path.resolve(flags.prefix ?? UNIT_DIR);
  const staged = action === 'print' || !SYSTEM_UNIT_DIRS.includes(prefix);
  // What the units' ExecStart= names and the site they write, as their user under their sandbox:
  // refused for a real install; for print and staging (units for a host set up later), warned.
  const reach = flags.user && !problems.length ? unitReach(config, flags.user, node, io.env.PATH ?? '') : [];
  if (!staged) problems.push(...reach);
  if (problems.length) throw new UsageError(`systemd ${action}: nothing ${action === 'print' ? 'rendered' : 'written'}.\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  const { loadAgents } = await import('../../config/agents.js');
  const units = renderUnits(config, loadAgents(config), { user: flags.user, onCalendar: spec, node, path: run.path, unitDir: staged ? UNIT_DIR : prefix });
  for (const w of [...privateTmpWarnings(config), ...reach.map((r) => `warning: ${r}`)]) io.err(`${io.redact(w)}\n`);
  const remote = await remoteWarning(config);
  if (remote) io.err(`${io.redact(remote)}\n`);
  if (action === 'print') {
    io.out(units.map((u) => `# ---- ${u.name} ----\n${u.text}`).join('\n'));
    return EXIT.OK;
  }
  const files = installUnits(units, prefix);
  // The alarm's own settings, 0600 beside the env file (a real install only: staging writes no site files).
  const monitorEnv = staged ? null : writeMonitorEnv(config);
  // Staging elsewhere (a --prefix systemd does not read) makes no folders; the real install makes the missing ones.
  const site = staged ? { made: [], warnings: [] } : makeWritablePaths(config, flags.user);
  // Units for root run each session as session_user: made here, unless only staging.
  const session = flags.user === 'root' && config.sandbox === 'bwrap' ? rootSessions(config, !staged, site.made, io.env.PATH) : { made: [], warnings: [] };
  for (const w of [...site.warnings, ...session.warnings]) io.err(`${io.redact(w)}\n`);
  const enable = 'systemctl daemon-reload && systemctl enable --now nightshift.timer nightshift-watch.timer';
  const next = staged
    ? [`Staged in ${prefix}, which systemd does not read. To use them on the host they are for:`, `  install -m 0644 ${files.map(shellWord).join(' ')} /etc/systemd/system/`, `  ${enable}`,
      `(the vault, state and log folders${flags.user === 'root' ? ' and the session user' : ''} are not made when staging: nightshift systemd install --user ${flags.user} there makes them)`]
    : ['Now run:', `  ${enable}`, '(or nightshift-daemon.service instead of the timer, not both)'];
  io.out([...files.map((f) => `wrote ${f}`), ...(monitorEnv ? [`wrote ${monitorEnv} (0600)`] : []), ...site.made.map((d) => `made ${d}`), ...session.made].join('\n'));
  const dry = staged ? null : dryTick(prefix, io);
  if (dry) io.out(dry.text);
  io.out(['', ...next].join('\n'));
  return dry && !dry.ok ? EXIT.FAILED : EXIT.OK;
}

// After a real install: a dry tick under the units (nightshift-check.service loads the config and
// the agents as the units' user, in their sandbox, and exits), when systemd runs here.
function dryTick(prefix: string, io: SystemdIo): { ok: boolean; text: string } {
  const said = (ok: boolean, text: string) => ({ ok, text });
  if (!fs.existsSync('/run/systemd/system')) return said(true, 'systemd is not running here (no /run/systemd/system): the units were not tried; on the host, run: systemctl daemon-reload && systemctl start nightshift-check.service');
  const sc = (args: string[]) => spawnSync('systemctl', args, { encoding: 'utf8', timeout: 120_000, env: { PATH: io.env.PATH || '/usr/bin:/bin' } });
  const reload = sc(['daemon-reload']);
  if (reload.status !== 0) return said(false, `systemctl daemon-reload failed (${(reload.stderr || String(reload.error ?? '')).trim()}): the units were not tried`);
  const started = sc(['start', 'nightshift-check.service']);
  const tail = spawnSync('journalctl', ['-u', 'nightshift-check.service', '-n', '8', '-o', 'cat', '--no-pager', '-q'], { encoding: 'utf8', timeout: 10_000, env: { PATH: io.env.PATH || '/usr/bin:/bin' } }).stdout?.trim() ?? '';
  if (started.status === 0) return said(true, `dry tick under the units (nightshift-check.service in ${prefix}): ok, the units start nightshift and it loads the config and the agents`);
  return said(false, io.redact(`dry tick under the units (nightshift-check.service in ${prefix}) FAILED: the units cannot run nightshift as installed; fix this before enabling them:\n${(started.stderr ?? '').trim()}\n${tail}`));
}

// The session user for units run as root: made where missing, the vault given to its group when
// install just made it (empty), otherwise named with the fix.
function rootSessions(config: Config, make: boolean, madeDirs: string[], pathEnv: string | undefined): { made: string[]; warnings: string[] } {
  const u = ensureSessionUser(config, { make, pathEnv });
  if (!u.user) return u;
  const made = [...u.made];
  for (const dir of [config.vault, ...config.hooks.extra_dirs]) {
    if (madeDirs.includes(dir) && fs.readdirSync(dir).length === 0) {
      shareWithGroup(dir, u.user.gid);
      made.push(`gave ${dir} to group ${u.user.name} (setgid): its sessions write there`);
    }
  }
  return { made, warnings: [...u.warnings, ...sessionUserWarnings(config, u.user)] };
}

export const help = `Usage: nightshift systemd print|install --user NAME [--on-calendar SPEC] [--prefix DIR] [--config PATH]

Renders the units with this install's paths:
  nightshift.service           one tick (Type=oneshot), as --user
  nightshift.timer             fires it on --on-calendar (default hourly), Persistent=true
  nightshift-daemon.service    the alternative: nightshift daemon on daemon.schedule (not both)
  nightshift-alert@.service    OnFailure=: nightshift alert --unit %i, through nightshift-alert.sh
  nightshift-watch.service     nightshift doctor --alert, through nightshift-alert.sh
  nightshift-watch.timer       fires it hourly at :17
  nightshift-check.service     the dry tick: loads the config and the agents, runs nothing
  nightshift-alert.sh          sh and curl: when nightshift itself cannot run (node, the bundle),
                               posts a plain alarm to DISCORD_WEBHOOK_URL and pings
                               monitor.ping_url/fail
Every unit logs as SyslogIdentifier=nightshift (journalctl -t nightshift). The units run with
Environment=PATH= holding the folder claude.command is found in on this shell's PATH and node's:
a CLI not found, or under /tmp (hidden by PrivateTmp=), renders nothing (exit 64).
Before writing, install checks as --user under the units' sandbox: node, nightshift's bin and the
CLI must be outside /tmp and /var/tmp (PrivateTmp= hides both) and reachable by --user, and the
config folder, state_dir, log_dir and vault must belong to --user (the config folder may be
root's); else it refuses (exit 64), writes nothing, and names the fix. print and a staging
--prefix only warn. doctor --prefix DIR checks the units installed there the same way.
install writes them to --prefix (default /etc/systemd/system), writes nightshift-monitor.env
(0600, beside the env file: monitor.ping_url and discord.api_base for nightshift-alert.sh),
makes the missing vault, state and log folders (owned by --user), then, when systemd runs here,
starts nightshift-check.service once and prints its result (exit 1 when it failed), and prints
the systemctl line that enables the timers.
A --prefix systemd does not read only stages them: the line printed copies them into place first.
With --user root, each session runs as session_user (default nightshift-session), never root:
install makes that user where missing (useradd --system --no-create-home --shell
/usr/sbin/nologin) and gives a vault it made to its group; an existing vault that user cannot
write is named with the command that fixes it.
  --user NAME         required: an existing user (or root, explicitly)
  --on-calendar SPEC  a systemd calendar expression, checked with systemd-analyze calendar where
                      it is installed (usage error 64 when systemd would refuse it, or when a
                      dispatch rule could never fire under it)`;

export const stage = 'full';
// `systemd install` runs as root: it must not make the log folder, or today's file, root's.
export const noLogFile = true;

export async function run({ config, positionals, flags, io, env, deps }: FullContext): Promise<number> {
  return systemdCommand(config, positionals, flags, { out: io.out, err: deps.stderr, redact: io.redact, env });
}

// The vault's remote, when git sync is on and it is a path the units could not write.
async function remoteWarning(config: Config): Promise<string | null> {
  if (!config.git.enabled) return null;
  const [{ gitIn }, { pathRemoteWarning }] = await Promise.all([import('../../vault/git-sync.js'), import('../../daemon/systemd.js')]);
  const r = await gitIn(config.vault, { timeoutMs: 10_000 })(['remote', 'get-url', config.git.remote]).catch(() => null);
  return r?.ok ? pathRemoteWarning(config, config.git.remote, r.stdout) : null;
}
