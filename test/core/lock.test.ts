// Host-wide locks: the owner's pid and start time decide, never the lock's age.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import lockfile from 'proper-lockfile';
import { acquireLock, lockOwner } from '../../core/lock.js';
import { ROOT, tempDir, waitFor } from '../helpers.js';

// Another process takes the lock and keeps it until killed.
async function holder(t: TestContext, file: string): Promise<ChildProcess> {
  const src = `import { acquireLock } from ${JSON.stringify(path.join(ROOT, 'dist', 'core', 'lock.js'))};
const h = await acquireLock(${JSON.stringify(file)}, { timeoutMs: 0, purpose: 'holder' });
process.stdout.write(h ? 'held\\n' : 'refused\\n');
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', src], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  await waitFor(() => out.includes('held'), 5000, 'the holder to take the lock');
  return child;
}

// Makes the lock look abandoned by its age: an hour since its last touch.
function age(file: string): void {
  const old = new Date(Date.now() - 3_600_000);
  fs.utimesSync(`${file}.lock`, old, old);
}

test('a frozen owner keeps its lock however old the lock looks', async (t) => {
  const file = path.join(tempDir(t), 'run');
  const owner = await holder(t, file);
  owner.kill('SIGSTOP');
  t.after(() => owner.kill('SIGCONT'));
  age(file);
  assert.equal(await acquireLock(file, { timeoutMs: 300, purpose: 'second' }), null);
  assert.equal(lockOwner(file)?.pid, owner.pid);
  // Negative control: judging by mtime alone (proper-lockfile's staleness), the lock is taken.
  const release = await lockfile.lock(file, { realpath: false, stale: 10_000, retries: 0 });
  await release();
});

test('a dead owner\'s lock is taken at once, whatever its age', async (t) => {
  const file = path.join(tempDir(t), 'run');
  const owner = await holder(t, file);
  owner.kill('SIGKILL');
  await new Promise((r) => owner.once('exit', r));
  // timeoutMs 0: one try, no wait. Taken at once or not at all.
  const held = await acquireLock(file, { timeoutMs: 0, purpose: 'next' });
  assert.ok(held, 'taken over');
  assert.equal(lockOwner(file)?.pid, process.pid);
  await held.release();
  assert.equal(lockOwner(file), null);
});

test('a lock taken from its holder raises `lost`, and release leaves the new owner alone', async (t) => {
  const file = path.join(tempDir(t), 'run');
  const held = await acquireLock(file, { timeoutMs: 0, purpose: 'first' });
  assert.ok(held);
  assert.equal(held.lost.aborted, false);
  fs.writeFileSync(`${file}.owner.json`, JSON.stringify({ pid: 1, start: null, since: new Date().toISOString(), purpose: 'intruder' }));
  await waitFor(() => held.lost.aborted, 3000, 'the loss to be noticed');
  await held.release();
  assert.equal(lockOwner(file)?.purpose, 'intruder');
});

// The wait is ten minutes; the test's own timeout, well under it, is what fails a wait that ignores the stop.
test('a wait for a held lock ends at once on a stop request', { timeout: 30_000 }, async (t) => {
  const file = path.join(tempDir(t), 'git.lock');
  await holder(t, file);
  const stop = new AbortController();
  setTimeout(() => stop.abort('SIGTERM'), 200);
  assert.equal(await acquireLock(file, { timeoutMs: 600_000, purpose: 'waiter', signal: stop.signal }), null);
  assert.equal(stop.signal.aborted, true);
});

// A process that exits holding the lock (process.exit on an error path) leaves none behind: the
// next taker gets it without waiting out a holder or breaking a dead one.
test('a holder that exits without releasing leaves no lock behind', async (t) => {
  const file = path.join(tempDir(t), 'run');
  const src = `import { acquireLock } from ${JSON.stringify(path.join(ROOT, 'dist', 'core', 'lock.js'))};
const h = await acquireLock(${JSON.stringify(file)}, { timeoutMs: 0, purpose: 'leaver' });
if (!h) process.exit(9);
process.exit(3);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', src], { stdio: 'inherit' });
  const code = await new Promise((r) => child.once('exit', r));
  assert.equal(code, 3, 'the child took the lock, then exited');
  assert.equal(fs.existsSync(`${file}.lock`), false, 'no lock directory left');
  assert.equal(fs.existsSync(`${file}.owner.json`), false, 'no owner file left');
  assert.equal(lockOwner(file), null);
});

