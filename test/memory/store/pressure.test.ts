import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { readDreamPressure } from '../../../memory/store/pressure.js';
import { MemoryStore } from '../../../memory/store.js';
import type { Actor } from '../../../memory/types.js';
import { tempDir } from '../../helpers.js';

const OPERATOR: Actor = { surface: 'cli' };

test('read on its own, the dream pressure is what the open store says, before and after a dream', async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const store = await MemoryStore.open(file);
  try {
    for (const text of ['the deploy runs at noon', 'backups go to the second disk', 'the operator reads reports in the morning']) {
      await store.observe({ text }, OPERATOR);
    }
    const before = readDreamPressure(file);
    assert.deepEqual(before, store.dreamPressure());
    assert.equal(before?.observations_since, 3);
    store.recordDream(new Date().toISOString(), 5, store.lastObservationId(), {}, OPERATOR);
    await store.observe({ text: 'the second disk is full' }, OPERATOR);
    const after = readDreamPressure(file);
    assert.deepEqual(after, store.dreamPressure());
    assert.equal(after?.observations_since, 1);
  } finally {
    store.close();
  }
});

test('a file at another schema version, a foreign file or none reads as null, so the whole store decides', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'memory.db');
  (await MemoryStore.open(file)).close();
  assert.notEqual(readDreamPressure(file), null);
  const db = new Database(file);
  db.pragma('user_version = 999');
  db.close();
  assert.equal(readDreamPressure(file), null);
  const foreign = path.join(dir, 'foreign.db');
  fs.writeFileSync(foreign, 'not a database at all, just text long enough to be read as a header.'.repeat(20));
  assert.equal(readDreamPressure(foreign), null);
  assert.equal(readDreamPressure(path.join(dir, 'missing.db')), null);
  assert.equal(fs.existsSync(path.join(dir, 'missing.db')), false, 'a read creates no file');
});
