// The one path every start takes, a session or not: the run lock, the ledger, what earlier starts
// left owing (abandoned sessions, the memory spool, the outbox), then the choice. Only a chosen
// session loads the session machinery (./session.ts), so a tick with nothing due stays light:
// the timer fires it all day.
import { mark } from '../../core/profile.js';
import fs from 'node:fs';
import path from 'node:path';
import { dayOf } from '../../config/day.js';
import { Ledger, ledgerFile } from '../../budget/ledger.js';
import { emptyGitReport } from '../../budget/session-record.js';
import { spoolDir } from '../../memory/store/spool.js';
import { outboxFile } from '../../report/outbox.js';
import { sweepSessionDirs } from '../../sessions/wall/session-dirs.js';
import type { Config } from '../../config/schema.js';
import { DiskFullError, EXIT } from '../../core/errors.js';
import { diskProblem } from '../../config/disk-space.js';
import { acquireLock, lockOwner, type Held } from '../../core/lock.js';
import { isAlive } from '../../core/process-tree.js';
import { sessionConfig, vaultOf } from '../../config/rules.js';
import { untrustedGitMarker } from '../../vault/git-guard.js';
import { worktreesDir } from '../../vault/worktree-paths.js';
import { atCapacity, slotOwners, START_WAIT_MS, startFile, takeSlot, vaultTurnFile } from './slots.js';
import { followUpAbandoned } from './abandoned.js';
import { superviseDream } from './dream-tick.js';
import { reconcile } from './reconcile.js';
import type { Choice, RunDeps, SuperviseResult } from './types.js';
import { counted, noun } from '../../core/words.js';

