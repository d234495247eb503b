// A chosen session, from the budget's verdict to its report: git pull, the sandboxed guest, the
// CLI under its watchdogs, the settle, capture and grading, git commit/push, Discord. Loaded by
// ./supervise.ts only once a session is chosen.
import { mark } from '../../core/profile.js';
import { counted, noun } from '../../core/words.js';
import { giveToFolderOwner } from '../../core/file-access.js';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Ledger, OpenSession } from '../../budget/ledger.js';
import { SessionMeter } from '../../budget/meter.js';
import { canStart, chargeFor, type Charge, type Limits } from '../../budget/policy.js';
import { permissionCheck } from '../health/doctor-setup.js';
import { windowHold, windowsFrom } from '../../budget/windows.js';
import { money } from '../../core/money.js';
import type { Redactor } from '../../core/redact.js';
import { claudeArgs } from '../../sessions/run/command.js';
import { prepareGuest, type Guest } from '../../sessions/wall/guest.js';
import { checkSandbox } from '../../sessions/wall/sandbox-check.js';
import { checkedByProxy, classify, type Outcome } from '../../sessions/run/outcome.js';
import { diskFacts, diskFullReason, diskProblem, isDiskFull, lowDisks, type LowDisk } from '../../config/disk-space.js';
import { isRateLimited } from '../../sessions/stream/rate-limit.js';
import { readProc } from '../../core/process-tree.js';
import { runClaude } from '../../sessions/run/runner.js';
import { keepInTranscript } from '../../sessions/run/transcript.js';
import { StreamTracker } from '../../sessions/stream/stream-tracker.js';
import { openAhead } from '../../sessions/capture/ahead.js';
import { leaveBehind } from '../../sessions/capture/capture.js';
import { prepareSessionState } from '../../sessions/state/session-state.js';
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { ConfigError, EnvFileError, EXIT } from '../../core/errors.js';
import { credentialFrom } from '../../sessions/wall/api-proxy.js';
import { REHEARSAL_KEY_PREFIX, rehearsalCredential } from '../../config/rehearsal.js';
import { guardGitConfig, quarantineGitDir, untrustedGitMarker } from '../../vault/git-guard.js';
import { lateness, uptimeMs } from '../schedule/late.js';
import { notARepoProblem, VaultGit, type GitReport } from '../../vault/git-sync.js';
import { nestedQuarantine, sweepNestedGit } from '../../vault/nested-repos.js';
import { changedProjectFiles, recordProjectFileChange, snapshotProjectFiles } from '../../sessions/wall/project-files.js';
import { reportBackoff, reportSession } from '../../report/session-report.js';
import { recurringNoteFor } from '../health/anneal-check.js';
import { currentHolds, settledChange } from '../schedule/holds.js';
import { toRecord, type SessionRecord } from '../../budget/session-record.js';
import type { RunDeps, SuperviseResult } from './types.js';
import { version } from '../../core/version.js';
import { ENV_FILE_VAR } from '../../config/env-file.js';
import { credentialFingerprint, envFileIdentity, hhmm, readRefusal, refusedKeyMessage, refusedKeyVerdict, writeRefusal } from '../../budget/credential-refusal.js';
import { agentModelWarning } from '../../config/name-warnings.js';