// Takers started together: exactly one holds it, whichever wins the mkdir.
test('of takers racing for a free lock exactly one gets it', async (t) => {
  const file = path.join(tempDir(t), 'run');
  const src = `import { acquireLock } from ${JSON.stringify(path.join(ROOT, 'dist', 'core', 'lock.js'))};
process.stdin.once('data', async () => {
  const h = await acquireLock(${JSON.stringify(file)}, { timeoutMs: 0, purpose: 'racer' });
  process.stdout.write(h ? 'held\\n' : 'refused\\n');
  setInterval(() => {}, 60_000); // the holder holds until the test ends, however late the last racer
});
process.stdout.write('ready\\n');`;
  const racers = Array.from({ length: 6 }, () => {
    const c = spawn(process.execPath, ['--input-type=module', '-e', src], { stdio: ['pipe', 'pipe', 'inherit'] });
    t.after(() => c.kill('SIGKILL'));
    let out = '';
    c.stdout!.on('data', (d) => (out += d));
    return { c, out: () => out };
  });
  // All loaded before any is told to go, so they meet at the mkdir.
  await waitFor(() => racers.every((r) => r.out().includes('ready')), 10_000, 'every racer to load');
  for (const r of racers) r.c.stdin!.end('go\n');
  await waitFor(() => racers.every((r) => /held|refused/.test(r.out())), 10_000, 'every racer to answer');
  assert.equal(racers.filter((r) => r.out().includes('held')).length, 1, racers.map((r) => r.out().trim()).join(','));
});

// A child process running `body` with the lock module imported as `lock`. `pauseAt(test)` (in the
// child) patches one fs call of the lock's: when `test(args)` says so, it does the call, prints
// `paused`, and stalls (as a preempted process would) until the file `resume` exists beside it.
function child(t: TestContext, dir: string, body: string): { c: ChildProcess; out: () => string } {
  const src = `import fs from 'node:fs';
import * as lock from ${JSON.stringify(path.join(ROOT, 'dist', 'core', 'lock.js'))};
const resume = ${JSON.stringify(path.join(dir, 'resume'))};
function pauseAt(name, when) {
  const real = fs[name];
  fs[name] = function (...a) {
    const r = real.apply(this, a);
    if (when(...a)) {
      fs.writeSync(1, 'paused\\n');
      const end = Date.now() + 10_000;
      while (!fs.existsSync(resume) && Date.now() < end) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
    return r;
  };
}
${body}`;
  const c = spawn(process.execPath, ['--input-type=module', '-e', src], { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => c.kill('SIGKILL'));
  let out = '';
  c.stdout!.on('data', (d) => (out += d));
  c.stderr!.on('data', (d) => (out += d));
  return { c, out: () => out };
}

const old = (p: string) => {
  const t = new Date(Date.now() - 3_600_000);
  fs.utimesSync(p, t, t);
};

// Breaking a dead owner's lock renames its owner file away first; until the breaker removes the
// directory, the directory (old: the dead owner took it long ago) has no owner file. Another
// taker then must not judge it an orphan (no owner file, older than 5 s), remove it and take
// it: the breaker's removal that follows would delete that taker's lock and both would hold it.
test('a dead owner\'s lock being broken is not taken as an orphan meanwhile: one holder', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'run');
  const dead = await holder(t, file);
  dead.kill('SIGKILL');
  await new Promise((r) => dead.once('exit', r));
  old(`${file}.lock`);
  const breaker = child(t, dir, `pauseAt('renameSync', (from) => from.endsWith('.owner.json'));
const h = await lock.acquireLock(${JSON.stringify(file)}, { timeoutMs: 0, purpose: 'breaker' });
console.log(h ? 'held' : 'refused');
setInterval(() => {}, 1000);`);
  await waitFor(() => breaker.out().includes('paused'), 5000, 'the breaker to rename the dead owner file');
  const other = await acquireLock(file, { timeoutMs: 0, purpose: 'other' });
  fs.writeFileSync(path.join(dir, 'resume'), '');
  await waitFor(() => /held|refused/.test(breaker.out()), 5000, 'the breaker to answer');
  await other?.release();
  assert.deepEqual([breaker.out().includes('held'), !!other], [true, false], `breaker: ${breaker.out().trim()}; other: ${other ? 'held' : 'refused'}`);
  assert.equal(lockOwner(file)?.pid, breaker.c.pid);
});

