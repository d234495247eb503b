// Runs one CLI process under the watchdogs: wall clock, idle (no output, no sign of life), loop and
// cost ceiling.
// Ending a session is a policy: SIGINT first (the CLI then writes its result), a grace period,
// then SIGTERM and SIGKILL to every process of the session, found by tree and by marker.
import { LineSplitter } from '../stream/line-splitter.js';
import type { StopReason } from './outcome.js';
import { spawn } from 'node:child_process';
import { inputStdio, writeInputs, type ChildInput } from '../../core/child-process.js';
import { innerPid, killSession, sessionProcs, SESSION_MARKER } from '../../core/process-tree.js';
import { mono, startWatchdog, BEAT_MS, type Watchdog } from './watchdog.js';
import { EXEC_FAILED_CODE, EXEC_FAILED_RE, reaped } from './reaper.js';
import type { StreamTracker } from '../stream/stream-tracker.js';
import { mark, profileOn } from '../../core/profile.js';

export type RunnerOptions = {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  sessionId: string;
  timeoutMs: number;
  idleTimeoutMs: number;
  killGraceMs: number;
  maxUsd: number | null;
  tracker: StreamTracker;
  signal?: AbortSignal;
  // Aborted when a part of the supervisor the session relies on fails (its hook server stopped
  // answering): the session ends as an internal error, since the CLI would go on unguarded.
  fail?: AbortSignal;
  onSpawn?: (pid: number) => void;
  onLine?: (line: string) => void;
  onStop?: (reason: StopReason, detail: string) => void;
  onCost?: (usd: number) => void;
  // Applied before anything is cut: a cut can split a secret so that no redactor finds it.
  redact?: (text: string) => string;
  // Run the CLI under the subreaper (sessions/run/reaper.ts); off for the negative control and inside
  // a sandbox, whose PID namespace ends every process when its CLI exits.
  subreaper?: boolean;
  // The CLI's path when `command` wraps it (bwrap): the stop request goes to that process, since
  // the wrapper does not pass signals on.
  inner?: string | null;
  // The child's fds 3, 4, ...: bytes, each a pipe closed once written (bwrap reads the session's
  // seccomp program from fd 3), or a descriptor passed as it is (the bridge's sockets' folder).
  inputs?: ChildInput[];
  // Started as this user and group, every other group cleared (node's spawn calls setgroups(0)
  // first): a root supervisor's session_user (config/session-user.ts).
  user?: { uid: number; gid: number } | null;
  // The session's cgroup (sessions/wall/cgroup.ts): when gated, the child waits at a gate until it
  // is moved in, so nothing it forks is outside; `reached` is polled, and a bound reached ends it.
  cell?: { gated: boolean; join(pid: number): void; prime?(): Promise<void>; reached(): string | null } | null;
  // Why a disk we write is too full to go on (limits.disk_free), or null; polled, and a full disk
  // ends the session `disk_full` while our own writes still have room.
  disk?: () => string | null;
  // Who holds the wall-clock and idle limits: a thread of their own (./watchdog.ts), enforced while
  // our event loop is blocked; 'loop' (the negative control) keeps them as timers on the loop.
  watchdog?: 'thread' | 'loop';
  // Handed the runner's `alive()` once the idle limit is armed: a sign of life that is not the
  // CLI's stdout (the API proxy's bytes while an answer streams: without partial messages the CLI
  // writes nothing until a whole message has come). A no-op once the session has ended.
  signsOfLife?: (alive: () => void) => void;
};

const DISK_POLL_MS = 1000;

// How often the cell's counters are read while the session runs.
const BOUND_POLL_MS = 250;
// The gate: waits for the supervisor's line on stdin (sent once the child is in its cgroup), then
// becomes the command with stdin closed, as the CLI is otherwise started.
const GATE = ['-c', 'read -r _ && exec "$@" < /dev/null', 'nightshift-gate'];

export type RunnerResult = {
  stopReason: StopReason | null;
  stopDetail: string | null;
  spawnError: string | null;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  stderrTail: string;
  killed: number;
  // One of our own callbacks threw (a full disk under the transcript, say); the session was ended.
  internalError: string | null;
  // Whether the subreaper was in place.
  reaped: boolean;
};

