import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fuseRanks, rankCandidates, recency, spreadActivation, type Adjacency } from '../../../memory/recall/rank.js';
import { DEFAULT_WEIGHTS } from '../../../memory/store.js';
import type { EdgeType } from '../../../memory/types.js';

const ALL: Record<EdgeType, number> = { supports: 1, contradicts: 1, abstracts: 1, relates_to: 1, supersedes: 1, follows: 1, shares: 1 };

// Both directions, as the store loads them.
function graph(edges: Array<[number, number, number, EdgeType?]>): Adjacency {
  const adj: Adjacency = new Map();
  const add = (a: number, b: number, weight: number, type: EdgeType) => {
    if (!adj.has(a)) adj.set(a, []);
    adj.get(a)!.push({ to: b, weight, type });
  };
  for (const [a, b, w, type = 'relates_to'] of edges) {
    add(a, b, w, type);
    add(b, a, w, type);
  }
  return adj;
}

test('activation decays per hop and scales with edge weight', () => {
  // 1 - 2 - 3 - 4, and 1 - 5 with a weak edge.
  const adj = graph([[1, 2, 1], [2, 3, 1], [3, 4, 1], [1, 5, 0.2]]);
  const got = spreadActivation(new Map([[1, 1]]), adj, { hops: 2, decay: 0.5, edges: ALL });
  assert.equal(got.get(2), 0.5);
  assert.equal(got.get(3), 0.25);
  assert.equal(got.has(4), false, 'three hops away is beyond hops = 2');
  assert.equal(got.get(5), 0.1);
  // Two hops also bring activation back to the seed through its neighbours.
  assert.equal(got.get(1), 0.5 * 0.5 + 0.1 * 0.5 * 0.2);
});

test('activation from two seeds adds up on a shared neighbour', () => {
  const adj = graph([[1, 3, 1], [2, 3, 1], [3, 4, 1]]);
  const got = spreadActivation(new Map([[1, 1], [2, 0.5]]), adj, { hops: 1, decay: 0.5, edges: ALL });
  assert.equal(got.get(3), 0.75);
  assert.equal(got.has(4), false);
});

test('edge types carry activation by their own weight; a zero type carries none', () => {
  const adj = graph([[1, 2, 1, 'follows'], [1, 3, 1, 'contradicts']]);
  const got = spreadActivation(new Map([[1, 1]]), adj, { hops: 1, decay: 1, edges: { ...ALL, follows: 0.8, contradicts: 0 } });
  assert.equal(got.get(2), 0.8);
  assert.equal(got.has(3), false);
});

test('reciprocal-rank fusion rewards agreement between lists', () => {
  const f = fuseRanks([{ weight: 1, ids: [1, 2, 3] }, { weight: 1, ids: [3, 4] }], 1);
  assert.equal(f.get(1), 1 / 2);
  assert.equal(f.get(3), 1 / 4 + 1 / 2);
  assert.ok(f.get(3)! > f.get(1)!);
  assert.equal(f.get(4), 1 / 3);
  assert.equal(fuseRanks([{ weight: 0, ids: [9] }], 1).size, 0);
});

test('recency halves per half-life', () => {
  assert.equal(recency(0, 30), 1);
  assert.equal(recency(30, 30), 0.5);
  assert.equal(recency(60, 30), 0.25);
  assert.equal(recency(10, 0), 0);
});

test('a neighbour of the best hit can outrank a weak direct hit, and explain shows why', () => {
  const w = { ...DEFAULT_WEIGHTS, activation: 1, recency: 0, salience: 0 };
  const out = rankCandidates(
    [
      { id: 1, lexical: 9, vector: 0, fused: 1, activation: 0, ageDays: 0, salience: 0.5 },
      { id: 2, lexical: 1, vector: 0, fused: 0.1, activation: 0, ageDays: 0, salience: 0.5 },
      { id: 3, lexical: 0, vector: 0, fused: 0, activation: 0.5, ageDays: 0, salience: 0.5 },
    ],
    w,
  );
  assert.deepEqual(out.map((r) => r.id), [1, 3, 2]);
  assert.equal(out[1].parts.activation, 0.5);
  assert.equal(out[0].parts.fused, 1);
});

test('a candidate that mostly asks keeps 1 - asking of its score', () => {
  const c = { lexical: 1, vector: 0, fused: 1, activation: 0, ageDays: 0, salience: 0 };
  const w = { ...DEFAULT_WEIGHTS, asking: 0.5 };
  const [a, b] = rankCandidates([{ ...c, id: 1, asks: true }, { ...c, id: 2 }], w).sort((x, y) => x.id - y.id);
  assert.equal(a.score, b.score * 0.5);
  const [a0, b0] = rankCandidates([{ ...c, id: 1, asks: true }, { ...c, id: 2 }], { ...w, asking: 0 }).sort((x, y) => x.id - y.id);
  assert.equal(a0.score, b0.score);
});