export function newSessionId(agent: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${agent}-${randomBytes(3).toString('hex')}`;
}

const redactOrNull = (redact: Redactor, text: string | null) => (text === null ? null : redact(text));
// Longest result or error text kept in a ledger row.
const LEDGER_TEXT_MAX = 16 * 1024;
const capped = (text: string | null) => (text !== null && text.length > LEDGER_TEXT_MAX ? `${text.slice(0, LEDGER_TEXT_MAX)}…` : text);

// How often the running cost estimate is written to the ledger at most.
const PROGRESS_EVERY_MS = 1000;

// What supervise() holds when it hands over a chosen agent.
export type Opened = {
  ledger: Ledger;
  startedAt: Date;
  day: string;
  options: { force: boolean };
  // The stop request or the lost run lock, whichever comes first.
  signal: AbortSignal;
  git: GitReport;
  skip: (reason: string, limit?: string | null) => SuperviseResult;
  stopped: () => SuperviseResult;
  // The sandbox's probe, started when the session was chosen (sessions/wall/sandbox.ts).
  sandboxProbe?: Promise<string | null>;
  // git's answer whether the vault is a work tree, asked as the session was chosen (null: not
  // asked, the vault's git untrusted then); read only if the vault is not untrusted now.
  vaultRepo?: Promise<boolean | null>;
};

export async function runChosen(config: Config, choice: { agent: Agent; reason: string }, o: Opened, deps: RunDeps): Promise<SuperviseResult> {
  const { ledger, startedAt, day, options, signal, git, skip, stopped } = o;
  const { agent } = choice;
  const limits = budgetLimits(config, agent);
  const verdict = canStart(agent.name, ledger.dayTotals(day), limits);
  if (!verdict.ok) {
    if (!options.force) return skip(verdict.reason, verdict.limit);
    deps.logger.warn({ event: 'forced', agent: agent.name, reason: verdict.reason }, `running ${agent.name} past a limit (--force): ${verdict.reason}`);
  }
  // A subscription's window past the share unattended sessions may use: nothing starts until it resets.
  const held = windowHold(ledger.windows(), config.budget.max_window_utilization, deps.now());
  if (held) {
    if (!options.force) return skip(held.reason, 'max_window_utilization');
    deps.logger.warn({ event: 'forced', agent: agent.name, reason: held.reason }, `running ${agent.name} past a limit (--force): ${held.reason}`);
  }
  if (!fs.existsSync(config.vault) || !fs.statSync(config.vault).isDirectory()) {
    throw new ConfigError(config.file, [`vault: Expected an existing directory, got \`${config.vault}\``]);
  }
  // The CLI refuses bypassPermissions as root: unwalled (no session_user), root's session would be
  // charged only to fail. Refused here, with doctor's fix. Walled, it runs as session_user.
  const permission = permissionCheck(config, [agent], process.getuid?.() ?? -1, deps.env);
  if (permission.status === 'fail') throw new ConfigError(config.file, [`claude.permission_mode: ${permission.detail}; fix: ${permission.fix}`]);
  // No credential at all: every call would fail (the CLI retries for minutes, then blames the
  // server). Refused here, before the pull and the charge, naming the env file (exit 78).
  const credential = credentialFrom(deps.env);
  if (!credential) {
    const envFile = deps.env[ENV_FILE_VAR] ?? path.join(config.dir, 'nightshift.env');
    throw new EnvFileError(envFile, [`no credential: neither ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN nor ANTHROPIC_AUTH_TOKEN is set, in the environment or ${envFile}; nothing was started or charged. Fix: put ANTHROPIC_API_KEY=... (or CLAUDE_CODE_OAUTH_TOKEN=..., from \`claude setup-token\`) in ${envFile}, chmod 600 it, then \`nightshift doctor\``]);
  }
  // A rehearsal's key outside a rehearsal: the env file still points at `rehearse --serve`. Its
  // session would leave fake costs, memories and commits in the real site; refused, uncounted.
  const rehearsing = rehearsalCredential(deps.env);
  if (rehearsing && !config.rehearsal) {
    const envFile = deps.env[ENV_FILE_VAR] ?? path.join(config.dir, 'nightshift.env');
    throw new EnvFileError(envFile, [`${rehearsing} is a rehearsal's key (${REHEARSAL_KEY_PREFIX}…): a session with it would write the imitation's answers and costs into this site's ledger, memory and vault; nothing was started or charged. Fix: take the ANTHROPIC_BASE_URL and ${rehearsing} lines \`nightshift rehearse --serve\` printed out of ${envFile} and put the real key back (\`nightshift rehearse AGENT\` rehearses in state of its own, with no env file change)`]);
  }
  // The same key the API already refused today (budget/credential-refusal.ts): it would fail the
  // same way, after the charge. Refused here too, with the same exit (78) and the same file named.
  const refused = refusedKeyVerdict(readRefusal(config.state_dir), { fingerprint: credentialFingerprint(credential.value), day });
  if (refused) {
    const envFile = deps.env[ENV_FILE_VAR] ?? path.join(config.dir, 'nightshift.env');
    throw new EnvFileError(envFile, [refusedKeyMessage(refused, { envFile, agent: agent.name, hhmm: hhmm(refused.at, config.budget.timezone), envNow: envFileIdentity(envFile) })]);
  }
  const vault = config.git.enabled ? new VaultGit(config, deps.logger, signal, deps.gitChecks) : null;
  // Before the pull and the charge: a sandbox that cannot be made refuses the session, uncounted.
  // Both wait on a child process, so they wait together.
  const untrusted = vault ? fs.existsSync(untrustedGitMarker(config.state_dir)) : false;
  const repoNow = async (v: VaultGit) => (await o.vaultRepo?.catch(() => null)) ?? v.isRepo();
  const [inRepo] = await Promise.all([vault && !untrusted ? repoNow(vault) : false, checkSandbox(config, deps.env, deps.sessionUser !== false, o.sandboxProbe)]);
  mark('sandbox_checked');
  if (untrusted) git.error = `git sync skipped: a session left a .git in the vault that could not be moved aside; remove it and ${untrustedGitMarker(config.state_dir)}`;
  else if (vault && !inRepo) {
    // Before the pull and the charge: a session whose work no git can keep is the operator's to fix.
    const p = notARepoProblem(config, await vault.notRepoWhy());
    throw new ConfigError(config.file, [`git.enabled: ${p.detail}; nothing was started or charged. Fix: ${p.fix}`]);
  }
  if (signal.aborted) return stopped();
  // A repository an abandoned session left inside the vault is moved aside before our first git.
  const nestedTrusted = vault && inRepo ? setAsideNested(config, `start-${startedAt.getTime()}`, git, deps) : true;
  if (vault && inRepo && nestedTrusted) await vault.pull(git);
  mark('pulled');
  // Nothing is charged after a stop request.
  if (signal.aborted) return stopped();
  const gitGuard = vault && inRepo ? guardGitConfig(config.vault) : null;
  const late = lateness({ slot: deps.slot ?? null, startedAt, uptimeMs: uptimeMs(() => fs.readFileSync('/proc/uptime', 'utf8')), byTimer: /\.timer$/.test(deps.env.TRIGGER_UNIT ?? '') });
  if (late) deps.logger.warn({ event: 'late', agent: agent.name, slot: deps.slot?.toISOString() ?? null }, `${agent.name}: ${late}`);
  const projectBefore = snapshotProjectFiles(config.vault);
  mark('before_open');
  const opened = await runOpened(config, agent, ledger, startedAt, day, { ...deps, signal }, options.force, inRepo);
  // The day's room was taken between the check above and the charge: nothing started.
  if ('refused' in opened) {
    gitGuard?.restore();
    return skip(opened.refused.reason, opened.refused.limit);
  }
  const session = opened;
  mark('session_over');
  const projectFiles = changedProjectFiles(projectBefore, snapshotProjectFiles(config.vault));
  if (projectFiles.length) {
    deps.logger.warn({ event: 'project_files_changed', files: projectFiles, loaded: config.claude.project_settings }, `${agent.name}: the session changed the CLI's project files ${projectFiles.map((f) => JSON.stringify(f)).join(', ')}${config.claude.project_settings ? ' (claude.project_settings: the next session loads them)' : ' (never loaded: claude.project_settings is off)'}`);
    // For the next sessions' state, quoted as data (sessions/state/state.ts).
    try {
      recordProjectFileChange(config.state_dir, config.vault, { session: session.id, agent: agent.name, at: deps.now().toISOString(), files: projectFiles, loaded: config.claude.project_settings }, deps.redact);
    } catch (err) {
      deps.logger.warn({ event: 'project_files_record_failed', err }, `could not record the project file change for the next state: ${(err as Error).message}`);
    }
  }
  const planted = gitGuard?.restore() ?? [];
  if (vault && !inRepo && !untrusted) {
    try {
      const moved = quarantineGitDir(config.vault, path.join(config.state_dir, 'quarantine', session.id), session.id);
      if (moved) {
        git.error = `the vault was not a git work tree when the session began, and has a .git now: moved to ${moved} (nightshift never runs git in a repository a session made)`;
        deps.logger.error({ event: 'git_dir_quarantined', to: moved }, git.error);
      }
    } catch (err) {
      // It stays: no start trusts it until the operator has looked (the marker's text says how).
      git.error = `the session left a .git in the vault, which could not be moved aside: ${deps.redact((err as Error).message)}; git stays off until you remove it and ${untrustedGitMarker(config.state_dir)}`;
      fs.writeFileSync(untrustedGitMarker(config.state_dir), `${session.id}: ${git.error}\n`);
      deps.logger.error({ event: 'git_dir_quarantine_failed', err }, git.error);
    }
  }
  if (planted.length) deps.logger.warn({ event: 'git_config_restored', files: planted }, `the session changed ${planted.join(', ')}: put back before nightshift's git ran`);
  if (gitGuard?.replaced()) {
    git.error = 'the session replaced the vault\'s .git folder: nothing committed (restore it by hand)';
    git.uncommitted = true;
    deps.logger.error({ event: 'git_dir_replaced' }, git.error);
  } else if (vault && inRepo && nestedTrusted && setAsideNested(config, session.id, git, deps)) {
    try {
      await vault.commitAndPush(session, deps.redact, git);
    } catch (err) {
      git.error = deps.redact((err as Error).message);
      deps.logger.error({ event: 'git_error', err }, `git: ${git.error}`);
    }
  }
  // Where the work went, for `show` and `sessions` later (the ledger keeps it with the session).
  mark('git_done');
  if (vault) {
    session.git = { ...git };
    try {
      ledger.setGit(session.id, JSON.stringify(git));
    } catch (err) {
      deps.logger.warn({ event: 'git_record_failed', err }, `could not record the git outcome in the ledger: ${(err as Error).message}`);
    }
  }
  deps.logger.info({ event: 'report', sessionId: session.id, agent: agent.name, outcome: session.outcome, cost_usd: session.cost_usd, turns: session.turns, git }, `${agent.name}: ${session.outcome}, ${money(session.cost_usd)}, ${counted(session.turns, 'turn')}${session.retry_at ? `, held until ${session.retry_at}` : ''}`);
  // Discord, after the ledger and the commit; it never changes the result or the exit code.
  await reportSession(config, { session, model: agent.model, git: vault ? git : null, day, today: ledger.dayTotals(day), late, recurring: recurringNoteFor(config, ledger, session), projectFiles: projectFiles.length ? { files: projectFiles, loaded: config.claude.project_settings } : null }, deps);
  mark('reported');
  // The backoff beginning or ending is told once, on the session that made it so.
  const change = settledChange(config, ledger, agent.name);
  if (change) {
    const hold = currentHolds(config, ledger, deps.now())[agent.name] ?? null;
    deps.logger.warn({ event: `backoff_${change.change}`, agent: agent.name, failures: change.failures, until: hold?.until ?? null }, change.change === 'started'
      ? `${agent.name}: backed off after ${counted(change.failures, 'failure')} in a row${hold ? `, until ${hold.until}` : ''}`
      : `${agent.name}: recovered after ${counted(change.failures, 'failure')} in a row`);
    await reportBackoff(config, { agent: agent.name, ...change, until: hold?.until ?? null, session: session.id }, deps);
  }
  return { action: 'session', reason: choice.reason, limit: null, session, git, late };
}

