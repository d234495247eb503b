// The runner with a session cell (sessions/wall/cgroup.ts): the child is held at the gate until it
// is in its cgroup, a bound reached ends the session by name, the disk poll ends it disk_full, and
// a command the gate cannot exec is a spawn failure as before. Real processes, no CLI.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planBounds } from '../../../sessions/wall/bounds.js';
import { boundsFacts, openCell } from '../../../sessions/wall/cgroup.js';
import { runClaude } from '../../../sessions/run/runner.js';
import { StreamTracker } from '../../../sessions/stream/stream-tracker.js';
import { FIXTURES } from '../../helpers.js';

const facts = boundsFacts(process.env.PATH ?? '');
const NO_CGROUP = /^cgroup/.test(planBounds(facts, { pids: 64, memory: 'off' }).mechanism) ? false : 'no cgroup can be made here (root on cgroup v1, or a delegated cgroup v2)';
const base = (command: string, args: string[], over: Partial<Parameters<typeof runClaude>[0]> = {}) => ({
  command, args, cwd: FIXTURES, env: { PATH: process.env.PATH }, sessionId: `test-cell-${process.pid}-${Math.random().toString(36).slice(2)}`,
  timeoutMs: 20_000, idleTimeoutMs: 20_000, killGraceMs: 300, maxUsd: null, tracker: new StreamTracker({ maxRepeats: 5, window: 20, cycleRepeats: 3 }), subreaper: false, ...over,
});
// 200 sleeping children, then it reports how many it made.
const BOMB = 'n=0; p=""; while [ $n -lt 200 ]; do sleep 30 > /dev/null 2>&1 & p="$p $!"; n=$((n+1)); done; echo made $n; kill $p; wait';

test('a child in its cell cannot fork past limits.pids, and the session is ended by name; uncelled the same bomb makes all 200', { skip: NO_CGROUP, timeout: 30_000 }, async () => {
  const o = base('/bin/sh', ['-c', BOMB]);
  const cell = openCell(planBounds(facts, { pids: 64, memory: 'off' }), o.sessionId);
  try {
    const r = await runClaude({ ...o, cell });
    assert.equal(r.stopReason, 'bound');
    assert.match(r.stopDetail!, /^limits\.pids: the session reached its 64 processes bound/);
  } finally {
    await cell.close();
  }
  let out = '';
  const control = await runClaude({ ...base('/bin/sh', ['-c', BOMB]), onLine: (l) => (out += l) });
  assert.equal(control.stopReason, null);
  assert.equal(out, 'made 200', 'control: without the cell all 200 were made');
});

test('the disk poll ends a session disk_full, with the reason', async () => {
  const r = await runClaude({ ...base('/bin/sh', ['-c', 'sleep 10']), disk: () => 'the disk of vault (/v) has 0 bytes free' });
  assert.equal(r.stopReason, 'disk_full');
  assert.equal(r.stopDetail, 'the disk of vault (/v) has 0 bytes free');
});

test('a command the gate cannot exec is still a spawn failure', { skip: NO_CGROUP }, async () => {
  const o = base('/nonexistent/claude', []);
  const cell = openCell(planBounds(facts, { pids: 64, memory: 'off' }), o.sessionId);
  try {
    const r = await runClaude({ ...o, cell });
    assert.match(r.spawnError ?? '', /cannot start `\/nonexistent\/claude`: not found/);
  } finally {
    await cell.close();
  }
});

test('under rlimits a command prlimit cannot exec is a spawn failure too, naming the command', { skip: facts.prlimit ? false : 'no prlimit here' }, async () => {
  const plan = { mechanism: 'rlimit' as const, prlimit: facts.prlimit!, wanted: { pids: 64, memory: 'off' as const }, why: 'test' };
  const o = base('/nonexistent/claude', []);
  const cell = openCell(plan, o.sessionId);
  const w = cell.wrap(o.command, o.args);
  assert.equal(w.command, facts.prlimit, 'wrapped in prlimit');
  const r = await runClaude({ ...o, ...w });
  assert.match(r.spawnError ?? '', /cannot start `\/nonexistent\/claude`: not found/);
  // Control: a command that starts and fails is the command's own exit, not a spawn failure.
  const ran = await runClaude({ ...o, ...cell.wrap('/bin/sh', ['-c', 'echo "prlimit: nope" >&2; exit 127']) });
  assert.equal(ran.spawnError, null);
  assert.equal(ran.exitCode, 127);
  // A command that ran and wrote its stream cannot pass for one that never started by saying so.
  const said = await runClaude({ ...o, ...cell.wrap('/bin/sh', ['-c', 'echo "{}"; echo "prlimit: failed to execute claude: No such file or directory" >&2; exit 127']) });
  assert.equal(said.spawnError, null);
});
