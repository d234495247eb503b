// The sweep of what a killed supervisor left in state_dir/sessions: each folder, and the cgroups
// its record names (only cgroups named for that session, under /sys/fs/cgroup; only empty ones).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cellFor } from '../../../sessions/wall/cgroup.js';
import { CELLS_FILE, sweepSessionDirs } from '../../../sessions/wall/session-dirs.js';
import { tempDir, waitFor } from '../../helpers.js';

const warnings = () => {
  const seen: Array<{ obj: any; msg: string }> = [];
  // Only the (object, message) form is called.
  const log = { warn: (obj: object, msg: string) => void seen.push({ obj, msg }) } as unknown as Parameters<typeof sweepSessionDirs>[1];
  return { log, seen };
};

// A leftover folder for `id` whose record names `cells`.
function leftover(stateDir: string, id: string, cells: string[]): string {
  const folder = path.join(stateDir, 'sessions', id);
  fs.mkdirSync(path.join(folder, 'home'), { recursive: true });
  fs.writeFileSync(path.join(folder, CELLS_FILE), JSON.stringify(cells));
  return folder;
}

test('a record naming folders that are no cgroup of that session touches none of them', (t) => {
  const state = tempDir(t);
  // Named right, but outside /sys/fs/cgroup; and a cgroup path named for another session.
  const outside = path.join(tempDir(t), 'nightshift-s-1');
  fs.mkdirSync(outside);
  const folder = leftover(state, 's-1', [outside, '/sys/fs/cgroup/pids/nightshift-s-2', '/sys/fs/cgroup/pids/../../../tmp/nightshift-s-1', 42 as unknown as string]);
  const { log } = warnings();
  assert.equal(sweepSessionDirs({ state_dir: state }, log), 1);
  assert.equal(fs.existsSync(folder), false, 'the folder goes');
  assert.ok(fs.existsSync(outside), 'what is not a cgroup of this session stays');
});

test('a killed session\'s empty cgroups go with its folder; one still holding a process is named, not forced', { skip: cellsHere() ? false : process.env.CI ? false : 'no cgroup can be made here (needs root)' }, async (t) => {
  const state = tempDir(t);
  const warn = () => {};
  // Ids of this run's own: a cgroup a failed run left is never in the way.
  const [emptyId, busyId] = [`sweep-empty-${process.pid}`, `sweep-busy-${process.pid}`];
  const empty = cellFor({ pids: 64, memory: 'off' }, emptyId, process.env.PATH ?? '', warn);
  const busy = cellFor({ pids: 64, memory: 'off' }, busyId, process.env.PATH ?? '', warn);
  t.after(() => Promise.all([busy.close(), empty.close()]));
  assert.ok(empty.dirs.length > 0 && busy.dirs.length > 0, `cells made here: ${empty.plan.mechanism}`);
  const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.after(() => sleeper.kill('SIGKILL'));
  await waitFor(() => sleeper.pid !== undefined, 2000, 'the sleeper');
  busy.join(sleeper.pid!);
  leftover(state, emptyId, [...empty.dirs]);
  leftover(state, busyId, [...busy.dirs]);
  for (const d of [...empty.dirs, ...busy.dirs]) assert.ok(fs.existsSync(d), `made: ${d}`);
  const { log, seen } = warnings();
  assert.equal(sweepSessionDirs({ state_dir: state }, log), 2);
  for (const d of empty.dirs) assert.equal(fs.existsSync(d), false, `removed: ${d}`);
  for (const d of busy.dirs) assert.ok(fs.existsSync(d), `a cgroup with a process in it is left: ${d}`);
  const left = seen.find((s) => s.obj.event === 'session_cgroups_left');
  assert.ok(left, JSON.stringify(seen));
  assert.match(left.msg, new RegExp(`nightshift-${busyId} \\(EBUSY\\)`));
  assert.deepEqual(seen.find((s) => s.obj.event === 'session_dirs_swept')?.obj.cells, [...empty.dirs]);
});

function cellsHere(): boolean {
  const c = cellFor({ pids: 64, memory: 'off' }, `probe-${process.pid}`, process.env.PATH ?? '', () => {});
  const made = c.dirs.length > 0;
  void c.close();
  return made;
}