function markRefusedKey(config: Config, session: string, day: string, deps: RunDeps): void {
  const credential = credentialFrom(deps.env);
  if (!credential) return;
  const envFile = deps.env[ENV_FILE_VAR] ?? path.join(config.dir, 'nightshift.env');
  try {
    writeRefusal(config.state_dir, { fingerprint: credentialFingerprint(credential.value), kind: credential.kind, at: deps.now().toISOString(), day, session, ...envFileIdentity(envFile) });
    deps.logger.warn({ event: 'credential_refusal_marked', session, credential: credential.kind }, `the API refused the credential: no session starts with it again today (a changed key, or \`nightshift hold release\`, clears this)`);
  } catch (err) {
    deps.logger.warn({ event: 'credential_refusal_unwritable', err }, `could not mark the refused key: ${deps.redact((err as Error).message)}`);
  }
}

// Moves every repository nested in the vault aside before nightshift's git runs there; false
// (and the marker that keeps every later git of ours off, the state's included) when one could not
// be moved.
function setAsideNested(config: Config, id: string, git: GitReport, deps: RunDeps): boolean {
  const into = nestedQuarantine(config.vault, path.join(config.state_dir, 'quarantine'), id);
  const r = sweepNestedGit(config.vault, into);
  if (r.moved.length) {
    const error = `a session left ${r.moved.length === 1 ? 'a repository' : `${r.moved.length} repositories`} inside the vault (${r.moved.map((m) => m.from).join(', ')}): moved to ${into}, never entered by nightshift's git`;
    git.error = git.error ?? error;
    deps.logger.error({ event: 'nested_git_quarantined', moved: r.moved }, error);
  }
  if (!r.failed.length) return true;
  git.error = `a session left a repository inside the vault that could not be moved aside (${r.failed.map((f) => `${f.path}: ${f.error}`).join('; ')}): git stays off until you remove it and ${untrustedGitMarker(config.state_dir)}`;
  git.uncommitted = true;
  fs.writeFileSync(untrustedGitMarker(config.state_dir), `${id}: ${git.error}\n`);
  deps.logger.error({ event: 'nested_git_quarantine_failed', failed: r.failed }, git.error);
  return false;
}

