// The runner's process handling alone, against tiny real scripts (not the CLI).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { redactedTail, runClaude, STDERR_TAIL } from '../../../sessions/run/runner.js';
import { makeRedactor } from '../../../core/redact.js';
import { sleep } from '../../../core/process-tree.js';
import { StreamTracker } from '../../../sessions/stream/stream-tracker.js';
import { FIXTURES, processesMatching, waitFor, zombiesUnder } from '../../helpers.js';

const limits = { maxRepeats: 5, window: 20, cycleRepeats: 3 };
const base = (args: string[], over: Partial<Parameters<typeof runClaude>[0]> = {}) => ({
  command: process.execPath,
  args,
  cwd: FIXTURES,
  env: { PATH: process.env.PATH },
  sessionId: `test-${Math.random().toString(36).slice(2)}`,
  timeoutMs: 1500,
  idleTimeoutMs: 10_000,
  killGraceMs: 500,
  maxUsd: null,
  tracker: new StreamTracker(limits),
  ...over,
});

describe('runner', () => {
  test('kills a child that ignores SIGINT and SIGTERM, and every grandchild, when the session times out', async () => {
    const r = await runClaude(base([path.join(FIXTURES, 'stubborn.mjs'), '651']));
    assert.equal(r.stopReason, 'timeout');
    assert.equal(r.signal, 'SIGKILL');
    assert.ok(r.killed >= 3, `killed ${r.killed}`);
    assert.deepEqual(processesMatching('sleep 651'), []);
    assert.deepEqual(processesMatching('sleep 1651'), []);
    assert.deepEqual(zombiesUnder(process.pid), []);
  });

  test('negative control: killing only the child leaves its detached grandchildren running', async () => {
    const child = spawn(process.execPath, [path.join(FIXTURES, 'stubborn.mjs'), '652'], { stdio: 'ignore' });
    await waitFor(() => processesMatching('sleep 652').length === 1 && processesMatching('sleep 1652').length === 1, 5000, 'grandchildren');
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    await sleep(200);
    const left = [...processesMatching('sleep 652'), ...processesMatching('sleep 1652')];
    assert.equal(left.length, 2, 'the harness sees the orphans when the tree walk is not used');
    for (const p of left) process.kill(p.pid, 'SIGKILL');
  });

  test('an idle child is ended as stalled', async () => {
    const r = await runClaude(base([path.join(FIXTURES, 'stubborn.mjs'), '653'], { timeoutMs: 20_000, idleTimeoutMs: 700 }));
    assert.equal(r.stopReason, 'stalled');
    assert.deepEqual(processesMatching('sleep 653'), []);
  });

  // The sign of life that is not stdout (the API proxy's bytes while an answer streams): a child
  // silent on stdout but alive by it runs on to the wall clock, with the limits on the thread or on
  // the loop; the test above is its control (the same child, no sign of life: stalled).
  for (const watchdog of ['thread', 'loop'] as const) {
    test(`a child silent on stdout but showing signs of life is not stalled (watchdog: ${watchdog})`, async () => {
      let beat: NodeJS.Timeout | null = null;
      const signsOfLife = (alive: () => void) => {
        beat = setInterval(alive, 100);
      };
      try {
        const r = await runClaude(base([path.join(FIXTURES, 'stubborn.mjs'), '657'], { timeoutMs: 4000, idleTimeoutMs: 1500, watchdog, signsOfLife }));
        assert.equal(r.stopReason, 'timeout', r.stopDetail ?? '');
      } finally {
        if (beat) clearInterval(beat);
      }
      assert.deepEqual(processesMatching('sleep 657'), []);
    });
  }

  test('garbage on stdout is counted, and the result still read', async () => {
    const tracker = new StreamTracker(limits);
    const r = await runClaude(base([path.join(FIXTURES, 'finishes.mjs'), '7'], { tracker }));
    assert.equal(r.stopReason, null);
    assert.equal(r.exitCode, 0);
    assert.equal(tracker.garbage, 7);
    assert.equal(tracker.result?.result, 'fine');
  });

  test('an abort signal ends the session as canceled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort('SIGTERM'), 300);
    const r = await runClaude(base([path.join(FIXTURES, 'stubborn.mjs'), '654'], { timeoutMs: 20_000, signal: controller.signal }));
    assert.equal(r.stopReason, 'canceled');
    assert.equal(r.stopDetail, 'SIGTERM');
    assert.deepEqual(processesMatching('sleep 654'), []);
  });

  test('a command that does not exist is a spawn error, not a crash', async () => {
    const r = await runClaude(base([], { command: '/nonexistent/claude' }));
    assert.match(r.spawnError ?? '', /not found/);
  });

  test('an env-cleared setsid grandchild does not outlive the session (the subreaper inherits it)', async () => {
    const r = await runClaude(base([path.join(FIXTURES, 'envless.mjs'), '661'], { timeoutMs: 20_000 }));
    assert.equal(r.reaped, true, 'perl is on PATH here, so the subreaper ran');
    assert.equal(r.exitCode, 0);
    assert.deepEqual(processesMatching('sleep 661'), []);
  });

  test('negative control: without the subreaper the env-cleared grandchild survives', async () => {
    const r = await runClaude(base([path.join(FIXTURES, 'envless.mjs'), '662'], { timeoutMs: 20_000, subreaper: false }));
    assert.equal(r.reaped, false);
    const left = processesMatching('sleep 662');
    for (const p of left) process.kill(p.pid, 'SIGKILL');
    assert.equal(left.length, 1, 'neither the marker nor the tree walk found it');
  });

  test('a transcript write that fails (a full disk) ends the session as internal, and nothing outlives it', async () => {
    let calls = 0;
    const r = await runClaude(base([path.join(FIXTURES, 'stubborn.mjs'), '663'], {
      timeoutMs: 20_000,
      onLine: () => {
        calls++;
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    }));
    assert.ok(calls >= 1);
    assert.equal(r.stopReason, 'internal');
    assert.match(r.internalError ?? '', /writing the transcript: ENOSPC/);
    assert.deepEqual(processesMatching('sleep 663'), []);
    assert.deepEqual(processesMatching('sleep 1663'), []);
  });

  // The wall clock is ten minutes: ended by it, the stop reason would be `timeout`, and the test's
  // own timeout comes first.
  test('an onSpawn that throws ends the session and kills the CLI', { timeout: 120_000 }, async () => {
    const r = await runClaude(base([path.join(FIXTURES, 'stubborn.mjs'), '664'], {
      timeoutMs: 600_000,
      onSpawn: () => {
        throw new Error('database is locked');
      },
    }));
    assert.equal(r.stopReason, 'internal');
    assert.match(r.internalError ?? '', /recording the spawn: database is locked/);
    assert.deepEqual(processesMatching('sleep 664'), []);
  });

  test('stderr is redacted before it is cut, so a secret split by the cut cannot leak', async () => {
    const secret = 'fake-secret-value-0123456789-abcdefghijklmnopqrstu';
    const fill = 70 * 1024;
    const r = await runClaude(base([path.join(FIXTURES, 'stderr-secret.mjs'), secret, String(STDERR_TAIL), String(fill)], { timeoutMs: 20_000, redact: makeRedactor([secret]) }));
    const raw = 'x'.repeat(fill) + secret + 'y'.repeat(STDERR_TAIL - Math.floor(secret.length / 2));
    // Negative control: cutting first keeps the secret's second half, which no redactor matches.
    const cutFirst = makeRedactor([secret])(raw.slice(-STDERR_TAIL));
    assert.ok(cutFirst.includes(secret.slice(-20)), 'the cut-then-redact order leaks part of the secret');
    assert.ok(!r.stderrTail.includes(secret.slice(-20)), 'redact-then-cut leaks nothing');
    assert.ok(r.stderrTail.length <= STDERR_TAIL);
  });

  test('redactedTail drops the front edge when the raw text was already cut', () => {
    const secret = 'fake-secret-abcdefghijklmnop';
    // The raw buffer begins with the tail of a secret (its head was cut off upstream).
    const raw = secret.slice(10) + ' then text';
    assert.ok(!redactedTail(raw, true, makeRedactor([secret]), 4096).includes(secret.slice(10)));
    assert.equal(redactedTail(raw, false, makeRedactor([secret]), 4096), raw);
  });
});
