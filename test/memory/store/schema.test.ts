import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { APPLICATION_ID, SCHEMA_VERSION, openDatabase } from '../../../memory/store/schema.js';
import { MemoryStore } from '../../../memory/store.js';
import { MemoryError } from '../../../memory/types.js';
import { tempDir } from '../../helpers.js';

function refuses(file: string, code: string) {
  const before = fs.readFileSync(file);
  assert.throws(
    () => MemoryStore.open(file),
    (err: unknown) => err instanceof MemoryError && err.code === code && err.message.includes(file),
  );
  assert.ok(fs.readFileSync(file).equals(before), 'the file is left byte-identical');
  assert.equal(fs.existsSync(`${file}-wal`), false);
  assert.equal(fs.existsSync(`${file}-journal`), false);
}

test('a store is created in a missing folder, at the latest schema, marked as ours', (t) => {
  const file = path.join(tempDir(t), 'deep', 'er', 'memory.db');
  const s = MemoryStore.open(file);
  assert.equal(s.stats().schema_version, SCHEMA_VERSION);
  s.close();
  const db = new Database(file, { readonly: true });
  assert.equal(db.pragma('application_id', { simple: true }), APPLICATION_ID);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  db.close();
});

test('an empty file becomes a store', (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  fs.writeFileSync(file, '');
  const s = MemoryStore.open(file);
  assert.equal(s.stats().schema_version, SCHEMA_VERSION);
  assert.equal(s.stats().memories, 0);
  s.close();
});

test('a version 1 file migrates forward and keeps its data; observation text becomes searchable', async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const v1 = openDatabase(file, 1);
  assert.equal(v1.pragma('user_version', { simple: true }), 1);
  assert.equal((v1.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'observations_fts'").get() as { n: number }).n, 0);
  const at = '2024-01-01T00:00:00.000Z';
  v1.prepare("INSERT INTO memories (id, text, category, created_at, updated_at) VALUES (1, 'the harbour crane', 'observation', ?, ?)").run(at, at);
  v1.prepare("INSERT INTO observations (text, source, created_at, salience, prediction_error, decision, memory_id) VALUES ('a gantry crane at the harbour, painted teal', 'old', ?, 0.5, 1, 'novel', 1)").run(at);
  v1.close();

  const s = MemoryStore.open(file);
  t.after(() => s.close());
  assert.equal(s.stats().schema_version, SCHEMA_VERSION);
  const r = await s.query('teal gantry');
  assert.deepEqual(r.map((x) => [x.id, x.sources]), [[1, ['old']]]);
});

test('migrating twice is a no-op', (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  MemoryStore.open(file).close();
  const s = MemoryStore.open(file);
  assert.equal(s.stats().schema_version, SCHEMA_VERSION);
  s.close();
});

test('a file that is not SQLite is refused as corrupt, naming it, and left as it is', (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  fs.writeFileSync(file, crypto.randomBytes(8192));
  refuses(file, 'CORRUPT');
});

test('a SQLite header over garbage is refused as corrupt and left as it is', (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  fs.writeFileSync(file, Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), crypto.randomBytes(8192)]));
  refuses(file, 'CORRUPT');
});

test("someone else's SQLite file is refused as foreign and left as it is", (t) => {
  const file = path.join(tempDir(t), 'ledger.db');
  const db = new Database(file);
  db.exec('CREATE TABLE sessions (id TEXT PRIMARY KEY)');
  db.close();
  refuses(file, 'FOREIGN');
});

test('a SQLite file with another application id is refused as foreign', (t) => {
  const file = path.join(tempDir(t), 'other.db');
  const db = new Database(file);
  db.pragma('application_id = 42');
  db.exec('CREATE TABLE x (y)');
  db.close();
  refuses(file, 'FOREIGN');
});

test('a store from a newer nightshift is refused, not downgraded', (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  MemoryStore.open(file).close();
  const db = new Database(file);
  db.pragma('user_version = 99');
  // A newer nightshift might have left it in rollback-journal mode: we must not switch it to WAL.
  db.pragma('journal_mode = DELETE');
  db.close();
  const before = fs.readFileSync(file);
  assert.throws(() => MemoryStore.open(file), /schema version 99, newer than this nightshift knows/);
  assert.ok(fs.readFileSync(file).equals(before), 'the file is left byte-identical');
});

// Migration 10: the query's possibly-outdated check (memory/store/search.ts OUTDATED) probes the
// partial index of `supersedes` edges, not every edge into each candidate; without the index (the
// control) the same statement walks edges_to.
test('a query checks its candidates for newer values through the supersedes index', async (t) => {
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'));
  t.after(() => s.close());
  const db = (s as unknown as { db: Database.Database }).db;
  const prepared: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => (prepared.push(sql), prepare(sql))) as typeof db.prepare;
  const a = await s.observe({ text: 'The staging database runs on port 5432' }, { surface: 'cli' });
  await s.observe({ text: 'The staging cache answers on port 6379' }, { surface: 'cli' });
  s.link(a.memory_id, a.memory_id + 1, 'supports', 0.5, { surface: 'cli' });
  assert.ok((await s.query('staging port', { limit: 5 })).length > 0);
  const states = prepared.find((sql) => sql.includes('AS outdated'));
  assert.ok(states, 'the query prepared its candidates statement');
  const plan = () => {
    const explain = prepare(`EXPLAIN QUERY PLAN ${states}`);
    return (explain.all(...Array(explain.source.split('?').length - 1).fill(null)) as Array<{ detail: string }>).map((r) => r.detail).join('\n');
  };
  assert.match(plan(), /SEARCH e USING INDEX edges_superseding \(to_id=\?\)/);
  db.exec('DROP INDEX edges_superseding');
  assert.doesNotMatch(plan(), /edges_superseding/);
  assert.match(plan(), /SEARCH e USING INDEX edges_to \(to_id=\?\)/);
});