// The budget's limits for one agent, from the config.
export function budgetLimits(config: Config, agent: Pick<Agent, 'maxRunsPerDay'>): Limits {
  return {
    maxSessionsPerDay: config.budget.max_sessions_per_day,
    maxUsdPerDay: config.budget.max_usd_per_day,
    maxUsdPerSession: config.budget.max_usd_per_session,
    minSessionUsd: config.budget.min_session_usd,
    maxRunsPerDay: agent.maxRunsPerDay,
  };
}

// Pure: the ending once the disks are looked at: a session that ends (ok, or in an error) with a
// disk below limits.disk_free, or on a full-disk error of ours, ended `disk_full`.
export function diskFullEnding(ended: { outcome: Outcome; error: string | null }, low: LowDisk[], min: number, internal: unknown): { outcome: Outcome; error: string | null } {
  if (ended.outcome === 'disk_full') return ended;
  const ours = !!internal && isDiskFull(internal);
  if (!ours && !(low.length && (ended.outcome === 'ok' || ended.outcome === 'error'))) return ended;
  const why = low.length ? diskFullReason(low, min) : `a disk nightshift writes is full: ${(internal as Error)?.message ?? String(internal)}`;
  return { outcome: 'disk_full', error: ended.error && ended.outcome !== 'ok' ? `${why} (${ended.error})` : why };
}

