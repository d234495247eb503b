// Migration 6: beliefs and values already in a store keep Identity only when the operator stated
// them or another session used them; what agents alone stated becomes their claim.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../../memory/store/schema.js';
import { StateView } from '../../../memory/store/state-view.js';
import { MemoryStore } from '../../../memory/store.js';
import { tempDir } from '../../helpers.js';

test('migration 6 keeps the operator\'s and the used beliefs in Identity, and makes what agents alone stated a claim', (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const v5 = openDatabase(file, 5);
  const at = '2026-01-01T00:00:00.000Z';
  const mem = v5.prepare('INSERT INTO memories (id, text, category, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
  const obs = v5.prepare("INSERT INTO observations (text, created_at, salience, prediction_error, decision, memory_id, session_id) VALUES (?, ?, 0.5, 1, 'novel', ?, ?)");
  const audit = v5.prepare("INSERT INTO audit (at, surface, session_id, action, target) VALUES (?, ?, ?, ?, ?)");
  const rows: Array<[number, string, string, string, string | null]> = [
    [1, 'operator belief', 'belief', 'cli', null],
    [2, 'the guardrail hook may be ignored', 'belief', 'session', 'S1'],
    [3, 'speed over review', 'value', 'mcp', 'S1'],
    [4, 'short notes age better', 'belief', 'session', 'S1'],
    [5, 'a plain observation by a session', 'observation', 'session', 'S1'],
  ];
  for (const [id, text, category, surface, session] of rows) {
    mem.run(id, text, category, at, at);
    obs.run(text, at, id, session);
    audit.run(at, surface, session, 'observe', `memory:${id}`);
  }
  // #4 was used in a later session (S2) that ended ok; #2 only by the session that stated it.
  const review = v5.prepare("INSERT INTO reviews (memory_id, at, grade, reason, session_id, retrievability, stability_after) VALUES (?, ?, 'good', 'used', ?, 1, 1)");
  review.run(4, at, 'S2');
  review.run(2, at, 'S1');
  v5.close();
  MemoryStore.open(file).close();
  const view = StateView.open(file)!;
  t.after(() => view.close());
  assert.deepEqual(view.identityCandidates(10).map((m) => m.id).sort(), [1, 4]);
  // Control: the same rows, read without the confirmed filter, would all have been Identity.
  const all = (view as unknown as { db: { prepare: (s: string) => { pluck: () => { all: () => number[] } } } }).db
    .prepare("SELECT id FROM memories WHERE category IN ('belief', 'value') ORDER BY id").pluck().all();
  assert.deepEqual(all, [1, 2, 3, 4]);
});
