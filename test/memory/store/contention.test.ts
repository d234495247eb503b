// Concurrent writers on one memory store: two session servers and an operator's import, each its
// own process with its own connection, released at the same moment. Every write waits for the
// lock (BEGIN IMMEDIATE with the busy timeout); the negative control runs the same load with
// deferred transactions, which cannot wait in WAL mode once they have read.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { MemoryStore } from '../../../memory/store.js';
import { FIXTURES, tempDir } from '../../helpers.js';

type Tally = { ok: number; failed: number; errors: string[] };

function writer(t: TestContext, file: string, kind: 'observe' | 'import', count: number, mode: string, tag: string) {
  const child = spawn(process.execPath, [path.join(FIXTURES, 'memory-writer.mjs'), file, kind, String(count), mode, tag], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (c: string) => {
    out += c;
    if (out.includes('ready\n')) onReady();
  });
  const done = new Promise<Tally>((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n').filter(Boolean).pop()!)) : reject(new Error(`writer ${tag} exited ${code}: ${out}`)))),
  );
  return { ready, go: () => child.stdin.end('go\n'), done };
}

// 600 observes from two servers, and a 300-line import, all at once.
async function load(t: TestContext, mode: 'immediate' | 'deferred'): Promise<{ file: string; tallies: Tally[] }> {
  const file = path.join(tempDir(t), 'memory.db');
  MemoryStore.open(file).close();
  const ws = [writer(t, file, 'observe', 300, mode, 'srvA'), writer(t, file, 'observe', 300, mode, 'srvB'), writer(t, file, 'import', 300, mode, 'imp')];
  await Promise.all(ws.map((w) => w.ready));
  for (const w of ws) w.go();
  return { file, tallies: await Promise.all(ws.map((w) => w.done)) };
}

test('two servers and an import at once: 600 observes and the import, 0 failures, every one stored', async (t) => {
  const { file, tallies } = await load(t, 'immediate');
  assert.deepEqual(tallies.map((x) => x.failed), [0, 0, 0], JSON.stringify(tallies));
  const db = new Database(file, { readonly: true });
  t.after(() => db.close());
  assert.equal(db.prepare('SELECT count(*) FROM observations').pluck().get(), 900);
});

test('negative control: the same load with deferred transactions loses writes to "database is locked"', async (t) => {
  const { tallies } = await load(t, 'deferred');
  const failed = tallies.reduce((n, x) => n + x.failed, 0);
  assert.ok(failed > 0, `expected failures with deferred transactions, got ${JSON.stringify(tallies)}`);
  assert.ok(tallies.some((x) => x.errors.some((e) => /^SQLITE_BUSY/.test(e))), JSON.stringify(tallies));
});

test('a store another process is writing to still opens at once: a current schema takes no write lock', async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  MemoryStore.open(file).close();
  const holder = new Database(file);
  t.after(() => holder.close());
  holder.exec('BEGIN IMMEDIATE');
  holder.exec("INSERT INTO dreams (started_at, duration_ms, last_observation_id, metrics) VALUES ('2026-01-01T00:00:00Z', 1, 0, '{}')");
  // Without waiting on the lock: a busy store would make this open fail after the busy timeout.
  const store = MemoryStore.open(file);
  t.after(() => store.close());
  assert.equal(store.stats().memories, 0);
  holder.exec('COMMIT');
  // Negative control, tried once: with migrate() back to one IMMEDIATE transaction at every open,
  // this open waited out the 5 s busy timeout and threw SQLITE_BUSY.
});
