// The session's wall-clock and idle limits, held by a worker thread (./watchdog-worker.ts) so that
// they are enforced while the supervisor's event loop is blocked (a hostile file being counted, a
// bug of ours): at a limit the thread itself interrupts the CLI and, past the grace, kills the
// session's processes. The main loop feeds it through shared memory only: when it last saw output,
// and a heartbeat saying it is alive to see any.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

// Shared slots (Int32, ms since `origin` on the monotonic clock).
export const SLOT = { claim: 0, lastOutput: 1, beat: 2 } as const;
// Who ended the session first: the main loop (any reason) or the thread (its two).
export const CLAIM = { none: 0, main: 1, timeout: 2, stalled: 3 } as const;
// How often the main loop beats, and how old a beat may be before the loop counts as blocked.
export const BEAT_MS = 200;
export const STALE_MS = 1000;
// How often the thread looks.
export const TICK_MS = 100;

export type WatchdogData = {
  sab: SharedArrayBuffer;
  origin: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  killGraceMs: number;
  root: number;
  sessionId: string;
  inner: string | null;
};

export type Stop = { reason: 'timeout' | 'stalled'; detail: string };

// The monotonic clock in ms, the same in every thread (wall-clock jumps move no deadline).
export const mono = () => Number(process.hrtime.bigint() / 1_000_000n);

export const stopDetail = (reason: Stop['reason'], d: Pick<WatchdogData, 'timeoutMs' | 'idleTimeoutMs'>): string =>
  reason === 'timeout' ? `session ran past ${d.timeoutMs} ms` : `no output for ${d.idleTimeoutMs} ms`;

// Pure: whether a limit is reached. Idle counts only time the main loop was alive to read output:
// while it is blocked the CLI waits on us (its calls and hooks go through this process), so the
// stall is the supervisor's, not the session's; `resumedAt` is when the loop last came back. The
// wall clock counts everything: a blocked supervisor never lengthens a session.
export function watchVerdict(s: { now: number; lastOutput: number; beat: number; resumedAt: number }, d: Pick<WatchdogData, 'timeoutMs' | 'idleTimeoutMs'>): Stop['reason'] | null {
  if (s.now >= d.timeoutMs) return 'timeout';
  const alive = s.now - s.beat <= STALE_MS;
  if (alive && s.now - Math.max(s.lastOutput, s.resumedAt) >= d.idleTimeoutMs) return 'stalled';
  return null;
}

// The worker's file: beside this module (dist/sessions/run/), or from the bundle (dist/bundle/).
export function watchdogFile(): string {
  for (const rel of ['./watchdog-worker.js', '../sessions/run/watchdog-worker.js']) {
    const f = fileURLToPath(new URL(rel, import.meta.url));
    if (fs.existsSync(f)) return f;
  }
  throw new Error('the watchdog thread (dist/sessions/run/watchdog-worker.js) is missing: run `npm run build`');
}

export type Watchdog = {
  // The main loop takes the stop; false when the thread already has.
  claim(): boolean;
  // The thread's stop, once it has claimed one.
  claimed(): Stop | null;
  output(): void;
  beat(): void;
  // Settles once the thread's own kill is over (at once when it made none).
  escalated: Promise<number>;
  close(): void;
};

// Starts the thread for a spawned session. `onStop` hears the thread's stop when the loop is free
// again; `onFailed` hears that the thread could not run (the caller then keeps the limits itself).
export function startWatchdog(d: Omit<WatchdogData, 'sab'>, onStop: (s: Stop) => void, onFailed: (why: string) => void, file = watchdogFile): Watchdog {
  const sab = new SharedArrayBuffer(4 * 3);
  const slots = new Int32Array(sab);
  const now = () => mono() - d.origin;
  Atomics.store(slots, SLOT.lastOutput, now());
  Atomics.store(slots, SLOT.beat, now());
  let settle: (n: number) => void = () => {};
  const escalated = new Promise<number>((r) => (settle = r));
  const claimed = (): Stop | null => {
    const c = Atomics.load(slots, SLOT.claim);
    return c === CLAIM.timeout ? { reason: 'timeout', detail: stopDetail('timeout', d) } : c === CLAIM.stalled ? { reason: 'stalled', detail: stopDetail('stalled', d) } : null;
  };
  let worker: Worker | null = null;
  try {
    // Small: it reads /proc and sends signals. Its heap bound ends it, never us.
    worker = new Worker(file(), { workerData: { ...d, sab } satisfies WatchdogData, resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 }, stdout: true, stderr: true });
    worker.unref();
    worker.on('message', (m: { type: 'stop' } | { type: 'killed'; n: number }) => {
      if (m.type === 'stop') {
        const s = claimed();
        if (s) onStop(s);
      } else settle(m.n);
    });
    const gone = (why: string) => {
      settle(0);
      // Not yet claimed: nothing is lost but the thread, and the caller's timers take over.
      if (Atomics.load(slots, SLOT.claim) === CLAIM.none) onFailed(why);
    };
    worker.on('error', (err) => gone(`the watchdog thread failed: ${err.message}`));
    worker.on('exit', () => gone('the watchdog thread exited'));
  } catch (err) {
    settle(0);
    queueMicrotask(() => onFailed(`the watchdog thread could not start: ${(err as Error).message}`));
  }
  return {
    claim: () => {
      const was = Atomics.compareExchange(slots, SLOT.claim, CLAIM.none, CLAIM.main);
      if (was === CLAIM.none) settle(0);
      return was === CLAIM.none;
    },
    claimed,
    output: () => Atomics.store(slots, SLOT.lastOutput, now()),
    beat: () => Atomics.store(slots, SLOT.beat, now()),
    escalated,
    close: () => {
      const w = worker;
      worker = null;
      w?.removeAllListeners('exit');
      w?.removeAllListeners('error');
      w?.on('error', () => {});
      void w?.terminate();
      settle(0);
    },
  };
}
