// `nightshift init [DIR] [--remote URL]`: a site to start from. A commented config with the
// defaults, one example agent, a vault (a new git repository, or a clone of --remote), the state and
// log folders, and nightshift.env at 0600 with the variables to fill. Nothing that exists is
// overwritten: it is kept and named. Ends with what to run next, as whom.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONFIG_DEFAULT_FILE, DEFAULTS } from '../../config/defaults.js';
import { ENV_FILE_NAME } from '../../config/env-file.js';
import { EXIT, NightshiftError, PermissionError, UsageError } from '../../core/errors.js';
import { accessProblem } from '../../core/file-access.js';
import { headBranch, refSha } from '../../vault/refs.js';
import { ROOT } from '../../daemon/systemd.js';
import { hiddenBy } from '../../daemon/unit-reach.js';
import type { BareContext } from '../context.js';
import { ensureSessionUser, shareWithGroup } from '../../daemon/session-user-setup.js';

export const EXAMPLE_AGENT = 'gardener';

const D = DEFAULTS;
// Pure: the config init writes. `git` is on only with a remote to sync with.
export function initConfig(o: { remote: boolean }): string {
  return `# nightshift config (nightshift init). Every field is optional: the values shown are the
# defaults. Relative paths resolve against this file's folder. Secrets go in ${ENV_FILE_NAME}, never here.
vault: ${D.vault}                 # the agents' working tree: the cwd of every session
sandbox: ${D.sandbox}                # the wall around every session (apt-get install bubblewrap); none to run unwalled
network: ${D.network}                 # hosts sessions may reach: none, [api.example.com, "*.example.org"] or open; an agent's own network: wins
state_dir: ${D.state_dir}             # the ledger, the memory database, locks
log_dir: ${D.log_dir}               # daily log files, transcripts
agents_dir: ${D.agents_dir}          # one <name>.md per agent

claude:
  command: ${D.claude.command}               # the Claude Code CLI (npm install -g @anthropic-ai/claude-code)
  model: ${D.claude.model}
  max_turns: ${D.claude.max_turns}
  timeout: ${D.claude.timeout}                 # wall-clock watchdog
  idle_timeout: ${D.claude.idle_timeout}            # no output for this long: the session is stalled
  permission_mode: ${D.claude.permission_mode}   # for agents without allowed_tools (refused by the CLI as root)

budget:
  timezone: ${D.budget.timezone}                # what "a day" means, and the time zone of dispatch rules
  max_sessions_per_day: ${D.budget.max_sessions_per_day}
  max_usd_per_day: ${D.budget.max_usd_per_day}                # held at the API proxy: within one request's input
  max_usd_per_session: ${D.budget.max_usd_per_session}         # a session reserves up to this of what is left
  min_session_usd: ${D.budget.min_session_usd}         # with less left than this, no session starts
  max_window_utilization: ${D.budget.max_window_utilization}   # a subscription's 5h/7d windows: the share unattended sessions may use
  # prices:                     # USD per million tokens, by model id or a part of one (a gateway's names)
  #   my-gateway-model: { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 }

# What a tick runs: the first rule that is due wins. days: sun..sat (or 0-6, 0 = sun), as a list or
# "mon,wed" or "mon-fri"; hours: 0-23 in budget.timezone. \`nightshift next\` says when each is due.
dispatch:
  - agent: ${EXAMPLE_AGENT}
    hours: 10

git:
  enabled: ${o.remote}               # ${o.remote ? 'pull before and push after every session' : 'true once the vault has a remote (git -C vault remote add origin URL)'}
  remote: ${D.git.remote}

daemon:                        # only for \`nightshift daemon\` (hosts without systemd timers)
  schedule: "${D.daemon.schedule}"      # cron, in budget.timezone

alerts:                        # what \`nightshift doctor\` fails on
  max_silence: ${D.alerts.max_silence}
  max_consecutive_failures: ${D.alerts.max_consecutive_failures}
`;
}

