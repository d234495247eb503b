// The watchdog thread (./watchdog.ts starts it): its own event loop, so the session's limits hold
// while the supervisor's is blocked. At a limit it claims the stop, interrupts the CLI (SIGINT, so
// it can write its result), and past the grace ends every process of the session.
import { parentPort, workerData } from 'node:worker_threads';
import { innerPid, isAlive, killSession } from '../../core/process-tree.js';
import { CLAIM, mono, SLOT, STALE_MS, TICK_MS, watchVerdict, type WatchdogData } from './watchdog.js';

const d = workerData as WatchdogData;
const slots = new Int32Array(d.sab);
const now = () => mono() - d.origin;
let resumedAt = 0;

let backstop = false;
const tick = setInterval(() => {
  const t = now();
  const beat = Atomics.load(slots, SLOT.beat);
  // The loop is blocked now: idle starts again from here once it is back.
  if (t - beat > STALE_MS) resumedAt = t;
  if (Atomics.load(slots, SLOT.claim) !== CLAIM.none) {
    // The loop ended it first (a loop, a cancel), and ends it: should the loop block before its own
    // kill, whatever is left at the wall clock and its grace goes all the same.
    if (!backstop && t >= d.timeoutMs + d.killGraceMs && isAlive(d.root)) {
      backstop = true;
      clearInterval(tick);
      void killSession(d.root, d.sessionId, Math.min(2000, d.killGraceMs || 500));
    }
    return;
  }
  const reason = watchVerdict({ now: t, lastOutput: Atomics.load(slots, SLOT.lastOutput), beat, resumedAt }, d);
  if (!reason) return;
  if (Atomics.compareExchange(slots, SLOT.claim, CLAIM.none, CLAIM[reason]) !== CLAIM.none) return;
  clearInterval(tick);
  parentPort?.postMessage({ type: 'stop' });
  void end();
}, TICK_MS);

async function end(): Promise<void> {
  try {
    process.kill((d.inner ? innerPid(d.root, d.inner) : null) ?? d.root, 'SIGINT');
  } catch {
    // already gone
  }
  // The CLI gets the grace to write its result; then the whole session goes.
  const until = mono() + d.killGraceMs;
  while (mono() < until && isAlive(d.root)) await new Promise((r) => setTimeout(r, 50));
  // Whatever is left (the CLI, or what it started), while the supervisor may still be blocked.
  const n = await killSession(d.root, d.sessionId, Math.min(2000, d.killGraceMs || 500));
  parentPort?.postMessage({ type: 'killed', n });
}