// The one path of a session, shared by `run` and `tick`: run lock -> reconcile -> choose ->
// budget -> git pull -> session -> git commit/push. Skips (locked, nothing due, a limit, a stop
// request before the charge) are returned, not thrown; the caller decides what they mean for its
// exit code.
export async function supervise(
  config: Config,
  // busy: why an agent cannot start now (running, or its vault in use), or null.
  choose: (ledger: Ledger, now: Date, day: string, busy: (agent: string) => string | null) => Choice | Promise<Choice>,
  // refuse: the caller turns a skip into a refusal (run), which is logged once, as the refusal.
  // probe: the sandbox's probe, started by a caller for whom a session is all but certain (run).
  options: { force: boolean; refuse?: boolean; probe?: Promise<string | null> },
  deps: RunDeps,
): Promise<SuperviseResult> {
  const git = emptyGitReport();
  const skip = (reason: string, limit: string | null = null): SuperviseResult => {
    deps.logger[options.refuse ? 'debug' : 'info']({ event: 'skipped', reason, limit }, `skipped: ${reason}`);
    return { action: 'skip', reason, limit, session: null, git };
  };
  if (deps.signal?.aborted) return skip(`stop requested (${String(deps.signal.reason)}) before the session started`, 'stopped');
  // Before the first write of ours (the lock itself is one): a full disk refuses the start, said.
  const full = diskProblem(config);
  if (full) throw new DiskFullError(`Refused: ${full}: no session starts until there is room (see nightshift doctor)`);
  mark('disk_checked');
  // A slot for the session's whole life (slot 1 is the run lock: with max_concurrent 1, one
  // supervisor at a time, as ever), then, beside other sessions, the start lock until the charge.
  const n = config.sessions.max_concurrent;
  const slot = await takeSlot(config.state_dir, n, { logger: deps.logger, signal: deps.signal });
  if (!slot) return skip(atCapacity(n, slotOwners(config.state_dir, n)), 'lock');
  let start: Held | null = null;
  if (n > 1) {
    start = await acquireLock(startFile(config.state_dir), { timeoutMs: START_WAIT_MS, purpose: 'start', logger: deps.logger, signal: deps.signal });
    if (!start) {
      await slot.held.release();
      const owner = lockOwner(startFile(config.state_dir));
      return skip(`locked: another supervisor has been starting a session for ${START_WAIT_MS / 1000} s${owner ? ` (pid ${owner.pid} since ${owner.since})` : ''}`, 'lock');
    }
  }
  const startDone = async () => {
    const s = start;
    start = null;
    await s?.release();
  };
  // A stop request, or a lock taken from us, ends whatever step is under way.
  const lost = [slot.held.lost, ...(start ? [(start as Held).lost] : [])];
  const signal = AbortSignal.any([...(deps.signal ? [deps.signal] : []), ...lost]);
  const stopped = () => skip(`stop requested (${String(signal.reason)}) before the session started: nothing charged`, 'stopped');
  let ledger: Ledger | null = null;
  let turn: Held | null = null;
  try {
    mark('run_lock');
    ledger = Ledger.open(ledgerFile(config), { chargeOn: deps.chargeOn });
    mark('ledger_open');
    await reconcile(ledger, deps);
    // Sessions other supervisors run now keep their folders (none is half made: we hold the start).
    const running = ledger.live(isAlive);
    sweepSessionDirs(config, deps.logger, new Set(running.map((r) => r.id)));
    // What earlier sessions left behind that the store could not take then, oldest first.
    await storeSpooled(config, deps);
    // What a dead supervisor's sessions are owed: their report and their capture, once; and the
    // work in their worktrees, landed (vault/worktrees.ts).
    await followUpAbandoned(config, ledger, deps);
    const liveIds = new Set(running.map((r) => r.id));
    if (deps.gitChecks?.landLeft !== false && leftWorktrees(config.state_dir, liveIds)) await (await import('./session-vault.js')).landLeftWorktrees(config, ledger, liveIds, deps, signal);
    // Reports earlier runs could not deliver, oldest first (bounded by discord.timeout, webhook.timeout).
    if ((deps.env.DISCORD_WEBHOOK_URL || deps.env.NIGHTSHIFT_WEBHOOK_URL) && fs.existsSync(outboxFile(config.state_dir))) await (await import('../../report/session-report.js')).drainOutbox(config, deps);
    mark('leftovers_settled');
    const startedAt = deps.now();
    const day = dayOf(startedAt, config.budget.timezone);
    // An agent already running cannot start now; nor one whose vault another session works in,
    // where sessions cannot have a worktree each (git off, or untrusted): they take turns.
    const turns = sharingTakesTurns(config);
    const busy = (agent: string): string | null => {
      const mine = running.find((r) => r.agent === agent);
      if (mine) return `${agent} is running (session ${mine.id}, pid ${mine.supervisor_pid})`;
      if (!turns) return null;
      const vault = vaultOf(config, agent);
      const other = running.find((r) => vaultOf(config, r.agent) === vault);
      return other ? `its vault ${vault} is in use by ${other.agent} (session ${other.id}): sessions sharing a vault take turns` : null;
    };
    const choice = await choose(ledger, startedAt, day, busy);
    mark('chosen');
    if ('skip' in choice) return skip(choice.skip);
    if ('agent' in choice) {
      const why = busy(choice.agent.name);
      if (why) return skip(`${choice.agent.name} cannot start now: ${why}`, 'busy');
      // The vault's turn, for the session's whole life (beside other sessions only: alone, the slot
      // is the run lock, as ever).
      if (n > 1 && turns) turn = await acquireLock(vaultTurnFile(config.state_dir, vaultOf(config, choice.agent.name)), { timeoutMs: 0, purpose: `vault of ${choice.agent.name}`, logger: deps.logger, signal });
      if (n > 1 && turns && !turn) return skip(`${choice.agent.name} cannot start now: its vault ${vaultOf(config, choice.agent.name)} is in use by another session: sessions sharing a vault take turns`, 'busy');
    }
    if ('dream' in choice) {
      // A stop request or a lost run lock ends the dream early, like a session.
      const dream = await superviseDream(config, choice.dream, { ...deps, signal });
      return { action: 'dream', reason: choice.dream, limit: null, session: null, git, dream };
    }
    // Only a session loads the session machinery (the probe's module included): a tick with nothing
    // due stays light. The sandbox probe and git's answer whether the vault is a work tree (each a
    // child process) run while the rest loads.
    // The session's config: the agent's own vault in the vault's place (vaults.<agent>).
    const cfg = sessionConfig(config, choice.agent.name);
    const probe = (options.probe ?? startProbe(cfg, deps)).finally(() => mark('probe_done'));
    probe.catch(() => {});
    const vaultRepo = cfg.git.enabled ? import('../../vault/git-sync.js').then((m) => m.vaultIsRepo(cfg, deps.logger, signal, deps.gitChecks)).finally(() => mark('git_answered')) : undefined;
    vaultRepo?.catch(() => {});
    const session = await import('./session.js');
    mark('session_loaded');
    // Once charged, the next supervisor may start beside this session.
    const onCharged = (id: string) => {
      deps.onCharged?.(id);
      void startDone();
    };
    return await session.runChosen(cfg, choice, { ledger, startedAt, day, options, signal, git, skip, stopped, sandboxProbe: probe, vaultRepo }, { ...deps, onCharged });
  } finally {
    ledger?.close();
    await startDone();
    await turn?.release();
    await slot.held.release();
  }
}