export const INIT_ENV = `# Secrets for nightshift: read by every nightshift command and by the systemd units
# (EnvironmentFile=). Keep it chmod 600. A variable already in the environment wins over this file.
# One of these two (the first that is set is used):
# ANTHROPIC_API_KEY=
# CLAUDE_CODE_OAUTH_TOKEN=
# Reports and alerts to a Discord channel (channel settings -> Integrations -> Webhooks):
# DISCORD_WEBHOOK_URL=
# And/or a JSON webhook or an ntfy topic URL (config webhook.format: json or ntfy):
# NIGHTSHIFT_WEBHOOK_URL=
# Optional: Gemini for the memory's embeddings and what a session leaves behind:
# GEMINI_API_KEY=
`;

// The site could not be made (the clone failed): exit 1, and nothing is left behind.
export class InitFailedError extends NightshiftError {
  override readonly code = 'INIT_FAILED';
  override readonly exitCode = EXIT.FAILED;
}

type InitIo = { out: (t: string) => void; cwd: string; env: NodeJS.ProcessEnv; user?: string | null };

// Pure: what to run next, as the user who owns the site (the units must run as it): the secret,
// doctor, a rehearsal (offline, in its own state), one real session, then the timer.
export function nextSteps(o: { dir: string; config: string; conf: string; user: string | null }): string[] {
  const owner = o.user ?? 'the user who ran init';
  const timer = o.user === 'root'
    ? `  5. the timer, as root: NIGHTSHIFT_CONFIG=${shell(o.config)} nightshift systemd install --user root (this site is root's; for a service user of its own, make the site as it instead: useradd --system --user-group --shell /usr/sbin/nologin nightshift, install -d -o nightshift -g nightshift /srv/nightshift, runuser -u nightshift -- nightshift init /srv/nightshift)`
    : `  5. the timer, as root: NIGHTSHIFT_CONFIG=${shell(o.config)} nightshift systemd install --user ${owner} (the units run as ${owner}, who owns this site; as root, run the steps above as it: runuser -u ${owner} -- nightshift ...)`;
  return [
    `Next (as ${owner}, the site's owner):`,
    `  1. put ANTHROPIC_API_KEY=... (or CLAUDE_CODE_OAUTH_TOKEN=...) in ${shell(path.join(o.dir, ENV_FILE_NAME))}`,
    `  2. nightshift doctor${o.conf}`,
    `  3. nightshift rehearse ${EXAMPLE_AGENT}${o.conf}   (offline, unbilled, in its own state: the site keeps no trace)`,
    `  4. nightshift run ${EXAMPLE_AGENT}${o.conf}`,
    timer,
  ];
}

// The user this runs as, by name (null: no passwd entry for the uid).
function whoAmI(): string | null {
  try {
    return os.userInfo().username;
  } catch {
    return null;
  }
}

