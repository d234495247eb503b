// `nightshift doctor`: one look at everything a tick needs, each check with a name, a status and a
// one-line fix. It opens nothing it would create: a missing ledger or memory database is reported,
// never made. The verdicts on silence and failures in a row are pure functions.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Ledger } from '../../budget/ledger.js';
import type { Logger } from '../../logs/logger.js';
import { memoryDbPath } from '../../memory/store/db-path.js';
import { parseWebhook, probeWebhook } from '../../report/discord.js';
import { formatMs, type CheckFacts } from '../../report/embed.js';
import { Outbox, outboxFile } from '../../report/outbox.js';
import { webhookTarget } from '../../report/deliver.js';
import { isAlive } from '../../core/process-tree.js';
import { resolveCommand, sandboxProbe } from '../../sessions/wall/sandbox.js';
import { compiledPrefix } from '../../sessions/wall/landlock.js';
import { cliRoot, describeView, hostView } from '../../sessions/wall/wall-layout.js';
import { sessionUserFor } from '../../config/session-user.js';
import { loadAgents, type Agent } from '../../config/agents.js';
import { envNameWarnings, modelWarnings } from '../../config/name-warnings.js';
import { recurringFromFiles } from './anneal-check.js';
import type { LenientConfig } from '../../config/config-fallback.js';
import { formatDuration } from '../../config/duration.js';
import { gitIn, notARepoProblem, vaultConflicts, VaultGit } from '../../vault/git-sync.js';
import { silentLogger } from '../../logs/logger.js';
import { headBranch } from '../../vault/refs.js';
import { withoutCredentials } from '../../sessions/wall/git-credentials.js';
import { lockOwner } from '../../core/lock.js';
import { installedTimer, UNIT_DIR } from '../systemd.js';
import { unitsCheck } from './units-check.js';
import { accessCheck, cliReachChecks, credentialCheck, envCheck, permissionCheck, scheduleCheck, sessionUserCheck, toolsCheck } from './doctor-setup.js';
import { ENV_FILE_NAME, type EnvFileResult } from '../../config/env-file.js';
import { accessFacts, accessAdvice } from '../../core/file-access.js';
import { boundsCheck, concurrencyCheck, diskCheck } from './doctor-bounds.js';
import { apiCheck } from './api-check.js';
import { cliVersionCheck } from './cli-version.js';
import { nodeCheck } from './node-check.js';
import { fleetCheck } from './fleet-check.js';
import { counted, noun } from '../../core/words.js';

export type Check = CheckFacts;
export type DoctorDeps = {
  env: NodeJS.ProcessEnv; now: () => Date; logger: Logger; redact: (t: string) => string;
  // What main read of nightshift.env; the user we run as; where an installed timer would be.
  envFile?: EnvFileResult | null; uid?: number; timerFile?: string;
  // The Node.js to judge (default: the one running).
  nodeVersion?: string;
};

const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail, fix: null });
const warn = (name: string, detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });
const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });
const firstLine = (s: unknown) => String(s ?? '').trim().split('\n')[0];
// The CLI and the remote get this long; a doctor run must end even when the network hangs.
const PROBE_MS = 20_000;

// Pure: is the last ok session recent enough? `firstStartedAt`: the oldest session (null: none).
export function silenceCheck(lastOkAt: string | null, firstStartedAt: string | null, now: Date, maxMs: number): Check {
  const limit = formatDuration(maxMs);
  const fix = 'check the timer and the last sessions: systemctl list-timers nightshift.timer; nightshift sessions';
  if (lastOkAt) {
    const age = now.getTime() - Date.parse(lastOkAt);
    const ago = `${formatMs(Math.max(0, age))} ago`;
    return age > maxMs ? fail('silence', `last ok session ended ${ago} (${lastOkAt}), longer than alerts.max_silence ${limit}`, fix) : ok('silence', `last ok session ended ${ago}`);
  }
  if (!firstStartedAt) return warn('silence', 'no sessions yet', fix);
  const since = now.getTime() - Date.parse(firstStartedAt);
  return since > maxMs
    ? fail('silence', `no session has ended ok since the first one began (${firstStartedAt}), longer than alerts.max_silence ${limit}`, fix)
    : warn('silence', `no ok session yet (the first began ${firstStartedAt})`, fix);
}

