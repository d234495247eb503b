// A charged session end to end: the charge and its reservation, the guest (the wall, the
// endpoints, the meter), the CLI under its watchdogs, and the settle on every path, then its
// capture and grading. ./session.ts runs it between the vault's steps.
import { mark } from '../../core/profile.js';
import { counted, noun } from '../../core/words.js';
import { giveToFolderOwner } from '../../core/file-access.js';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Ledger, OpenSession } from '../../budget/ledger.js';
import { SessionMeter } from '../../budget/meter.js';
import { chargeFor, chargeGuard, type Charge, type DayTotals, type Limits } from '../../budget/policy.js';
import type { FleetDb } from '../../budget/fleet-db.js';
import { releaseInFleet, reserveInFleet } from '../../budget/fleet-reservations.js';
import { windowsFrom } from '../../budget/windows.js';
import { money } from '../../core/money.js';
import type { Redactor } from '../../core/redact.js';
import { claudeArgs } from '../../sessions/run/command.js';
import { prepareGuest, type Guest } from '../../sessions/wall/guest.js';
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
import { EXIT } from '../../core/errors.js';
import { credentialFrom } from '../../sessions/wall/api-proxy.js';
import { toRecord, type SessionRecord } from '../../budget/session-record.js';
import type { RunDeps } from './types.js';
import { version } from '../../core/version.js';
import { ENV_FILE_VAR } from '../../config/env-file.js';
import { credentialFingerprint, envFileIdentity, writeRefusal } from '../../budget/credential-refusal.js';
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

// `id`: the session's, made by ./session.ts (its worktree is named by it).
export async function runOpened(config: Config, agent: Agent, id: string, ledger: Ledger, startedAt: Date, day: string, deps: RunDeps, force: boolean, repo: boolean): Promise<SessionRecord | { refused: Extract<Charge, { ok: false }> }> {
  const log = deps.logger.child({ sessionId: id, agent: agent.name, ...(deps.trace?.traceId ? { trace_id: deps.trace.traceId } : {}) });
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
  let alive = () => {};
  const meter = new SessionMeter({ reservationUsd: 0, prices: config.budget.prices, serverTools: agent.serverTools, warn: (o, m) => log.warn(o, m) });
  meter.close('the session has no reservation yet');
  const stateBuilt = prepareSessionState({ config, agent, sessionId: id, ledger, now: startedAt, transcript, redact: deps.redact, logger: log, excludeOnlyWithGit: deps.gitChecks?.excludeAlways === false, repo });
  const guestReady = prepareGuest(
    {
      config, agent, sessionId: id, env: deps.env, logger: log, redact: deps.redact, state: stateBuilt.then((s) => s?.text ?? null), version: version(),
      meter,
      trace: deps.trace,
      // The API's bytes are the session's sign of life while an answer streams (the CLI's stdout is
      // silent until the whole message has come): the runner's idle limit hears of them.
      onActivity: () => alive(),
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
  // Across a fleet, the day's reservation is the fleet's (budget/fleet-reservations.ts), taken first
  // under the day's lock there; the local ledger then records the charge with what it took.
  let shared: FleetDb | null = null;
  try {
    // --force runs past the day's cap with the session's own ceiling.
    const decide = (today: DayTotals) => chargeFor(agent.name, today, limits, force);
    if (deps.fleet) {
      shared = await deps.fleet.get();
      const inFleet = await reserveInFleet(shared, { session: id, day, agent: agent.name, host: deps.fleet.host, expiresInMs: agent.timeoutMs + config.claude.kill_grace + deps.fleet.grace }, decide, (usd) => chargeGuard(limits, usd));
      try {
        reserved = inFleet.ok ? ledger.open(open, () => ({ ok: true as const, usd: inFleet.usd })) : (inFleet as Charge);
      } catch (err) {
        await releaseInFleet(shared, id).catch(() => {});
        throw err;
      }
    } else {
      reserved = ledger.open(open, decide);
    }
  } catch (err) {
    await guestReady.then((g) => g.close(), () => {});
    throw err;
  }
  if (reserved && !reserved.ok) {
    await guestReady.then((g) => g.close(), () => {});
    return { refused: reserved };
  }
  mark('charged');
  // The heartbeat keeps the fleet's reservation ahead of its expiry and writes the spend through
  // (what the session committed: a dead host's in-flight calls counted at their worst case).
  const unholdShared = shared && deps.fleet ? deps.fleet.holdReservation(id, () => meter.committedUsd()) : () => {};
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
      watchdog: deps.watchdog,
      signsOfLife: deps.proxyLife === false ? undefined : (f) => (alive = f),
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
    // The fleet's reservation: the spend recorded, the rest back to the day. Unreachable now, the
    // settle is spooled for the next start (the reservation, until then, expires at its time and
    // counts the spend the heartbeat wrote through).
    unholdShared();
    if (shared && deps.fleet) await deps.fleet.write({ kind: 'settle', session: id, spent_usd: cost.usd }).catch((err: unknown) => {
      log.error({ event: 'fleet_settle_failed', err: deps.redact(String((err as Error)?.message ?? err)) }, `could not settle ${id} in the fleet's database: ${deps.redact(String((err as Error)?.message ?? err))}`);
    });
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