const shell = (p: string) => (/^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`);

export async function initCommand(positionals: string[], flags: { remote?: string }, io: InitIo): Promise<number> {
  if (positionals.length > 1) throw new UsageError(`Expected \`nightshift init [DIR] [--remote URL]\`, got ${positionals.length} arguments`);
  const dir = path.resolve(io.cwd, positionals[0] ?? '.');
  // The first folder this made (undefined: it was there), to take back when the clone fails.
  let madeDir: string | undefined;
  try {
    madeDir = fs.mkdirSync(dir, { recursive: true });
  } catch (err) {
    // A folder in one of the system's (/srv): made for the user, never a chown of /srv itself.
    const denied = ['EACCES', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '') ? accessProblem(dir, 'site', { folder: true }) : null;
    if (denied) throw new PermissionError(denied.replace(' The file is not damaged; fix the access:', ' Fix:'), { cause: err });
    throw err;
  }
  const made: string[] = [];
  const kept: string[] = [];
  const warnings: string[] = [];
  // The vault first: a clone that fails (a wrong URL, no credentials) must leave no half site.
  const vault = path.join(dir, 'vault');
  if (fs.existsSync(vault)) kept.push(vault);
  else {
    const args = flags.remote ? ['clone', '--quiet', flags.remote, vault] : ['init', '--quiet', vault];
    const r = spawnSync('git', args, { encoding: 'utf8', env: { ...io.env, GIT_TERMINAL_PROMPT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    if (r.status !== 0) {
      // Nothing else is made yet: take back the folder a failed clone leaves, and the site's own.
      fs.rmSync(vault, { recursive: true, force: true });
      if (madeDir) fs.rmSync(madeDir, { recursive: true, force: true });
      throw new InitFailedError(`git ${args[0]} ${flags.remote ?? ''} failed: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}. Nothing was left behind; fix the URL or the credentials and run init again.`);
    }
    made.push(`${vault} (${flags.remote ? `a clone of ${flags.remote}` : 'a new git repository'})`);
    // An empty remote: the clone's branch is unborn, and the first session's push creates it.
    const head = headBranch(vault);
    if (flags.remote && head && !refSha(vault, `refs/heads/${head}`)) warnings.push(`note: ${flags.remote} is empty: the first session's push creates branch \`${head}\` there (set git.branch in ${CONFIG_DEFAULT_FILE} for another)`);
    // Run as root, the site's supervisor will be root: its sessions run as session_user, who
    // writes this vault by its group.
    if (process.getuid?.() === 0) {
      const u = ensureSessionUser({ session_user: DEFAULTS.session_user }, { make: true, pathEnv: io.env.PATH });
      made.push(...u.made);
      warnings.push(...u.warnings);
      if (u.user) {
        shareWithGroup(vault, u.user.gid);
        made.push(`gave ${vault} to group ${u.user.name} (setgid): root's sessions run as it and write there`);
      }
    }
  }
  // `wx`: never over a file that exists, even one made meanwhile.
  const write = (file: string, text: string, mode = 0o644) => {
    try {
      fs.writeFileSync(file, text, { flag: 'wx', mode });
      made.push(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      kept.push(file);
    }
  };
  const config = path.join(dir, CONFIG_DEFAULT_FILE);
  write(config, initConfig({ remote: !!flags.remote }));
  fs.mkdirSync(path.join(dir, 'prompts'), { recursive: true });
  write(path.join(dir, 'prompts', `${EXAMPLE_AGENT}.md`), fs.readFileSync(path.join(ROOT, 'prompts', `${EXAMPLE_AGENT}.md`), 'utf8'));
  write(path.join(dir, ENV_FILE_NAME), INIT_ENV, 0o600);
  for (const [sub, mode] of [['state', 0o700], ['logs', 0o755]] as const) {
    const p = path.join(dir, sub);
    if (fs.existsSync(p)) kept.push(p);
    else (fs.mkdirSync(p, { mode }), made.push(p));
  }
  const here = dir === io.cwd;
  const conf = here ? '' : ` --config ${shell(config)}`;
  // Under /tmp or /var/tmp the units' PrivateTmp= gives each tick an empty folder of its own:
  // the site works by hand and never under the timer.
  const hidden = hiddenBy(fs.realpathSync(dir));
  if (hidden) warnings.push(`warning: ${dir} is under ${hidden.dir}, which the systemd units' ${hidden.by} hides (each unit gets an empty ${hidden.dir} of its own): this site works by hand, never under the timer. For the timer, make it under /srv: nightshift init /srv/nightshift`);
  io.out([
    ...made.map((f) => `made  ${f}`),
    ...kept.map((f) => `kept  ${f} (exists; not changed)`),
    ...warnings,
    '',
    ...nextSteps({ dir, config, conf, user: io.user === undefined ? whoAmI() : io.user }),
  ].join('\n'));
  return EXIT.OK;
}

export const help = `Usage: nightshift init [DIR] [--remote URL]

Makes a site in DIR (default: here): nightshift.yaml with the defaults, commented; an example agent
(prompts/gardener.md) and a dispatch rule for it; the vault (vault/: a new git repository, or a
clone of --remote URL, then with git sync on); state/ (0700) and logs/; and nightshift.env (0600)
with the variables to fill, commented. A file or folder that exists is kept as it is and named.
Prints what to run next, as the user who owns the site (the units must run as it): fill
nightshift.env, nightshift doctor, nightshift rehearse gardener (offline, in its own state), nightshift
run gardener, and systemd install --user naming that user. Under /tmp or /var/tmp it warns: the
units' PrivateTmp= hides both, so the timer could never see the site (make it under /srv).`;

// Before any config or env file: init makes them.
export const stage = 'bare';

export async function run({ positionals, flags, io, deps }: BareContext): Promise<number> {
  return initCommand(positionals, { remote: flags.remote }, { out: io.out, cwd: deps.cwd, env: deps.env });
}
