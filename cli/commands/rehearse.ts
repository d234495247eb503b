// `nightshift rehearse AGENT`: one session of a real site's agent, with the real CLI in the real
// wall, against the loopback imitation of the Anthropic API, in state of its own
// (<state_dir>/rehearsal/site: ledger, fires, memory, logs, a clone of the vault and a throwaway
// remote). The site's own ledger, day count, memory, log, vault and remote are never opened.
// `--serve` only serves the imitation, for a CLI or a test of one's own.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { ConfigError, EXIT, LockedError, NightshiftError, PermissionError, UsageError } from '../../core/errors.js';
import type { Config } from '../../config/schema.js';
import { rehearsalConfig, rehearsalEnv, rehearsalPaths, REHEARSAL_KEY_PREFIX } from '../../config/rehearsal.js';
import { sessionConfig } from '../../config/rules.js';
import { runDeps, type EnvContext } from '../context.js';
import { EXIT_CODES_HELP } from '../help.js';
import { logLevel } from '../log-level.js';
import { withStopSignal } from '../stop-signal.js';
import { refusal } from './run.js';
import { printRecord } from './sessions.js';
import { noun } from '../../core/words.js';

export const help = `Usage: nightshift rehearse <agent> [--json] [--config PATH]
       nightshift rehearse --serve [--port N] [--json]

Rehearses the site offline: one session of <agent> with the real CLI in the real wall, against an
imitation of the Anthropic Messages API on 127.0.0.1 (a prompt gets a short text answer; one with
SCENARIO=<name> picks a test scenario), nothing billed. It runs in state of its own, made anew
each time under <state_dir>/rehearsal/site and kept until the next: its own ledger, fires, memory,
logs and transcript, a clone of the vault's commits and a throwaway remote its push goes to. The
site's ledger and day count, memory, log, vault and remote are never opened; nothing is reported
to Discord, no ping is sent, no env file is changed. Its limits are the site's, against its own
empty ledger. Run it as the site's owner, as its sessions run: root in a site another user owns is
refused (77) with the runuser command, before anything is made.

  --json    print one object: the session record as \`run --json\` prints it, and \`rehearsal\`
            (dir, state_dir, log_dir, vault, remote, api_requests); refused, the refusal object

--serve only serves the imitation until Ctrl-C (an OS-chosen port, or --port) and prints its URL and
a key made for this run (any other gets a 401), for a CLI or a test of your own; with --json, one
object: base_url, api_key. A site whose env file holds that key (${REHEARSAL_KEY_PREFIX}...) has its
sessions refused (exit 78) and fails doctor: they would write the imitation's answers into it.

${EXIT_CODES_HELP}`;

// The config is read here (the env file by main): --serve needs no site.
export const stage = 'env';

const STOPS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function run(c: EnvContext): Promise<number> {
  const { flags, positionals } = c;
  if (flags.serve) {
    if (positionals.length) throw new UsageError(`Expected \`nightshift rehearse --serve\` without an agent, got \`${positionals[0]}\``);
    return serve(c);
  }
  if (flags.port !== undefined) throw new UsageError('Expected --port only with --serve: a rehearsal of an agent picks its own port');
  if (positionals.length !== 1) throw new UsageError('Expected `nightshift rehearse <agent>` (a session in state of its own), or `nightshift rehearse --serve`. See `nightshift rehearse --help`.');
  try {
    return await rehearse(c, positionals[0]);
  } catch (err) {
    // Refused (an unknown agent, another rehearsal, a limit): --json still prints one object.
    if (flags.json && err instanceof NightshiftError && err.exitCode !== EXIT.INTERNAL) c.io.out(JSON.stringify(refusal(positionals[0], err)));
    throw err;
  }
}