// Pure: outcomes newest first; fails at `max` non-ok sessions in a row.
export function failuresCheck(outcomesNewestFirst: string[], max: number): Check {
  let n = 0;
  for (const o of outcomesNewestFirst) {
    if (o === 'ok') break;
    // A stop the operator asked for is no failure, and breaks no streak.
    if (o === 'interrupted') continue;
    n++;
  }
  const list = outcomesNewestFirst.slice(0, Math.min(n, 5)).join(', ');
  if (n >= max) return fail('failures', `the last ${counted(n, 'session')} did not end ok (${list}), alerts.max_consecutive_failures is ${max}`, 'read the last transcripts: nightshift sessions; nightshift show <id>');
  if (!outcomesNewestFirst.length) return ok('failures', 'no sessions yet');
  return n ? ok('failures', `${n} failed ${noun(n, 'session')} in a row (${list}), below ${max}`) : ok('failures', 'the last session ended ok');
}

async function cliCheck(l: LenientConfig, deps: DoctorDeps): Promise<Check> {
  const cmd = l.config.claude.command;
  const fix = `install Claude Code (npm i -g @anthropic-ai/claude-code) or set claude.command in ${l.config.file}`;
  try {
    const { execa } = await import('execa');
    const r = await execa(cmd, ['--version'], { reject: false, timeout: PROBE_MS, env: { PATH: deps.env.PATH ?? '', HOME: deps.env.HOME ?? '' }, extendEnv: false, stdin: 'ignore' });
    if (r.exitCode === 0) return cliVersionCheck(cmd, firstLine(r.stdout));
    return fail('cli', `\`${cmd} --version\` failed: ${firstLine(r.stderr) || firstLine(r.shortMessage) || `exit ${r.exitCode}`}`, fix);
  } catch (err) {
    return fail('cli', `\`${cmd}\` cannot run: ${firstLine((err as Error).message)}`, fix);
  }
}

// The wall every session runs in: a real, tiny sandbox is started.
export async function sandboxCheck(l: LenientConfig, deps: Pick<DoctorDeps, 'env'>): Promise<Check> {
  if (l.config.sandbox === 'none') {
    return warn('sandbox', 'sandbox: none: sessions run unwalled, with the service user\'s access to every file it can write', `install bubblewrap and remove \`sandbox: none\` from ${l.config.file}`);
  }
  // As the session user where a root supervisor has one: that is who starts bwrap.
  const problem = await sandboxProbe(l.config, deps.env);
  if (problem) return fail('sandbox', problem, 'apt-get install bubblewrap; under systemd, use the units `nightshift systemd install` renders (they allow what bwrap needs: see the comment in nightshift.service)');
  // A door beside the wall the operator opened: what one session writes there configures the next.
  if (l.config.claude.project_settings) {
    return warn('sandbox', 'claude.project_settings: true: every session\'s CLI loads the vault\'s .claude/settings.json, .mcp.json and CLAUDE.md, which any session can write (an API endpoint, permissions, hooks off)', `remove \`project_settings\` from claude: in ${l.config.file}; put standing instructions in the agent's prompt`);
  }
  const cli = resolveCommand(l.config.claude.command, deps.env.PATH ?? '');
  const view = hostView(cli ? cliRoot(cli) : null, resolveCommand('node', deps.env.PATH ?? ''));
  // Each Bash command enters its Landlock domain through the prefix: compiled, or perl's (~2 ms more).
  const prefix = compiledPrefix() ? 'each Bash command enters its Landlock domain through the compiled prefix' : 'each Bash command enters its Landlock domain through the perl prefix (~2 ms more a command: this build made no compiled prefix that runs here, for want of a C compiler, built for another machine or C library, or installed where other users cannot run it; build with gcc and libc6-dev installed on a host whose glibc is no newer than this one\'s, and install where every user may read)';
  return ok('sandbox', `bwrap makes a sandbox (user, mount, PID namespaces); ${describeView(view)}; ${prefix}`);
}

