import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { MemoryStore } from '../../../memory/store.js';
import { seededRng, walk, type WanderGraph } from '../../../memory/learning/wander.js';
import { tempDir } from '../../helpers.js';

// 60 memories in a ring (each linked to the next two); even ids well remembered (R 0.95), every
// fifth overdue (R 0.2).
function ring(): WanderGraph {
  const n = 60;
  return {
    count: n,
    at: (i) => i + 1,
    retrievability: (id) => (id % 5 === 0 ? 0.2 : id % 2 === 0 ? 0.95 : 0.5),
    neighbours: (id) => [1, 2].map((k) => ({ to: ((id - 1 + k) % n) + 1, weight: 0.5 })),
    overdue: Array.from({ length: n }, (_, i) => i + 1).filter((id) => id % 5 === 0),
  };
}

test('the same seed gives the same path; another seed another one', () => {
  const g = ring();
  const a = walk(g, { steps: 8, jumpRate: 0.4, rng: seededRng(7) });
  assert.deepEqual(walk(g, { steps: 8, jumpRate: 0.4, rng: seededRng(7) }), a);
  assert.notDeepEqual(walk(g, { steps: 8, jumpRate: 0.4, rng: seededRng(8) }), a);
  assert.equal(new Set(a.map((s) => s.id)).size, a.length, 'no memory twice');
});

test('over 10k walks, a well-remembered memory jumps to an overdue one at the configured rate (within 0.02)', (t) => {
  const g = ring();
  for (const rate of [0.4, 0.1]) {
    let eligible = 0;
    let jumps = 0;
    for (let seed = 1; seed <= 10_000; seed++) {
      const path = walk(g, { steps: 6, jumpRate: rate, rng: seededRng(seed) });
      for (let i = 1; i < path.length; i++) {
        const from = path[i - 1].id;
        const seen = new Set(path.slice(0, i).map((s) => s.id));
        if (g.retrievability(from) > 0.7 && g.overdue.some((o) => !seen.has(o))) {
          eligible++;
          if (path[i].via === 'jump') jumps++;
        }
        if (path[i].via === 'jump') assert.ok(g.overdue.includes(path[i].id) && g.retrievability(from) > 0.7);
      }
    }
    const observed = jumps / eligible;
    t.diagnostic(`jump rate ${rate}: observed ${observed.toFixed(4)} over ${eligible} chances in 10k walks`);
    assert.ok(Math.abs(observed - rate) < 0.02, `observed ${observed}`);
  }
});

test('a store wander is deterministic per seed and reports retrievability; an empty store gives an empty path', async (t) => {
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'));
  t.after(() => s.close());
  assert.deepEqual(s.wander({ seed: 1 }).path, []);
  for (const text of ['red kiln', 'blue kiln glaze', 'green tea', 'yellow tea cup', 'purple kiln shelf']) await s.observe({ text }, { surface: 'cli' });
  const a = s.wander({ steps: 4, seed: 99 });
  assert.deepEqual(s.wander({ steps: 4, seed: 99 }), a);
  assert.equal(a.path.length, 4);
  assert.ok(a.path.every((p) => p.retrievability === 1));
  assert.throws(() => s.wander({ steps: 0 }), /steps to be a whole number/);
});
