// A chosen session, from the budget's verdict to its report: the refusals before the charge, the
// vault's steps before (./session-vault.ts: the pull, a worktree beside other sessions), the
// charged session itself (./session-run.ts), the vault's steps after (commit and push, or the
// worktree landed), the ledger's git record, Discord. Loaded by ./supervise.ts only once a session
// is chosen.
import { mark } from '../../core/profile.js';
import { counted } from '../../core/words.js';
import fs from 'node:fs';
import type { Ledger } from '../../budget/ledger.js';
import { canStart } from '../../budget/policy.js';
import { windowHold } from '../../budget/windows.js';
import { money } from '../../core/money.js';
import { checkSandbox } from '../../sessions/wall/sandbox-check.js';
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { ConfigError } from '../../core/errors.js';
import { untrustedGitMarker } from '../../vault/git-guard.js';
import { lateness, uptimeMs } from '../schedule/late.js';
import { notARepoProblem, VaultGit, type GitReport } from '../../vault/git-sync.js';
import { changedProjectFiles, recordProjectFileChange, snapshotProjectFiles } from '../../sessions/wall/project-files.js';
import { reportBackoff, reportSession } from '../../report/session-report.js';
import { recurringNoteFor } from '../health/anneal-check.js';
import { currentHolds, settledChange, type FleetHoldView } from '../schedule/holds.js';
import type { RunDeps, SuperviseResult } from './types.js';
import { refuseBeforeCharge } from './session-refusals.js';
import { budgetLimits, newSessionId, runOpened } from './session-run.js';
import { vaultBefore } from './session-vault.js';
import { beginSessionSpan, endSessionSpan } from './session-trace.js';

export { budgetLimits, costsDisagree, diskFullEnding, newSessionId } from './session-run.js';

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

export async function runChosen(config: Config, choice: { agent: Agent; reason: string; fleet?: FleetHoldView }, o: Opened, deps: RunDeps): Promise<SuperviseResult> {
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
  refuseBeforeCharge(config, agent, day, deps);
  const vault = config.git.enabled ? new VaultGit(config, deps.logger, signal, deps.gitChecks) : null;
  // Its git steps are spans of the fire (telemetry on).
  if (vault && deps.trace) vault.trace = deps.trace;
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
  const id = newSessionId(agent.name, startedAt);
  const before = await vaultBefore(config, id, { vault, inRepo, untrusted, git, startedAt, deps });
  mark('pulled');
  if ('skip' in before) return skip(before.skip);
  // The config the session runs with: beside other sessions, its worktree is its vault.
  const scfg = before.config;
  // Nothing is charged after a stop request.
  if (signal.aborted) {
    await before.undo();
    return stopped();
  }
  const late = lateness({ slot: deps.slot ?? null, startedAt, uptimeMs: uptimeMs(() => fs.readFileSync('/proc/uptime', 'utf8')), byTimer: /\.timer$/.test(deps.env.TRIGGER_UNIT ?? '') });
  if (late) deps.logger.warn({ event: 'late', agent: agent.name, slot: deps.slot?.toISOString() ?? null }, `${agent.name}: ${late}`);
  const projectBefore = snapshotProjectFiles(scfg.vault);
  mark('before_open');
  // Its trace span (./session-trace.ts): the proxy, the hooks and memory put theirs under it.
  const span = beginSessionSpan(config, agent, deps.trace);
  let opened: Awaited<ReturnType<typeof runOpened>>;
  try {
    opened = await runOpened(scfg, agent, id, ledger, startedAt, day, { ...deps, signal, trace: span }, options.force, inRepo);
  } catch (err) {
    span.fail(String((err as Error)?.message ?? err));
    span.end();
    // Refused before the charge (the log folder, the ledger): what the vault's steps made goes.
    if (!ledger.get(id)) await before.undo();
    throw err;
  }
  // The day's room was taken between the check above and the charge: nothing started.
  if ('refused' in opened) {
    span.fail(opened.refused.reason);
    span.end();
    await before.undo();
    return skip(opened.refused.reason, opened.refused.limit);
  }
  const session = opened;
  mark('session_over');
  // Across a fleet, this host's hold on the agent as its ledger now decides it (or none), written
  // through for every host's dispatch; spooled when the database does not take it.
  if (deps.fleet && deps.fleet.switches.holds !== false) {
    const hold = currentHolds(config, ledger, deps.now())[agent.name] ?? null;
    await deps.fleet.write({ kind: 'hold', agent: agent.name, hold, at: deps.now().toISOString() }).catch((err: unknown) => {
      deps.logger.error({ event: 'fleet_hold_unwritten', agent: agent.name, err: deps.redact(String((err as Error)?.message ?? err)) }, `${agent.name}: its hold could not be written to the fleet's database: ${deps.redact(String((err as Error)?.message ?? err))}`);
    });
  }
  const projectFiles = changedProjectFiles(projectBefore, snapshotProjectFiles(scfg.vault));
  if (projectFiles.length) {
    deps.logger.warn({ event: 'project_files_changed', files: projectFiles, loaded: config.claude.project_settings }, `${agent.name}: the session changed the CLI's project files ${projectFiles.map((f) => JSON.stringify(f)).join(', ')}${config.claude.project_settings ? ' (claude.project_settings: the next session loads them)' : ' (never loaded: claude.project_settings is off)'}`);
    // For the next sessions' state, quoted as data (sessions/state/state.ts).
    try {
      recordProjectFileChange(config.state_dir, scfg.vault, { session: session.id, agent: agent.name, at: deps.now().toISOString(), files: projectFiles, loaded: config.claude.project_settings }, deps.redact);
    } catch (err) {
      deps.logger.warn({ event: 'project_files_record_failed', err }, `could not record the project file change for the next state: ${(err as Error).message}`);
    }
  }
  await before.after(session);
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
  // Its trace, for the report, the log line and run --json (telemetry on).
  if (span.traceId) session.trace_id = span.traceId;
  deps.logger.info({ event: 'report', sessionId: session.id, trace_id: span.traceId ?? undefined, agent: agent.name, outcome: session.outcome, cost_usd: session.cost_usd, turns: session.turns, git }, `${agent.name}: ${session.outcome}, ${money(session.cost_usd)}, ${counted(session.turns, 'turn')}${session.retry_at ? `, held until ${session.retry_at}` : ''}`);
  // Discord, after the ledger and the commit; it never changes the result or the exit code.
  await reportSession(config, { session, model: agent.model, git: vault ? git : null, day, today: ledger.dayTotals(day), late, recurring: recurringNoteFor(config, ledger, session), projectFiles: projectFiles.length ? { files: projectFiles, loaded: config.claude.project_settings } : null }, deps);
  mark('reported');
  endSessionSpan(span, session, vault ? git : null);
  // The backoff beginning or ending is told once, on the session that made it so.
  const change = settledChange(config, ledger, agent.name, choice.fleet);
  if (change) {
    const hold = currentHolds(config, ledger, deps.now(), choice.fleet)[agent.name] ?? null;
    deps.logger.warn({ event: `backoff_${change.change}`, agent: agent.name, failures: change.failures, until: hold?.until ?? null }, change.change === 'started'
      ? `${agent.name}: backed off after ${counted(change.failures, 'failure')} in a row${hold ? `, until ${hold.until}` : ''}`
      : `${agent.name}: recovered after ${counted(change.failures, 'failure')} in a row`);
    await reportBackoff(config, { agent: agent.name, ...change, until: hold?.until ?? null, session: session.id }, deps);
  }
  return { action: 'session', reason: choice.reason, limit: null, session, git, late };
}