// Pure: a meter's total beside the CLI's, apart by more than rounding (a hundredth of a cent or 1%).
export function costsDisagree(meterUsd: number, cliUsd: number | null): boolean {
  if (cliUsd === null) return false;
  return Math.abs(meterUsd - cliUsd) > Math.max(0.0001, 0.01 * Math.max(meterUsd, cliUsd));
}

async function runOpened(config: Config, agent: Agent, ledger: Ledger, startedAt: Date, day: string, deps: RunDeps, force: boolean, repo: boolean): Promise<SessionRecord | { refused: Extract<Charge, { ok: false }> }> {
  const id = newSessionId(agent.name, startedAt);
  const log = deps.logger.child({ sessionId: id, agent: agent.name });
  const transcript = path.join(config.log_dir, 'transcripts', `${id}.jsonl`);
  // Before the charge: a log dir that cannot be made refuses the start, nothing counted.
  const madeDir = fs.mkdirSync(path.dirname(transcript), { recursive: true });
  if (madeDir) [madeDir, path.dirname(transcript)].forEach((d) => giveToFolderOwner(d));
  const me = readProc(process.pid);
  const open: OpenSession = {
    id, agent: agent.name, day, started_at: startedAt.toISOString(), transcript, model: agent.model,
    supervisor_pid: process.pid, supervisor_start: me?.start ?? null,
  };
  // The session's endpoints start while its state is built (they wait for it only to write it
  // beside themselves); both are awaited, and nothing is spawned, before the charge.
  // The meter lives in the session's API proxy; it admits nothing until the charge reserves.
  let lastWindows = '';
  const meter = new SessionMeter({ reservationUsd: 0, prices: config.budget.prices, serverTools: agent.serverTools, warn: (o, m) => log.warn(o, m) });
  meter.close('the session has no reservation yet');
  const stateBuilt = prepareSessionState({ config, agent, sessionId: id, ledger, now: startedAt, transcript, redact: deps.redact, logger: log, excludeOnlyWithGit: deps.gitChecks?.excludeAlways === false, repo });
  const guestReady = prepareGuest(
    {
      config, agent, sessionId: id, env: deps.env, logger: log, redact: deps.redact, state: stateBuilt.then((s) => s?.text ?? null), version: version(),
      meter,
      // The usage windows a subscription reports, kept when they change (one small write).
      onHeaders: (h) => {
        const w = windowsFrom((k) => (typeof h[k] === 'string' ? (h[k] as string) : undefined), deps.now());
        const key = w.map((x) => `${x.name}:${x.utilization}:${x.resets_at}`).join(',');
        if (!w.length || key === lastWindows) return;
        lastWindows = key;
        ledger.recordWindows(w);
      },
      seccomp: deps.seccomp,
      domain: deps.domain,
      pinSettings: deps.pinSettings,
      egressNet: deps.egressNet,
      sessionUser: deps.sessionUser,
      apiPeer: deps.apiPeer,
      hostView: deps.hostView,
    },
    (extra) => claudeArgs(agent, config, extra),
  );
  // A guest that failed is settled below, once charged; this only keeps it from going unhandled.
  guestReady.catch(() => {});
  // Built before the charge: a state that cannot be built costs no count (the session runs without it).
  const state = await stateBuilt;
  mark('state_built');
  // Charged before the spawn: from here on the session counts, whatever happens, and every
  // statement after the charge sits inside the try whose finally settles it.
  const limits = budgetLimits(config, agent);
  let reserved: Charge | null;
  try {
    // --force runs past the day's cap with the session's own ceiling.
    reserved = ledger.open(open, (today) => chargeFor(agent.name, today, limits, force));
  } catch (err) {
    await guestReady.then((g) => g.close(), () => {});
    throw err;
  }
  if (reserved && !reserved.ok) {
    await guestReady.then((g) => g.close(), () => {});
    return { refused: reserved };
  }
  mark('charged');
  deps.onCharged?.(id);
  meter.reserve(reserved?.usd ?? limits.maxUsdPerSession);
  meter.open();
  // From here the meter's record is the session's spend (a crash keeps it).
  meter.persist = (m) => ledger.meter(id, m);
  ledger.meter(id, meter.state());
  log.info({ event: 'reserved', reserved_usd: reserved?.usd ?? null }, `reserved ${money(reserved?.usd ?? limits.maxUsdPerSession)} of the day for ${id}`);
  let tracker: StreamTracker | null = null;
  // The capture's store, opened while the CLI exits after its result; what else the end loads, too.
  const captureStore = openAhead(async () => (await import('../../memory/open.js')).openMemoryStore(config, deps.env, deps.logger));
  let readied = false;
  const readyTheEnd = () => {
    readied = true;
    captureStore.start();
    // The capture's first tombstone check builds the confusables' table (~3 ms); grading loads.
    void import('../../memory/text/tombstone-key.js').then((m) => m.fold('warm'), () => {});
    void import('../../memory/learning/session-grading.js').catch(() => {});
  };
  let fd: number | null = null;
  let lastProgress = 0;
  let run: Awaited<ReturnType<typeof runClaude>> | null = null;
  let internal: unknown = null;
  let guest: Guest | null = null;
  // The settlement the ledger could not take (a full disk): the record returned is built from it.
  let unsettled: Record<string, unknown> | null = null;
  try {
    log.info({ event: 'session_start', model: agent.model, max_turns: agent.maxTurns, timeout_ms: agent.timeoutMs }, `session ${id} started`);
    const modelTypo = agentModelWarning(config, agent);
    if (modelTypo) log.warn({ event: 'model_unknown', model: agent.model }, modelTypo);
    deps.live?.start(agent.name, startedAt);
    const t = (tracker = new StreamTracker(
      { maxRepeats: config.loop.max_repeats, window: config.loop.window, cycleRepeats: config.loop.cycle_repeats },
      null,
    ));
    const out = (fd = fs.openSync(transcript, 'a'));
    giveToFolderOwner(transcript, out);
    const g = (guest = await guestReady);
    mark('guest_ready');
    ledger.setMemory(id, guest.memory ? 'served' : 'unavailable');
    log.info({ event: 'sandbox', sandboxed: guest.sandboxed }, guest.sandboxed ? 'session sandboxed (bwrap)' : `session not sandboxed (sandbox: ${config.sandbox})`);
    run = await runClaude({
      command: guest.command,
      args: guest.args,
      inputs: guest.inputs,
      user: guest.user,
      cell: guest.cell,
      inner: guest.sandboxed ? guest.cli : null,
      cwd: config.vault,
      env: guest.env,
      sessionId: id,
      timeoutMs: agent.timeoutMs,
      idleTimeoutMs: agent.idleTimeoutMs,
      killGraceMs: config.claude.kill_grace,
      maxUsd: config.budget.max_usd_per_session,
      tracker: t,
      signal: deps.signal,
      fail: guest.hooks?.dead,
      disk: () => diskProblem(config),
      redact: deps.redact,
      subreaper: deps.subreaper ?? !guest.sandboxed,
      onSpawn: (pid) => {
        mark('cli_spawned');
        ledger.setChild(id, pid);
        g.spawned();
      },
      onLine: (line) => {
        if (keepInTranscript(line)) fs.writeSync(out, `${deps.redact(line)}\n`);
        // The result is the stream's last word: what the end needs is readied while the CLI exits
        // (a line that only looks like it readies it early, and loses nothing).
        if (!readied && line.includes('"type":"result"')) readyTheEnd();
        deps.live?.update({ turns: t.turns(), usd: t.estimatedCost(), lastTool: t.lastTool, retry: t.retry });
      },
      onStop: (reason, detail) => log.warn({ event: 'session_stop', reason, detail }, `ending session: ${reason} (${detail})`),
      onCost: () => {
        const now = Date.now();
        if (now - lastProgress >= PROGRESS_EVERY_MS) {
          lastProgress = now;
          ledger.progress(id, t.turns());
        }
      },
    });
  } catch (err) {
    internal = err;
  } finally {
    mark('cli_ended');
    if (fd !== null) {
      try {
        fs.closeSync(fd);
      } catch {
        // a failed close loses nothing the ledger needs
      }
    }
    deps.live?.stop();
    // Settled on every path, an internal failure of ours included.
    const t = tracker ?? new StreamTracker({ maxRepeats: 2, window: 1, cycleRepeats: 2 }, null);
    const endedAt = deps.now();
    // Whatever still runs in the sandbox gets no further call; what is in flight counts its worst.
    meter.close('the session is over');
    meter.dispose();
    const classified = internal || !run
      ? { outcome: 'error' as const, error: `internal: ${deps.redact((internal as Error)?.message ?? String(internal))}` }
      : classify({ spawnError: run.spawnError, stopReason: run.stopReason, stopDetail: run.stopDetail, result: t.result, exitCode: run.exitCode, signal: run.signal });
    // The proxy refused a call the reservation could not hold: the CLI ended on our 400.
    const fitted = meter.exhausted && classified.outcome === 'error' && !internal
      ? { outcome: 'budget' as const, error: `the proxy refused a call: ${meter.exhausted}` }
      : classified;
    // A refused key is the operator's to fix, in one named file: said so, not as the agent's error.
    // So is an API the proxy could not reach at all (no DNS, refused, TLS): its cause, not the CLI's
    // guess ("a server-side issue").
    const unreachable = guest?.api.unreachable ?? null;
    const named = fitted.outcome === 'error' && /API error 401\b/.test(fitted.error ?? '')
      ? { outcome: fitted.outcome, error: `the API refused the credential (401): fix ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN) in ${deps.env[ENV_FILE_VAR] ?? path.join(config.dir, 'nightshift.env')} (${fitted.error})` }
      : fitted.outcome === 'error' && unreachable
        ? { outcome: fitted.outcome, error: `the API could not be reached: ${unreachable}` }
        : fitted;
    // The stream is the session's to write: the proxy's view of the calls decides turns, an ok and
    // a rate limit. Its calls and stop are kept for walled sessions only (unwalled, the session could
    // as well write the ledger); the limit it relayed from upstream counts either way.
    const checked = checkedByProxy(named, { turns: t.turns(), claimed: t.claimedTurns(), limited: isRateLimited(t.result, t.rateLimit) }, guest?.sandboxed ? guest.api : null, guest?.api.limited ?? null);
    const { turns, disagreements } = checked;
    if (disagreements.length) {
      log.warn({ event: 'stream_disagreement', disagreements, stream_turns: t.claimedTurns(), answered: guest?.api.answered, last_stop: guest?.api.lastStop, limits: guest?.api.limits }, `the stream disagrees with what the proxy saw: ${disagreements.join('; ')}; the proxy's view is kept`);
    }
    // A disk left full (by the session, or under it) says so, whatever the CLI made of it; a full
    // disk under one of our own steps is that, not an internal error.
    const { outcome, error } = diskFullEnding(checked, lowDisks(diskFacts(config), config.limits.disk_free), config.limits.disk_free, internal);
    if (outcome === 'disk_full' && internal && isDiskFull(internal)) internal = null;
    // A rate limit holds the agent until the reset the upstream's headers gave (budget/holds.ts
    // reads it back); none given, the hold backs off.
    const retryAt = outcome === 'rate_limited' ? checked.retryAt : null;
    // The meter's cost, never the stream's: the CLI's own total is kept beside it.
    const cliCost = t.result && typeof t.result.total_cost_usd === 'number' ? t.result.total_cost_usd : null;
    const metered = meter.state();
    const cost = { usd: metered.spentUsd + metered.pendingUsd, estimated: metered.pendingUsd > 0 || metered.worstCaseCalls > 0 };
    // The CLI's figure is its own estimate (its price table, its token count), off on every
    // session: nothing for the operator to act on, so debug, both figures unrounded.
    if (costsDisagree(cost.usd, cliCost)) {
      log.debug({ event: 'cost_disagreement', cost_usd: cost.usd, cli_cost_usd: cliCost, calls: metered.calls }, `the meter counted $${cost.usd}, the CLI's own estimate was $${cliCost}: the meter's is kept`);
    }
    const tokens = t.tokens();
    // Already redacted by the runner, before it was cut.
    const stderr = run?.stderrTail.trim() ?? '';
    const fullError = error && outcome === 'error' && !t.result && stderr ? `${error}; stderr: ${stderr.slice(-500)}` : error;
    const settlement = {
      outcome,
      ended_at: endedAt.toISOString(),
      duration_ms: endedAt.getTime() - startedAt.getTime(),
      cost_usd: cost.usd,
      cost_estimated: cost.estimated,
      turns,
      exit_code: outcome === 'ok' ? EXIT.OK : EXIT.FAILED,
      // The ledger keeps a bounded summary (redacted, then cut); the transcript has the rest.
      result: capped(redactOrNull(deps.redact, t.result?.result ?? t.lastText ?? null)),
      error: capped(fullError ? deps.redact(fullError) : null),
      retry_at: retryAt,
      cli_cost_usd: cliCost,
      metered_calls: metered.calls,
      input_tokens: tokens.input + tokens.cacheRead + tokens.cacheWrite,
      output_tokens: tokens.output,
    };
    try {
      ledger.settle(open, settlement);
    } catch (err) {
      // A full disk: try the smallest row that still records the outcome, then give up (the next
      // start settles it `abandoned`, still counted).
      log.error({ event: 'settle_failed', err }, `could not settle ${id}: ${(err as Error).message}`);
      try {
        ledger.settle(open, { ...settlement, result: null, error: `${outcome === 'ok' ? '' : `${settlement.error ?? ''}; `}settle failed: ${(err as Error).message}`.slice(0, 500) });
      } catch (again) {
        // Still counted (the row is there, `running`); the hook server and its token file must
        // still be closed below, so this is remembered, not thrown from here. A full disk is no
        // bug of ours: the settlement goes to stderr (journald) whole, where the ledger cannot keep it.
        log.error({ event: 'settle_failed', err: again, settlement }, `could not settle ${id} at all: the next start settles it abandoned`);
        if (isDiskFull(again)) unsettled = settlement;
        else internal ??= again;
      }
    }
    mark('settled');
    const level = outcome === 'ok' ? 'info' : 'warn';
    log[level](
      {
        event: 'session_end', outcome, cost_usd: cost.usd, cost_estimated: cost.estimated, turns,
        duration_ms: endedAt.getTime() - startedAt.getTime(), garbage_lines: t.garbage, tool_calls: t.toolCalls,
        exit_code: run?.exitCode ?? null, signal: run?.signal ?? null, killed: run?.killed ?? 0, reaped: run?.reaped ?? null, sandboxed: guest?.sandboxed ?? false, error: fullError, transcript,
      },
      `session ${id} ended: ${outcome}`,
    );
    if (t.garbage) log.warn({ event: 'garbage', lines: t.garbage }, `${t.garbage} stdout ${noun(t.garbage, 'line')} ${t.garbage === 1 ? 'was' : 'were'} not stream-json`);
    // The API itself refused the key (a 401 the proxy relayed; no call answered): the next start
    // today refuses before the charge (budget/credential-refusal.ts).
    if (guest && guest.api.credentialRefused > 0 && guest.api.answered === 0) markRefusedKey(config, id, day, deps);
    // What the egress proxy refused, for the record and the report (null: the agent has no network).
    if (guest?.egress) {
      try {
        ledger.setEgressRefused(id, guest.egress.refused);
      } catch (err) {
        log.warn({ event: 'egress_count_failed', err }, `could not record the egress refusals: ${(err as Error).message}`);
      }
      if (guest.egress.refused) log.warn({ event: 'egress_refusals', refused: guest.egress.refused }, `the egress proxy refused ${counted(guest.egress.refused, 'connection')} of session ${id}`);
    }
    // What the wall refused at the API's socket (a peer not the CLI), likewise (null: unwalled).
    if (guest?.apiPeers) {
      try {
        ledger.setApiRefused(id, guest.apiPeers.refused);
      } catch (err) {
        log.warn({ event: 'api_refused_count_failed', err }, `could not record the API refusals: ${(err as Error).message}`);
      }
      if (guest.apiPeers.refused) log.warn({ event: 'api_refusals', refused: guest.apiPeers.refused }, `the wall refused ${counted(guest.apiPeers.refused, 'connection')} to the API from processes of session ${id} other than the CLI`);
    }
    // After the settle: neither of these can lose the session's count (they log, never throw).
    // The session's endpoints and folder go; its tokens die with them.
    await guest?.close().catch((err) => log.warn({ event: 'guest_close_failed', err }, 'closing the session\'s endpoints failed'));
    mark('guest_closed');
    await leaveBehind({
      config, env: deps.env, transcript, logger: log, redact: deps.redact,
      session: { id, agent: agent.name, outcome, turns: settlement.turns, cost_usd: settlement.cost_usd, result: settlement.result, error: settlement.error },
      openStore: captureStore.take,
    });
    await captureStore.drop();
    mark('captured');
    // FSRS grades from what the session did with memory, the injected state's memories included
    // (ignored ones are graded Hard); never fails the session (it logs instead).
    await import('../../memory/learning/session-grading.js')
      .then((m) => m.gradeSessionMemory(config, { id, outcome, transcript }, log, deps.now, state?.injected ?? [], agent.name))
      .catch((err) => log.warn({ event: 'grading_failed', err }, `memory grading failed: ${(err as Error).message}`));
  }
  mark('graded');
  if (internal) throw internal;
  if (unsettled) return toRecord({ ...open, ...unsettled, status: 'settled' } as never);
  return toRecord(ledger.get(id) ?? { ...open, status: 'settled' } as never);
}

