// A query reads the store as it was when its reads began: a write another connection commits
// between two of its reads is seen by none of them (StoreCore.read), where each read alone would
// have seen the store as it was at that read.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { StoreCore } from '../../../memory/store/core.js';
import { MemoryStore } from '../../../memory/store.js';
import type { Actor } from '../../../memory/types.js';
import { tempDir } from '../../helpers.js';

const CLI: Actor = { surface: 'cli', sessionId: null };

// A store whose clock, once armed, lets another connection fade memory `victim` while a query runs:
// the clock is read between the query's first reads (the arms, the walk) and its candidates' states.
async function setup(t: TestContext) {
  const file = path.join(tempDir(t), 'memory.db');
  const hook: { armed: boolean; calls: number; during: (() => void) | null } = { armed: false, calls: 0, during: null };
  const store = MemoryStore.open(file, {
    now: () => {
      if (hook.armed && ++hook.calls === 2) hook.during?.();
      return new Date('2026-01-01T00:00:00.000Z');
    },
  });
  const other = MemoryStore.open(file);
  t.after(() => {
    store.close();
    other.close();
  });
  const a = await store.observe({ text: 'The backup job for the ledger runs at 03:00 on the quiet host', source: 's1' }, CLI);
  await store.observe({ text: 'Granite countertops need sealing once a year in damp kitchens', source: 's2' }, CLI);
  const victim = a.memory_id;
  hook.during = () => other.fade(victim, CLI);
  const ask = async () => {
    hook.armed = true;
    hook.calls = 0;
    try {
      return (await store.query('backup job ledger', { limit: 5 })).map((r) => r.id);
    } finally {
      hook.armed = false;
    }
  };
  return { store, other, victim, ask, hook };
}

test('a write committed by another connection during a query is seen by none of its reads', async (t) => {
  const { victim, ask, hook, store } = await setup(t);
  assert.deepEqual(await ask(), [victim], 'the whole query saw the store as it began: the memory, not yet faded');
  assert.ok(hook.calls >= 2, 'the other connection wrote during the query');
  // After the query, the fade is there for the next one.
  assert.deepEqual(await store.query('backup job ledger', { limit: 5 }), []);
});

test('control: each read in its own transaction, the same write is seen halfway (the found memory is dropped by its later read)', async (t) => {
  const read = StoreCore.prototype.read;
  StoreCore.prototype.read = function <T>(fn: () => T): T {
    return fn();
  };
  t.after(() => {
    StoreCore.prototype.read = read;
  });
  const { ask, hook } = await setup(t);
  assert.deepEqual(await ask(), [], 'the arms found it, the candidates read afterwards were faded');
  assert.ok(hook.calls >= 2);
});