// Pure: one line per agent whose sessions reach beyond the supervisor's endpoints (its `network:`);
// `open` is a warning (any public host, so anything the session read can be sent anywhere).
export function networkChecks(agents: Pick<Agent, 'name' | 'network' | 'file'>[], sandbox: string): Check[] {
  const out: Check[] = [];
  for (const a of agents) {
    if (a.network === 'none') continue;
    const unwalled = sandbox === 'none' ? '; sandbox: none, so the proxy is only advice: the session has the host\'s network' : '';
    if (a.network === 'open') out.push(warn('network', `${a.name}: open: any public host, through the egress proxy (private ranges, link-local and this host refused)${unwalled}`, `name the hosts it needs instead: network: [api.example.com] in ${a.file}`));
    else out.push(unwalled ? warn('network', `${a.name}: ${a.network.join(', ')}${unwalled}`, 'install bubblewrap and remove `sandbox: none`') : ok('network', `${a.name}: ${a.network.join(', ')} (through the egress proxy; nothing else)`));
  }
  return out;
}

function configCheck(l: LenientConfig): Check {
  if (!l.problems.length) return ok('config', l.config.file);
  return fail('config', `${counted(l.problems.length, 'problem')}: ${l.problems.slice(0, 3).map((p) => p.split('\n')[0]).join('; ')}${l.problems.length > 3 ? '; ...' : ''} (${l.unreadable ? 'the checks that need the config are skipped' : 'using defaults for what could not be read'})`, `fix ${l.config.file}, then run nightshift doctor again`);
}

// The checks that read a path or a setting from the config: with none readable, the defaults would
// make them report what is not there (no remote, Discord unreachable), so they are skipped.
export const NEEDS_CONFIG = ['api', 'agents', 'permission', 'tools', 'cli', 'sandbox', 'access', 'ledger', 'memory', 'vault', 'remote', 'unpushed', 'run lock', 'git lock', 'schedule', 'discord', 'outbox', 'silence', 'failures'] as const;
const skipped = (name: string, why: string): Check => ({ name, status: 'skip', detail: `skipped: ${why}`, fix: null });

function agentsCheck(l: LenientConfig): { check: Check; agents: Agent[] } {
  try {
    const agents = loadAgents(l.config);
    if (!agents.length) return { check: warn('agents', `no agents in ${l.config.agents_dir}`, `write one: ${l.config.agents_dir}/<name>.md (nightshift init writes an example)`), agents };
    const models = modelWarnings(l.config, agents);
    if (models.length) return { check: warn('agents', `${agents.length}: ${agents.map((a) => a.name).join(', ')}; ${models.join('; ')}`, 'name a model the CLI knows (an alias such as sonnet or opus, or a full claude-... name)'), agents };
    return { check: ok('agents', `${agents.length}: ${agents.map((a) => a.name).join(', ')}`), agents };
  } catch (err) {
    return { check: fail('agents', firstLine((err as Error).message.replace(/\n\s*-\s*/g, ' ')), `fix the agent file (or agents_dir) named above`), agents: [] };
  }
}