async function rehearse({ flags, io, env, configFile, journal, deps }: EnvContext, name: string): Promise<number> {
  const [{ loadConfig }, { loadAgent }, { createLogger }, { runAgent }, { exitCodeOf }, { startFakeApi }, { makeRehearsalSite }, { acquireLock, lockOwner }] = await Promise.all([
    import('../../config/config.js'), import('../../config/agents.js'), import('../../logs/logger.js'), import('../../daemon/tick/run.js'),
    import('../../daemon/tick/supervise.js'), import('../../rehearsal/fake-api.js'), import('../../rehearsal/site.js'), import('../../core/lock.js'),
  ]);
  const site = loadConfig(configFile);
  const agent = loadAgent(site, name);
  // Root in a site another user owns: its rehearsal would wall the session as session_user (not as
  // the site's sessions run), open state_dir to that user's group and leave root's files under it,
  // which the owner's next rehearsal cannot remove. Refused before anything is made.
  if (process.getuid?.() === 0) {
    const { siteOwner, foreignSite } = await import('../../config/session-user.js');
    const owner = siteOwner(site, null);
    if (owner) throw new PermissionError(`Refused: nightshift rehearse runs as root in a site that is not root's: ${foreignSite(owner)}. Nothing was made or changed.`);
  }
  // The agent's own vault (vaults.<agent>) is the one its rehearsal copies.
  const own = sessionConfig(site, name);
  await refuseNoRepo(own);
  const p = rehearsalPaths(site);
  fs.mkdirSync(p.root, { recursive: true, mode: 0o700 });
  // One rehearsal at a time: the next one remakes the folder.
  const lock = await acquireLock(p.lock, { timeoutMs: 0, purpose: 'rehearsal' });
  if (!lock) {
    const owner = lockOwner(p.lock);
    throw new LockedError(`Refused: another rehearsal of this site is running${owner ? ` (pid ${owner.pid} since ${owner.since})` : ''}`);
  }
  try {
    const vault = makeRehearsalSite(own, p, env);
    const made = rehearsalConfig(site, p);
    // A copy has no git (the site's was untrusted, or no plain folder): none runs in it either.
    const config = vault === 'clone' ? made : { ...made, git: { ...made.git, enabled: false } };
    const level = logLevel(env.NIGHTSHIFT_LOG_LEVEL);
    const tty = !!deps.stderrIsTTY && !journal && !flags.json;
    // Its log lines go to its own log folder, never the site's.
    const logger = createLogger({ redact: io.redact, logDir: config.log_dir, timezone: config.budget.timezone, level: level.level, journal, human: tty ? { color: !env.NO_COLOR, live: null } : undefined });
    const key = `${REHEARSAL_KEY_PREFIX}${randomBytes(12).toString('hex')}`;
    const api = await startFakeApi({ keys: [key] });
    const info = () => ({ dir: p.site, state_dir: config.state_dir, log_dir: config.log_dir, vault: config.vault, remote: vault === 'clone' ? p.remote : null, api_requests: api.requests.length });
    try {
      logger.info({ event: 'rehearsal', dir: p.site, vault, api: api.url }, `rehearsing ${name} in ${p.site} (vault: ${vault === 'clone' ? "a clone of the vault's commits, pushing to a throwaway remote" : vault === 'copy' ? 'a copy of the vault' : 'empty'}) against the API imitation at ${api.url}: nothing reaches the site`);
      const r = await withStopSignal(logger, 'ending the rehearsal', (signal) => runAgent(config, agent, { force: false }, runDeps(io, logger, rehearsalEnv(env, { url: api.url, key }), signal)));
      if (flags.json) io.out(JSON.stringify({ ...r.session, rehearsal: info() }));
      else {
        printRecord(io, r.session, false);
        io.out(`rehearsal ${p.site} (its ledger, memory, logs and vault; the site itself is untouched)`);
      }
      return exitCodeOf(r);
    } finally {
      await api.close();
    }
  } finally {
    await lock.release();
  }
}

// git.enabled on a vault that is no repository: refused as `run` refuses it (exit 78), before the
// rehearsal's site is made, naming the site's vault, not the rehearsal's copy.
async function refuseNoRepo(site: Config): Promise<void> {
  const [{ untrustedGitMarker }, { gitIn, notARepoProblem }, { sessionUserFor }] = await Promise.all([
    import('../../vault/git-guard.js'), import('../../vault/git-sync.js'), import('../../config/session-user.js'),
  ]);
  if (!site.git.enabled || fs.existsSync(untrustedGitMarker(site.state_dir))) return;
  const git = gitIn(site.vault, { timeoutMs: Math.min(site.git.timeout, 10_000), sessionUid: sessionUserFor(site).user?.uid ?? null });
  const inside = await git(['rev-parse', '--is-inside-work-tree']);
  if (inside.stdout === 'true') return;
  const p = notARepoProblem(site, inside.stderr);
  throw new ConfigError(site.file, [`git.enabled: ${p.detail}; nothing was rehearsed. Fix: ${p.fix}`]);
}

async function serve({ flags, io, deps }: EnvContext): Promise<number> {
  const port = flags.port === undefined ? 0 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`Expected --port as a port number 0-65535, got \`${flags.port}\``);
  const { startFakeApi } = await import('../../rehearsal/fake-api.js');
  const key = `${REHEARSAL_KEY_PREFIX}${randomBytes(12).toString('hex')}`;
  const api = await startFakeApi({ keys: [key], port }).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`Expected a free port, got ${port}: ${err.code ?? err.message}`);
  });
  io.out(flags.json ? JSON.stringify({ base_url: api.url, api_key: key }) : [
    `The API imitation listens on ${api.url} (loopback only; nothing is billed), for a CLI or a test of your own:`,
    `ANTHROPIC_BASE_URL=${api.url}`,
    `ANTHROPIC_API_KEY=${key}`,
    'A site rehearses with `nightshift rehearse <agent>` instead (its sessions refuse this key). Ctrl-C stops it.',
  ].join('\n'));
  let stop: (s: NodeJS.Signals) => void = () => {};
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    stop = resolve;
    for (const s of STOPS) process.on(s, stop);
  });
  for (const s of STOPS) process.off(s, stop);
  await api.close();
  const said = `stopped (${signal}): ${api.requests.length} message ${noun(api.requests.length, 'request')} answered, ${api.unauthorized} refused`;
  // With --json stdout holds the one object; the count goes to stderr.
  if (flags.json) deps.stderr(`${said}\n`);
  else io.out(said);
  return EXIT.OK;
}
