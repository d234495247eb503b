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
  setTimeout(() => process.exit(0), 1500);
});`;
  const racers = Array.from({ length: 6 }, () => {
    const c = spawn(process.execPath, ['--input-type=module', '-e', src], { stdio: ['pipe', 'pipe', 'inherit'] });
    t.after(() => c.kill('SIGKILL'));
    let out = '';
    c.stdout!.on('data', (d) => (out += d));
    return { c, out: () => out };
  });
  // All loaded before any is told to go, so they meet at the mkdir.
  await new Promise((r) => setTimeout(r, 800));
  for (const r of racers) r.c.stdin!.end('go\n');
  await waitFor(() => racers.every((r) => /held|refused/.test(r.out())), 10_000, 'every racer to answer');
  assert.equal(racers.filter((r) => r.out().includes('held')).length, 1, racers.map((r) => r.out().trim()).join(','));
});