// A database we cannot open: an access problem gets who owns it and the chown; only a file that
// opens and is corrupt or not ours is worth moving aside.
function openFailure(name: string, file: string, err: unknown, aside: string): Check {
  const code = String((err as { code?: string }).code ?? '');
  let f = null;
  try {
    f = accessFacts(file, name === 'ledger' ? 'ledger' : 'memory database');
  } catch {
    // gone meanwhile
  }
  if (f) return fail(name, accessAdvice(f, file).replace(/ The file is not damaged; fix the access: .*$/, ' The file is not damaged.'), /fix the access: (.*)$/.exec(accessAdvice(f, file))![1]);
  if (/^(EACCES|EPERM|SQLITE_CANTOPEN|SQLITE_READONLY|SQLITE_BUSY|SQLITE_LOCKED)/.test(code)) return fail(name, `${file}: ${firstLine((err as Error).message)} (${code})`, `check who may open ${file} and whether another process holds it; the file itself may be fine`);
  return fail(name, `${file}: ${firstLine((err as Error).message)}`, aside);
}

// Only "no such file" is absent: a file behind a folder we may not enter is there, and not ours to use.
function absent(file: string): boolean {
  try {
    fs.statSync(file);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

type LedgerFacts = { lastOkAt: string | null; firstStartedAt: string | null; outcomes: string[] };

function ledgerCheck(l: LenientConfig): { check: Check; facts: LedgerFacts | null } {
  const file = path.join(l.config.state_dir, 'ledger.db');
  if (absent(file)) return { check: warn('ledger', `no ledger at ${file} yet`, 'run a session: nightshift run <agent> (or wait for the timer)'), facts: null };
  let ledger: Ledger | null = null;
  try {
    // Read-only: doctor (without --fix) makes and takes nothing.
    ledger = Ledger.look(file);
    const integrity = ledger.integrity();
    if (integrity !== 'ok') return { check: fail('ledger', `integrity check of ${file}: ${firstLine(integrity)}`, `stop the timer, move ${file} aside (a new one is made on the next start)`), facts: null };
    const recent = ledger.recent(50);
    const settled = recent.filter((r) => r.status === 'settled').map((r) => r.outcome ?? 'error');
    const lastOkAt = ledger.lastOkAt();
    // The oldest session matters only while none has ended ok (then the ledger is small).
    const first = !lastOkAt && recent.length ? ledger.recent(100_000).at(-1)!.started_at : null;
    return { check: ok('ledger', `${file}: integrity ok`), facts: { lastOkAt, firstStartedAt: first, outcomes: settled } };
  } catch (err) {
    return { check: openFailure('ledger', file, err, `stop the timer, move ${file} aside (a new one is made on the next start)`), facts: null };
  } finally {
    ledger?.close();
  }
}

function memoryCheck(l: LenientConfig): Check {
  const file = memoryDbPath(l.config);
  if (absent(file)) return ok('memory', `no memory database at ${file} yet (made on first use)`);
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const r = String(db.pragma('integrity_check', { simple: true }));
    return r === 'ok' ? ok('memory', `${file}: integrity ok`) : fail('memory', `integrity check of ${file}: ${firstLine(r)}`, `restore ${file} from a backup, or move it aside (nightshift memory export first if it still reads)`);
  } catch (err) {
    return openFailure('memory', file, err, `restore ${file} from a backup, or move it aside`);
  } finally {
    db?.close();
  }
}

async function vaultChecks(l: LenientConfig): Promise<Check[]> {
  const c = l.config;
  if (!fs.existsSync(c.vault) || !fs.statSync(c.vault).isDirectory()) {
    return [fail('vault', `${c.vault} is not a directory`, `create it (a git clone of the agent's vault) or set vault in ${c.file}`)];
  }
  if (!c.git.enabled) return [ok('vault', `${c.vault} (git sync off)`)];
  const git = gitIn(c.vault, { timeoutMs: Math.min(c.git.timeout, PROBE_MS), sessionUid: sessionUserFor(c).user?.uid ?? null });
  const inside = await git(['rev-parse', '--is-inside-work-tree']);
  // git refuses a repository another user owns (CVE-2022-24765); every git step would then fail.
  if (/dubious ownership/.test(inside.stderr)) {
    const owner = fs.statSync(c.vault).uid;
    return [fail('vault', `git refuses ${c.vault}: "dubious ownership" (owned by uid ${owner}, nightshift runs as uid ${process.getuid?.() ?? '?'})`, `chown -R the vault to the user nightshift runs as, or: git config --global --add safe.directory ${c.vault} (as that user)`)];
  }
  if (inside.stdout !== 'true') {
    // The same words run and rehearse refuse a start with.
    const p = notARepoProblem(c, inside.stderr);
    return [fail('vault', `${p.detail}: run and rehearse refuse every session`, p.fix)];
  }
  // What keeps a commit off main fails here: nightshift commits nothing over it, or only to a branch.
  const conflicts = await vaultConflicts(git, c.vault);
  const out = [conflicts.length
    ? fail('vault', `${c.vault}: ${conflicts.join('; ')}`, `finish or undo it by hand (the fix is named above); nightshift commits nothing to main until then`)
    : ok('vault', `${c.vault}: git work tree`)];
  // The session sees a copy without them, but the file is in the vault: a link or a copy leaks it.
  const config = path.join(c.vault, '.git', 'config');
  const held = fs.lstatSync(config, { throwIfNoEntry: false })?.isFile() ? withoutCredentials(fs.readFileSync(config, 'utf8')).found : [];
  if (held.length) {
    out.push(fail('vault credentials', `${config} holds ${held.join(' and ')}: push credentials in the vault are within reach of every session`, `remove them (git -C ${c.vault} remote set-url ${c.git.remote} <url without user:token@>; git -C ${c.vault} config --unset-all http.extraheader) and give nightshift's git a credential helper outside the vault (e.g. git config --global credential.helper 'store --file /etc/nightshift/git-credentials' as the service user)`));
  }
  const remotes = (await git(['remote'])).stdout.split('\n');
  if (!remotes.includes(c.git.remote)) {
    out.push(fail('remote', `the vault has no remote \`${c.git.remote}\``, `git -C ${c.vault} remote add ${c.git.remote} <url>, or set git.remote`));
    return out;
  }
  const r = await git(['ls-remote', '--heads', c.git.remote]);
  // An empty remote: the first session's push makes the branch, named here before it does.
  const first = c.git.branch ?? headBranch(c.vault) ?? 'HEAD';
  const empty = r.ok && !r.stdout.trim() ? ` and empty: the first session's push creates branch \`${first}\`${c.git.branch ? ' (git.branch)' : ` (the vault's HEAD; set git.branch in ${c.file} for another)`}` : '';
  out.push(r.ok ? ok('remote', `${c.git.remote} reachable${empty}`) : fail('remote', `git ls-remote ${c.git.remote}: ${firstLine(r.stderr) || 'failed'}`, `check the network and credentials: git -C ${c.vault} ls-remote ${c.git.remote}`));
  out.push(unpushedCheck(await new VaultGit(c, silentLogger()).oldestUnpushedAge(new Date()).catch(() => null), c.vault, c.git.remote));
  return out;
}

// Commits the remote has not taken for this long are a push that keeps failing (reachable for a
// read is not writable): a warning, with git's own answer one command away.
export const UNPUSHED_WARN_MS = 3 * 3_600_000;

export function unpushedCheck(u: { count: number; ageMs: number } | null, vault: string, remote: string): Check {
  if (!u) return ok('unpushed', 'none');
  if (u.ageMs <= UNPUSHED_WARN_MS) return ok('unpushed', `${counted(u.count, 'commit')}, the oldest ${formatMs(u.ageMs)} old (the next tick pushes them)`);
  return warn('unpushed', `${counted(u.count, 'commit')} not on ${remote}, the oldest ${formatMs(u.ageMs)} old: every push since has failed`, `see git's reason: git -C ${vault} push ${remote} (and the git line of the last sessions: nightshift sessions, nightshift show ID)`);
}

// A lock whose owner is gone (or whose directory has no owner at all) is stale. A live owner holding
// far longer than any session could run is reported too: it may be frozen.
export function lockCheck(name: string, file: string, now: Date, maxHoldMs: number): Check {
  const dir = `${file}.lock`;
  if (!fs.existsSync(dir)) return ok(name, 'free');
  const owner = lockOwner(file);
  const fix = `make sure no nightshift runs, then remove ${dir} and ${file}.owner.json (the next start also takes a dead owner's lock)`;
  if (!owner) {
    const age = now.getTime() - fs.statSync(dir).mtimeMs;
    return age > 5_000 ? fail(name, `${dir} has no owner file (its owner died while taking it)`, fix) : ok(name, 'being taken');
  }
  if (!isAlive(owner.pid, owner.start)) return fail(name, `stale: held by pid ${owner.pid} (gone) since ${owner.since}`, fix);
  const held = now.getTime() - Date.parse(owner.since);
  if (held > maxHoldMs) return warn(name, `held by live pid ${owner.pid} for ${formatMs(held)} (${owner.purpose})`, `look at pid ${owner.pid}: it may be stuck`);
  return ok(name, `held by pid ${owner.pid} since ${owner.since} (${owner.purpose})`);
}

async function discordCheck(l: LenientConfig, deps: DoctorDeps): Promise<Check[]> {
  const raw = deps.env.DISCORD_WEBHOOK_URL;
  const out: Check[] = [];
  const hook = parseWebhook(raw);
  if (!raw) out.push(warn('discord', 'DISCORD_WEBHOOK_URL is not set: no reports or alerts reach Discord', `add DISCORD_WEBHOOK_URL=... to ${deps.envFile?.file ?? path.join(l.config.dir, ENV_FILE_NAME)} (every command reads it, and the units)`));
  else if (!hook) out.push(fail('discord', 'DISCORD_WEBHOOK_URL is not a webhook URL (…/webhooks/<id>/<token>)', 'copy the webhook URL again from the channel settings'));
  else {
    const r = await probeWebhook(hook, { apiBase: l.config.discord.api_base }, Date.now() + l.config.discord.timeout);
    out.push(r.ok
      ? ok('discord', `webhook${r.name ? ` "${r.name}"` : ''} reachable at ${l.config.discord.api_base}`)
      : fail('discord', `webhook at ${l.config.discord.api_base}: ${deps.redact(r.error)}`, r.status === 401 || r.status === 404 ? 'the webhook was deleted or its token is wrong: make a new one and update DISCORD_WEBHOOK_URL' : 'check the network (and discord.api_base)'));
  }
  // The second channel, only when set: never probed (a probe would post a message).
  if (deps.env.NIGHTSHIFT_WEBHOOK_URL?.trim()) {
    out.push(webhookTarget(deps.env.NIGHTSHIFT_WEBHOOK_URL)
      ? ok('webhook', `NIGHTSHIFT_WEBHOOK_URL is set (format ${l.config.webhook.format}); not probed: a probe would post`)
      : fail('webhook', 'NIGHTSHIFT_WEBHOOK_URL is not an http(s) URL: no report reaches it', `put the endpoint's full URL (https://...) in ${deps.envFile?.file ?? path.join(l.config.dir, ENV_FILE_NAME)}`));
  }
  const file = outboxFile(l.config.state_dir);
  let box: Outbox | null = null;
  try {
    box = fs.existsSync(file) ? Outbox.open(file) : null;
    const oldest = box?.oldestPending();
    if (box && oldest) out.push(warn('outbox', `${counted(box.pending(), 'report')} waiting since ${oldest.created_at}: ${deps.redact(oldest.last_error ?? 'not sent yet')}`, 'they go out on the next start once Discord answers; see the discord check'));
    else out.push(ok('outbox', box ? 'empty' : 'no outbox yet'));
  } catch (err) {
    out.push(fail('outbox', `${file}: ${firstLine((err as Error).message)}`, `move ${file} aside (queued reports in it are lost)`));
  } finally {
    box?.close();
  }
  return out;
}

// Every check, in the order an operator would fix them.
export async function runDoctor(l: LenientConfig, deps: DoctorDeps): Promise<Check[]> {
  const c = l.config;
  const now = deps.now();
  const envFile = deps.envFile?.file ?? path.join(c.dir, ENV_FILE_NAME);
  // Read before the env check: a variable an agent's env: passes on is not a typo.
  const agents = l.unreadable ? null : agentsCheck(l);
  const typos = deps.envFile ? envNameWarnings(deps.envFile.loaded, deps.envFile.file, agents?.agents.flatMap((a) => a.env) ?? []) : [];
  const checks: Check[] = [
    configCheck(l), nodeCheck(deps.nodeVersion ?? process.version, now), envCheck(deps.envFile ?? null, envFile, typos), credentialCheck(deps.env, deps.envFile ?? null, envFile),
  ];
  // The fleet's database (only with NIGHTSHIFT_DATABASE_URL): reached, and at a schema this host knows.
  const fleet = await fleetCheck(c, deps.env, deps.redact);
  if (fleet) checks.push(fleet);
  if (l.unreadable || !agents) return [...checks, ...NEEDS_CONFIG.map((n) => skipped(n, l.unreadable!))];
  // The key itself, once: a refused one fails here, before a session retries it for minutes.
  const api = await apiCheck(deps.env, deps.env.ANTHROPIC_BASE_URL || c.claude.api_base, envFile, PROBE_MS);
  if (api) checks.push(api);
  checks.push(
    agents.check, permissionCheck(c, agents.agents, deps.uid ?? process.getuid?.() ?? -1, deps.env), toolsCheck(agents.agents), await cliCheck(l, deps), ...cliReachChecks(c, deps.env, path.join(path.dirname(deps.timerFile ?? path.join(UNIT_DIR, 'nightshift.timer')), 'nightshift.service')), ...unitsCheck(c, path.join(path.dirname(deps.timerFile ?? path.join(UNIT_DIR, 'nightshift.timer')), 'nightshift.service')), await sandboxCheck(l, deps), ...networkChecks(agents.agents, c.sandbox), accessCheck(c),
  );
  const sessionUser = await sessionUserCheck(c, deps.uid ?? process.getuid?.() ?? -1, deps.env);
  if (sessionUser) checks.push(sessionUser);
  checks.push(boundsCheck(c, deps.env), concurrencyCheck(c.sessions.max_concurrent, c.limits.memory, os.totalmem()), diskCheck(c));
  const ledger = ledgerCheck(l);
  checks.push(ledger.check, memoryCheck(l), ...(await vaultChecks(l)));
  const maxHold = c.claude.timeout + c.claude.kill_grace + 2 * c.git.lock_timeout + 2 * c.git.timeout + 10 * 60_000;
  checks.push(lockCheck('run lock', path.join(c.state_dir, 'run'), now, maxHold), lockCheck('git lock', c.git.lock_file, now, maxHold));
  checks.push(scheduleCheck(c, installedTimer(deps.timerFile ?? path.join(UNIT_DIR, 'nightshift.timer')), deps.env.PATH));
  checks.push(...(await discordCheck(l, deps)));
  if (ledger.facts) {
    checks.push(silenceCheck(ledger.facts.lastOkAt, ledger.facts.firstStartedAt, now, c.alerts.max_silence));
    checks.push(failuresCheck(ledger.facts.outcomes, c.alerts.max_consecutive_failures));
    // The same failure again (the self-annealing loop): a warning.
    try {
      const recurring = recurringFromFiles(c, path.join(c.state_dir, 'ledger.db'));
      if (recurring) checks.push(recurring);
    } catch (err) {
      checks.push(warn('recurring', `could not be read: ${firstLine((err as Error).message)}`, 'see the ledger and memory checks'));
    }
  } else {
    checks.push(silenceCheck(null, null, now, c.alerts.max_silence));
  }
  return checks;
}
