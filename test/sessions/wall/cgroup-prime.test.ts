// The cell's prime (sessions/wall/cgroup.ts): as a cell is made, the supervisor moves itself into
// the cgroup it is already in, so the kernel's wait for the first move is behind it when the gate
// is joined. It must write our own cgroup, never the cell (we would be killed with it). Folders
// stand in for the hierarchies: what is written where is the whole of the claim.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { openCell, primeOwnCgroup } from '../../../sessions/wall/cgroup.js';
import { tempDir } from '../../helpers.js';

const procs = (dir: string) => (fs.existsSync(path.join(dir, 'cgroup.procs')) ? fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8') : null);

test('cgroup v1: the prime writes our pid into our own cgroup, and nothing into the cell', async (t) => {
  const pids = tempDir(t, 'nightshift-prime-pids-');
  const memory = tempDir(t, 'nightshift-prime-memory-');
  const cell = openCell({ mechanism: 'cgroup1', dirs: { pids, memory }, wanted: { pids: 64, memory: 64 * 1024 * 1024 } }, 'prime-v1');
  await cell.prime();
  assert.equal(procs(pids), String(process.pid), 'our own pids cgroup was written');
  for (const d of cell.dirs) assert.equal(procs(d), null, `nothing moved into the cell ${d}`);
  assert.deepEqual(cell.dirs, [path.join(pids, 'nightshift-prime-v1'), path.join(memory, 'nightshift-prime-v1')]);
});

test('cgroup v2: the prime writes our pid into the supervisor\'s leaf, and nothing into the cell', async (t) => {
  const base = tempDir(t, 'nightshift-prime-v2-');
  const cell = openCell({ mechanism: 'cgroup2', dir: base, wanted: { pids: 64, memory: 'off' } }, 'prime-v2');
  await cell.prime();
  assert.equal(procs(path.join(base, 'nightshift-supervisor')), String(process.pid));
  assert.equal(procs(path.join(base, 'nightshift-prime-v2')), null, 'nothing moved into the cell');
});

test('a prime that cannot write settles anyway: only speed was at stake', async (t) => {
  const pids = tempDir(t, 'nightshift-prime-ro-');
  // A folder where cgroup.procs should be: the write fails (EISDIR), the cell is still made.
  fs.mkdirSync(path.join(pids, 'cgroup.procs'));
  const cell = openCell({ mechanism: 'cgroup1', dirs: { pids }, wanted: { pids: 64, memory: 'off' } }, 'prime-ro');
  await cell.prime();
  assert.equal(cell.gated, true);
  assert.ok(fs.existsSync(path.join(pids, 'nightshift-prime-ro', 'pids.max')));
});

test('the early prime leaves this process in the cgroups it was in', async () => {
  const before = fs.readFileSync('/proc/self/cgroup', 'utf8');
  await primeOwnCgroup({ pids: 64, memory: 'off' });
  assert.equal(fs.readFileSync('/proc/self/cgroup', 'utf8'), before);
});