// A release removes the owner file, then the directory. A taker between the two sees a directory
// with no owner file, old if the lock was held long (a session): it must not take it as an orphan,
// or the release's rmdir deletes the taker's fresh lock and a third taker gets it too.
test('a lock being released is not taken as an orphan between its two removals', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'run');
  const h = child(t, dir, `const h = await lock.acquireLock(${JSON.stringify(file)}, { timeoutMs: 0, purpose: 'long session' });
console.log(h ? 'held' : 'refused');
process.stdin.once('data', async () => {
  pauseAt('rmSync', (p) => p.endsWith('.owner.json'));
  await h.release();
  console.log('released');
  process.exit(0);
});`);
  await waitFor(() => h.out().includes('held'), 5000, 'the holder to take the lock');
  old(`${file}.lock`); // held an hour
  h.c.stdin!.end('go\n');
  await waitFor(() => h.out().includes('paused'), 5000, 'the release to remove the owner file');
  const taker = await acquireLock(file, { timeoutMs: 0, purpose: 'taker' });
  fs.writeFileSync(path.join(dir, 'resume'), '');
  await waitFor(() => h.out().includes('released'), 5000, 'the release to end');
  const third = await acquireLock(file, { timeoutMs: 0, purpose: 'third' });
  assert.equal(taker, null, taker ? `taken mid-release, then ${third ? 'taken again by a third taker: two holders' : 'its directory deleted by the release'}` : '');
  assert.ok(third, 'free once released');
  await third.release();
});

// A taker that made the directory but could not write its owner file (a full disk: the open
// succeeds, the write fails) leaves no lock behind: there is no exit hook for a lock never had,
// and an empty owner file names no one whose death would free it.
test('an owner file that cannot be written leaves no lock, and the error names it', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'run');
  const c = child(t, dir, `const real = fs.writeFileSync;
fs.writeFileSync = (p, ...a) => {
  if (!String(p).endsWith('.owner.json')) return real(p, ...a);
  fs.closeSync(fs.openSync(p, 'w'));
  throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
};
await lock.acquireLock(${JSON.stringify(file)}, { timeoutMs: 0, purpose: 'disk full' });`);
  const code = await new Promise((r) => c.c.once('exit', r));
  assert.equal(code, 1);
  assert.match(c.out(), /ENOSPC/);
  assert.ok(c.out().includes(`${file}.owner.json`), `the error names the owner file: ${c.out()}`);
  const next = await acquireLock(file, { timeoutMs: 0, purpose: 'next' });
  assert.ok(next, `taken after the failed taker exited (left: ${fs.readdirSync(dir).join(' ')})`);
  await next.release();
});

// An owner file that names no one (empty: its writer died between open and write, or a power cut
// lost its data) is judged like a missing one: an orphan once older than 5 s, never before.
test('an unreadable owner file is an orphan after 5 s, not before', async (t) => {
  const file = path.join(tempDir(t), 'run');
  fs.mkdirSync(`${file}.lock`);
  fs.writeFileSync(`${file}.owner.json`, '');
  assert.equal(await acquireLock(file, { timeoutMs: 0, purpose: 'too soon' }), null, 'a fresh one may be mid-write');
  old(`${file}.lock`);
  old(`${file}.owner.json`);
  const h = await acquireLock(file, { timeoutMs: 0, purpose: 'next' });
  assert.ok(h, 'an old unreadable owner file frees the lock');
  assert.equal(lockOwner(file)?.purpose, 'next');
  await h.release();
  assert.deepEqual(fs.readdirSync(path.dirname(file)), []);
});