// Any worktree of a session not running now (one readdir; nothing loads when there is none).
function leftWorktrees(stateDir: string, live: Set<string>): boolean {
  try {
    return fs.readdirSync(worktreesDir(stateDir)).some((id) => !live.has(id));
  } catch {
    return false;
  }
}

// Sessions sharing a vault take turns where each cannot work in a worktree of its own: git off,
// or a .git a session left that nightshift does not trust (vault/worktrees.ts).
export function sharingTakesTurns(config: Config): boolean {
  return !config.git.enabled || fs.existsSync(untrustedGitMarker(config.state_dir));
}

// The sandbox's probe (sessions/wall/sandbox.ts): null when a session may run walled.
// With it, the cgroup lock's prime (sessions/wall/cgroup.ts), so the session's cell is joined quickly.
export function startProbe(config: Config, deps: Pick<RunDeps, 'env' | 'sessionUser'>): Promise<string | null> {
  void import('../../sessions/wall/cgroup.js').then((m) => m.primeOwnCgroup({ pids: config.limits.pids, memory: config.limits.memory }), () => {});
  const probe = import('../../sessions/wall/sandbox.js').then((m) => m.sandboxProbe(config, deps.env, deps.sessionUser !== false));
  probe.catch(() => {});
  return probe;
}

// The exit code of a supervised session: 1 also when git left the work uncommitted, so that
// OnFailure= fires (an unreachable remote alone is not a failure: the next tick pushes).
export function exitCodeOf(r: Pick<SuperviseResult, 'session' | 'git' | 'dream'>): number {
  if (r.dream) return r.dream.ok ? EXIT.OK : EXIT.FAILED;
  if (!r.session) return EXIT.OK;
  // As a shell reports a command ended by Ctrl-C.
  if (r.session.outcome === 'interrupted') return EXIT.INTERRUPTED;
  return r.session.exit_code !== EXIT.OK || r.git.uncommitted ? EXIT.FAILED : EXIT.OK;
}

// Stores the spool (sessions/capture/capture-spool.ts); never fails the start: what is left waits. An
// empty spool loads nothing.
async function storeSpooled(config: Config, deps: RunDeps): Promise<void> {
  const dir = spoolDir(config.state_dir);
  if (!fs.existsSync(dir) || !fs.readdirSync(dir).length) return;
  const [{ drainSpool }, { applyLeft }] = await Promise.all([import('../../sessions/capture/capture-spool.js'), import('../../sessions/capture/capture.js')]);
  const r = await drainSpool({ dir: spoolDir(config.state_dir), apply: applyLeft, open: async () => (await import('../../memory/open.js')).openMemoryStore(config, deps.env, deps.logger) });
  if (r.batches) deps.logger.info({ event: 'spool_stored', ...r }, `stored ${r.batches} spooled ${noun(r.batches, 'batch', 'batches')} of what earlier sessions left behind (${r.stored} stored, ${r.skipped} already in)`);
  if (r.error) deps.logger.warn({ event: 'spool_waiting', ...r }, `the memory spool waits for the next start (${counted(r.left, 'batch', 'batches')}): ${deps.redact(r.error)}`);
  if (r.unreadable.length) deps.logger.warn({ event: 'spool_unreadable', files: r.unreadable }, `spooled batches that cannot be read were left as they are: ${r.unreadable.join(', ')}`);
}