export const STDERR_TAIL = 4096;
// Raw stderr kept before redaction; far more than the tail, so a secret cut at its front edge
// lies in the part that is dropped again after redacting.
const STDERR_KEEP = 64 * 1024;
const SECRET_EDGE = 1024;

// Redacts, then keeps the last `max` characters: never the other way round.
export function redactedTail(raw: string, truncated: boolean, redact: (t: string) => string, max: number): string {
  let text = redact(raw);
  // A secret split by the raw cut has its tail at the very front: drop that edge.
  if (truncated) text = text.slice(Math.min(SECRET_EDGE, text.length));
  return text.length > max ? text.slice(-max) : text;
}

export async function runClaude(o: RunnerOptions): Promise<RunnerResult> {
  const started = Date.now();
  const origin = mono();
  const redact = o.redact ?? ((t: string) => t);
  let stopReason: StopReason | null = null;
  let stopDetail: string | null = null;
  let internalError: string | null = null;
  let stderrRaw = '';
  let stderrCut = false;
  let killed = 0;
  let escalation: Promise<void> | null = null;

  // A listener of ours for SIGXFSZ: a file over the size limit then fails its write with EFBIG,
  // which the guarded callbacks turn into an ended, settled session, instead of killing us
  // unsettled (signal-exit, loaded by other modules, re-raises signals it alone listens to).
  if (!process.listeners('SIGXFSZ').includes(ignoreSignal)) process.on('SIGXFSZ', ignoreSignal);
  const wrapped = o.subreaper === false ? null : reaped(o.command, o.args);
  const gated = !!o.cell?.gated;
  // Kept warm since the session was all but certain, the lock's prime is quick, and so is the join.
  if (gated) await o.cell!.prime?.();
  const [command, args] = [wrapped?.command ?? o.command, wrapped?.args ?? o.args];
  // node's own spawn, not execa: its import is the largest cost before a session can start.
  const child = spawn(gated ? '/bin/sh' : command, gated ? [...GATE, command, ...args] : args, {
    cwd: o.cwd,
    env: { ...o.env, [SESSION_MARKER]: o.sessionId },
    stdio: [gated ? 'pipe' : 'ignore', 'pipe', 'pipe', ...inputStdio(o.inputs)],
    ...(o.user ? { uid: o.user.uid, gid: o.user.gid } : {}),
  });
  writeInputs(child, o.inputs);
  // Not yet started: the gate holds it until it is in its cgroup. A cell it cannot enter ends it
  // unstarted, as an internal error of ours.
  let gateError: string | null = null;
  if (gated && child.pid) {
    child.stdin?.on('error', () => {});
    try {
      o.cell!.join(child.pid);
      mark('cell_joined');
      child.stdin?.end('\n');
    } catch (err) {
      gateError = `placing the session in its cgroup: ${(err as Error).message}`;
      child.kill('SIGKILL');
    }
  }
  // If we exit first (an uncaught error), the CLI is not left running unwatched.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const ended = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; error: NodeJS.ErrnoException | null }>((resolve) => {
    let error: NodeJS.ErrnoException | null = null;
    child.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err;
      if (child.pid === undefined) resolve({ exitCode: null, signal: null, error });
    });
    child.on('exit', () => mark('child_exit'));
    child.on('close', (exitCode, signal) => resolve({ exitCode, signal, error }));
  }).finally(() => process.removeListener('exit', killOnExit));

  let dog: Watchdog | null = null;
  // The watchdog thread's stop, heard once the loop is free: it has signalled and escalates itself.
  const adopt = (reason: StopReason, detail: string) => {
    if (stopReason) return;
    stopReason = reason;
    stopDetail = detail;
    o.onStop?.(reason, detail);
  };
  const stop = (reason: StopReason, detail: string) => {
    if (stopReason) return;
    // The thread stopped it first (its message not yet read): its reason stands.
    if (dog && !dog.claim()) return;
    stopReason = reason;
    stopDetail = detail;
    o.onStop?.(reason, detail);
    try {
      const cli = o.inner && child.pid ? innerPid(child.pid, o.inner) : null;
      if (cli) process.kill(cli, 'SIGINT');
      else child.kill('SIGINT');
    } catch {
      // not running
    }
    // The CLI gets the grace period to write its result; then the whole session goes.
    escalation = new Promise<void>((resolve) => {
      let escalating = false;
      const t = setTimeout(async () => {
        escalating = true;
        killed += await killSession(child.pid ?? null, o.sessionId, Math.min(2000, o.killGraceMs || 500));
        resolve();
      }, o.killGraceMs);
      // The CLI ended within the grace: no escalation. Once begun, it runs to its end.
      void ended.finally(() => {
        if (escalating) return;
        clearTimeout(t);
        resolve();
      });
    });
  };

  // A callback of ours that throws must not leave the CLI running unwatched: end the session.
  const guard = <A extends unknown[]>(what: string, fn: ((...a: A) => void) | undefined) => (...a: A) => {
    try {
      fn?.(...a);
    } catch (err) {
      if (!internalError) internalError = `${what}: ${redact((err as Error)?.message ?? String(err))}`;
      stop('internal', internalError);
    }
  };
  if (gateError) {
    internalError = gateError;
    stop('internal', gateError);
  }
  const onLineCb = guard('writing the transcript', o.onLine);
  const onCostCb = guard('recording the running cost', o.onCost);
  if (child.pid) guard('recording the spawn', o.onSpawn)(child.pid);
  const splitter = new LineSplitter();
  // The limits on the loop: the control, and the fallback should the thread fail (never unwatched).
  let idle: NodeJS.Timeout | null = null;
  let wallClock: NodeJS.Timeout | null = null;
  let loopTimers = false;
  const armIdle = () => {
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => stop('stalled', `no output for ${o.idleTimeoutMs} ms`), o.idleTimeoutMs);
  };
  const keepLimitsOnLoop = () => {
    if (loopTimers) return;
    loopTimers = true;
    armIdle();
    wallClock = setTimeout(() => stop('timeout', `session ran past ${o.timeoutMs} ms`), Math.max(0, o.timeoutMs - (mono() - origin)));
  };
  let beat: NodeJS.Timeout | null = null;
  if (o.watchdog !== 'loop' && child.pid && !stopReason) {
    dog = startWatchdog(
      { origin, timeoutMs: o.timeoutMs, idleTimeoutMs: o.idleTimeoutMs, killGraceMs: o.killGraceMs, root: child.pid, sessionId: o.sessionId, inner: o.inner ?? null },
      (s) => adopt(s.reason, s.detail),
      () => keepLimitsOnLoop(),
    );
    beat = setInterval(() => dog?.beat(), BEAT_MS);
  } else keepLimitsOnLoop();
  let over = false;
  const alive = () => {
    if (over) return;
    dog?.output();
    if (loopTimers) armIdle();
  };
  o.signsOfLife?.(alive);
  const reached = () => {
    const why = o.cell?.reached() ?? null;
    if (why) stop('bound', why);
  };
  const boundPoll = o.cell?.gated ? setInterval(guard('reading the session\'s cgroup', reached), BOUND_POLL_MS) : null;
  const diskFull = () => {
    const why = o.disk?.() ?? null;
    if (why) stop('disk_full', why);
  };
  const diskPoll = o.disk ? setInterval(guard('reading the free space', diskFull), DISK_POLL_MS) : null;
  const onAbort = () => stop('canceled', String(o.signal?.reason ?? 'aborted'));
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
  const onFail = () => stop('internal', String(o.fail?.reason ?? 'a supervisor part failed'));
  if (o.fail?.aborted) onFail();
  else o.fail?.addEventListener('abort', onFail, { once: true });

  // Whether the command wrote anything at all: one that never started wrote nothing.
  let wroteLines = false;
  const profiling = profileOn();
  const onLine = (line: string, truncated: boolean) => {
    if (!wroteLines) mark('first_line');
    if (profiling && line.includes('"type":"result"')) mark('result_line');
    wroteLines = true;
    // A line cut for length may begin mid-secret: it is counted, never written.
    if (truncated) {
      o.tracker.garbage++;
      return;
    }
    onLineCb(line);
    for (const ev of o.tracker.feedLine(line)) {
      if (ev.type === 'loop') stop('loop', `${ev.verdict.kind}: ${redact(ev.verdict.key).slice(0, 200)} x${ev.verdict.count}`);
      if (ev.type === 'cost') {
        onCostCb(ev.usd);
        if (o.maxUsd !== null && ev.usd > o.maxUsd) stop('budget', `estimated $${ev.usd.toFixed(4)} passed the session ceiling $${o.maxUsd}`);
      }
    }
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    alive();
    try {
      splitter.push(chunk, onLine);
    } catch (err) {
      // Our own bug in reading the stream: the session still ends settled, never unwatched.
      guard('reading the stream', () => {
        throw err;
      })();
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderrRaw += chunk;
    if (stderrRaw.length > STDERR_KEEP) {
      stderrRaw = stderrRaw.slice(-STDERR_KEEP);
      stderrCut = true;
    }
  });

  const result = await ended;
  over = true;
  if (beat) clearInterval(beat);
  // The thread's stop whose message is still on its way: the kill was its, and so is the reason.
  const byThread = dog?.claimed() ?? null;
  if (byThread) {
    adopt(byThread.reason, byThread.detail);
    killed += await dog!.escalated;
  }
  dog?.close();
  try {
    splitter.end(onLine);
  } catch {
    // the last partial line: nothing to act on
  }
  if (idle) clearTimeout(idle);
  if (wallClock) clearTimeout(wallClock);
  if (boundPoll) clearInterval(boundPoll);
  if (diskPoll) clearInterval(diskPoll);
  // A bound reached just before the end (the kernel's OOM ended the CLI itself) is still why.
  if (!stopReason && o.cell?.gated) guard('reading the session\'s cgroup', reached)();
  o.signal?.removeEventListener('abort', onAbort);
  o.fail?.removeEventListener('abort', onFail);
  if (escalation) await escalation;
  // Whatever way it ended, nothing the session started may outlive it.
  if (sessionProcs(null, o.sessionId).length) killed += await killSession(null, o.sessionId, 1000);

  const execFailed = wrapped && result.exitCode === EXEC_FAILED_CODE ? EXEC_FAILED_RE.exec(stderrRaw) : null;
  let spawnError: string | null = null;
  if (!stopReason && execFailed) spawnError = spawnMessage(Object.assign(new Error(''), { code: errnoName(Number(execFailed[1])) }), o.command);
  else if (result.error && result.exitCode === null && result.signal === null && !stopReason) spawnError = spawnMessage(result.error, o.command);
  // The gate's exec failed (sh says so, 127 or 126): the command never started.
  // Only with no line written: the session's own stderr could say the same words.
  else if (gated && !wrapped && !stopReason && !wroteLines && (result.exitCode === 127 || result.exitCode === 126) && /^nightshift-gate: \d+: exec: /m.test(stderrRaw)) {
    spawnError = spawnMessage(Object.assign(new Error(''), { code: result.exitCode === 127 ? 'ENOENT' : 'EACCES' }), o.command);
  }
  // Under rlimits prlimit execs the command: its failing to is the same never-started.
  else if (!stopReason && !wroteLines && (result.exitCode === 127 || result.exitCode === 126) && PRLIMIT_EXEC_RE.test(stderrRaw)) {
    spawnError = spawnMessage(Object.assign(new Error(''), { code: result.exitCode === 127 ? 'ENOENT' : 'EACCES' }), PRLIMIT_EXEC_RE.exec(stderrRaw)![1]);
  }
  return {
    stopReason,
    stopDetail,
    spawnError,
    exitCode: result.exitCode,
    signal: result.signal,
    durationMs: Date.now() - started,
    stderrTail: redactedTail(stderrRaw, stderrCut, redact, STDERR_TAIL),
    killed,
    internalError,
    reaped: !!wrapped,
  };
}

const ignoreSignal = () => undefined;

const errnoName = (n: number) => (n === 2 ? 'ENOENT' : n === 13 ? 'EACCES' : `errno ${n}`);

const PRLIMIT_EXEC_RE = /^prlimit: failed to execute (.+?): /m;

function spawnMessage(err: NodeJS.ErrnoException, command: string): string {
  if (err.code === 'ENOENT') return `cannot start \`${command}\`: not found (claude.command)`;
  if (err.code === 'EACCES') return `cannot start \`${command}\`: permission denied (claude.command)`;
  return `cannot start \`${command}\`: ${err.message || 'unknown error'}`;
}
