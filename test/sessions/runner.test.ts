// The runner's process handling alone, against tiny real scripts (not the CLI).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { runClaude } from '../../sessions/runner.js';
import { sleep } from '../../sessions/process-tree.js';
import { StreamTracker } from '../../sessions/stream-tracker.js';
import { FIXTURES, processesMatching, waitFor, zombiesUnder } from '../helpers.js';

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
});
