// The wall-clock and idle limits hold while the supervisor's event loop is blocked (issue 52 part
// 4): the runner against a real child that ignores SIGINT and SIGTERM, with the loop blocked from
// one of the runner's own callbacks (where the transcript is written), as counting a hostile file
// or any bug of ours would block it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { runClaude } from '../../../sessions/run/runner.js';
import { STALE_MS, watchVerdict } from '../../../sessions/run/watchdog.js';
import { isAlive } from '../../../core/process-tree.js';
import { StreamTracker } from '../../../sessions/stream/stream-tracker.js';
import { FIXTURES, processesMatching } from '../../helpers.js';

// Far past the limit and its grace (~2.5 s here), even on a loaded machine: only the control waits it out.
const BLOCK_CAP_MS = 12_000;

// Runs stubborn.mjs with a 1.5 s wall clock and blocks the loop at its first line until the child
// is dead or the cap passes; says whether it died while the loop was blocked.
// `cancel`: the loop begins to end the session (a stop request) just before it blocks.
async function blockedSession(tag: string, watchdog: 'thread' | 'loop', cancel?: AbortController) {
  let pid = 0;
  let diedWhileBlocked: boolean | null = null;
  const r = await runClaude({
    command: process.execPath,
    args: [path.join(FIXTURES, 'stubborn.mjs'), tag],
    cwd: FIXTURES,
    env: { PATH: process.env.PATH },
    sessionId: `test-${Math.random().toString(36).slice(2)}`,
    timeoutMs: 1500,
    idleTimeoutMs: 60_000,
    killGraceMs: 500,
    maxUsd: null,
    tracker: new StreamTracker({ maxRepeats: 5, window: 20, cycleRepeats: 3 }),
    watchdog,
    signal: cancel?.signal,
    onSpawn: (p) => (pid = p),
    onLine: () => {
      if (diedWhileBlocked !== null) return;
      cancel?.abort('stop requested');
      const until = Date.now() + BLOCK_CAP_MS;
      while (isAlive(pid) && Date.now() < until) {
        // busy: the loop serves nothing, no timer of it runs
      }
      diedWhileBlocked = !isAlive(pid);
    },
  });
  return { r, diedWhileBlocked };
}

describe('the watchdog thread', () => {
  test('ends the session at its wall-clock limit while the event loop is blocked', async () => {
    // mutation: watchdog-on-the-loop, caught here
    const { r, diedWhileBlocked } = await blockedSession('671', 'thread');
    assert.equal(diedWhileBlocked, true, 'the session was killed while the loop was blocked');
    assert.equal(r.stopReason, 'timeout');
    assert.equal(r.stopDetail, 'session ran past 1500 ms');
    assert.equal(r.signal, 'SIGKILL');
    assert.ok(r.killed >= 3, `killed ${r.killed}`);
    assert.deepEqual(processesMatching('sleep 671'), []);
    assert.deepEqual(processesMatching('sleep 1671'), []);
  });

  test('negative control: with the limits as timers on the loop, a blocked loop lets the session run on', async () => {
    const { r, diedWhileBlocked } = await blockedSession('672', 'loop');
    assert.equal(diedWhileBlocked, false, 'nothing ended the session while the loop was blocked');
    // Ended only once the loop was free again.
    assert.equal(r.stopReason, 'timeout');
    assert.deepEqual(processesMatching('sleep 672'), []);
  });

  // mutation: watchdog-no-backstop, caught here.
  test('a session the loop began to end (canceled) before it blocked is still killed at the wall clock and its grace', async () => {
    const r = await blockedSession('673', 'thread', new AbortController());
    assert.equal(r.diedWhileBlocked, true, 'killed while the loop was blocked, though the loop had claimed the stop');
    assert.equal(r.r.stopReason, 'canceled');
    assert.deepEqual(processesMatching('sleep 673'), []);
  });

  test('idle counts only time the loop was alive to read output; the wall clock counts all of it', () => {
    const d = { timeoutMs: 10_000, idleTimeoutMs: 1000 };
    // Alive, 1 s without output: stalled.
    assert.equal(watchVerdict({ now: 3000, lastOutput: 2000, beat: 2900, resumedAt: 0 }, d), 'stalled');
    // The loop blocked (its beat is stale): the session is not blamed for our stall.
    assert.equal(watchVerdict({ now: 3000, lastOutput: 0, beat: 3000 - STALE_MS - 1, resumedAt: 0 }, d), null);
    // Back from a block a moment ago: a full idle limit from there.
    assert.equal(watchVerdict({ now: 3000, lastOutput: 0, beat: 2950, resumedAt: 2500 }, d), null);
    assert.equal(watchVerdict({ now: 3500, lastOutput: 0, beat: 3450, resumedAt: 2500 }, d), 'stalled');
    // The wall clock, blocked or not.
    assert.equal(watchVerdict({ now: 10_000, lastOutput: 9999, beat: 0, resumedAt: 9999 }, d), 'timeout');
  });
});
