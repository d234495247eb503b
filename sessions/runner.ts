// Runs one CLI process under the watchdogs: wall clock, idle (no output), loop and cost ceiling.
// Ending a session is a policy: SIGINT first (the CLI then writes its result), a grace period,
// then SIGTERM and SIGKILL to every process of the session, found by tree and by marker.
import { LineSplitter } from './line-splitter.js';
import type { StopReason } from './outcome.js';
import { killSession, sessionProcs, SESSION_MARKER } from './process-tree.js';
import type { StreamTracker } from './stream-tracker.js';

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
  onSpawn?: (pid: number) => void;
  onLine?: (line: string) => void;
  onStop?: (reason: StopReason, detail: string) => void;
  onCost?: (usd: number) => void;
};

export type RunnerResult = {
  stopReason: StopReason | null;
  stopDetail: string | null;
  spawnError: string | null;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  stderrTail: string;
  killed: number;
};

const STDERR_TAIL = 4096;

export async function runClaude(o: RunnerOptions): Promise<RunnerResult> {
  const started = Date.now();
  let stopReason: StopReason | null = null;
  let stopDetail: string | null = null;
  let stderrTail = '';
  let killed = 0;
  let escalation: Promise<void> | null = null;

  // Loaded on first use: execa is the heaviest import, and a tick with nothing due never spawns.
  const { execa } = await import('execa');
  const child = execa(o.command, o.args, {
    cwd: o.cwd,
    env: { ...o.env, [SESSION_MARKER]: o.sessionId },
    extendEnv: false,
    stdin: 'ignore',
    buffer: false,
    reject: false,
    cleanup: true,
    encoding: 'utf8',
  });

  const stop = (reason: StopReason, detail: string) => {
    if (stopReason) return;
    stopReason = reason;
    stopDetail = detail;
    o.onStop?.(reason, detail);
    try {
      child.kill('SIGINT');
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
      void child.finally(() => {
        if (escalating) return;
        clearTimeout(t);
        resolve();
      });
    });
  };

  if (child.pid) o.onSpawn?.(child.pid);
  const splitter = new LineSplitter();
  let idle: NodeJS.Timeout | null = null;
  const armIdle = () => {
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => stop('stalled', `no output for ${o.idleTimeoutMs} ms`), o.idleTimeoutMs);
  };
  armIdle();
  const wallClock = setTimeout(() => stop('timeout', `session ran past ${o.timeoutMs} ms`), o.timeoutMs);
  const onAbort = () => stop('canceled', String(o.signal?.reason ?? 'aborted'));
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });

  const onLine = (line: string, truncated: boolean) => {
    o.onLine?.(line);
    if (truncated) {
      o.tracker.garbage++;
      return;
    }
    for (const ev of o.tracker.feedLine(line)) {
      if (ev.type === 'loop') stop('loop', `${ev.verdict.kind}: ${ev.verdict.key.slice(0, 200)} x${ev.verdict.count}`);
      if (ev.type === 'cost') {
        o.onCost?.(ev.usd);
        if (o.maxUsd !== null && ev.usd > o.maxUsd) stop('budget', `estimated $${ev.usd.toFixed(4)} passed the session ceiling $${o.maxUsd}`);
      }
    }
  };
  child.stdout?.on('data', (chunk: string) => {
    armIdle();
    splitter.push(chunk, onLine);
  });
  child.stderr?.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL);
  });

  const result = await child;
  splitter.end(onLine);
  if (idle) clearTimeout(idle);
  clearTimeout(wallClock);
  o.signal?.removeEventListener('abort', onAbort);
  if (escalation) await escalation;
  // Whatever way it ended, nothing the session started may outlive it.
  if (sessionProcs(null, o.sessionId).length) killed += await killSession(null, o.sessionId, 1000);

  const spawnError = result.exitCode === undefined && result.signal === undefined && !stopReason ? spawnMessage(result, o.command) : null;
  return {
    stopReason,
    stopDetail,
    spawnError,
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    durationMs: Date.now() - started,
    stderrTail,
    killed,
  };
}

function spawnMessage(result: { cause?: unknown; shortMessage?: string; message?: string }, command: string): string {
  const code = (result.cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return `cannot start \`${command}\`: not found (claude.command)`;
  if (code === 'EACCES') return `cannot start \`${command}\`: permission denied (claude.command)`;
  return `cannot start \`${command}\`: ${result.shortMessage ?? result.message ?? 'unknown error'}`;
}
