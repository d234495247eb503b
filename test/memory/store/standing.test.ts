// A session never changes what a shared memory means to the other agents (scope.ts
// standingProblem): alpha's view contradicts, grades, resolves and links shared memories; beta's
// view (ranking, confidence, salience, due reviews, threads, surprises) stays as it was. Control:
// the same calls with the rule off (test-only `crossScopeStanding`) change what beta sees.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { standingProblem } from '../../../memory/store/scope.js';
import { MemoryStore } from '../../../memory/store.js';
import { MemoryError, type Actor } from '../../../memory/types.js';
import { tempDir } from '../../helpers.js';

const CLI: Actor = { surface: 'cli' };
const MCP: Actor = { surface: 'mcp', sessionId: 'S-alpha-1' };
const T0 = new Date('2026-03-01T10:00:00Z');
// A day on: the fact's first review is due in three, after an Again in one.
const DAY_LATER = new Date('2026-03-02T12:00:00Z');
const Q = 'lighthouse backup';

test('the rule over plain rows: a session its own (or a change touching one of its own), the operator all', () => {
  const shared = { id: 1, scope: null };
  const alphas = { id: 2, scope: 'alpha' };
  const table: Array<[string | null, Parameters<typeof standingProblem>[2], boolean]> = [
    ['alpha', [alphas], true],
    ['alpha', [shared], false],
    ['alpha', [shared, alphas], true],
    ['alpha', [shared, { id: 3, scope: null }], false],
    ['beta', [alphas], false],
    [null, [shared], true],
    [null, [alphas, shared], true],
  ];
  for (const [agent, touched, may] of table) assert.equal(standingProblem(agent, 'link', touched) === null, may, `${agent} ${JSON.stringify(touched)}`);
  assert.deepEqual(standingProblem('alpha', 'review', [shared]), {
    code: 'PERMISSION',
    message: '#1 is shared: grading it would move its review schedule for every agent, so only the operator may; observe your own memory of it and link it `relates_to` #1 instead',
  });
});

type Ids = { fact: number; disk: number; prediction: number; thread: number; mine: number; myPrediction: number };

async function seed(file: string): Promise<Ids> {
  const op = MemoryStore.open(file, { now: () => T0 });
  try {
    const alpha = op.as('alpha');
    const fact = (await op.observe({ text: 'The backup job on the lighthouse host runs nightly at two' }, CLI)).memory_id;
    const disk = (await op.observe({ text: 'The lighthouse host keeps its backup archives on the second disk' }, CLI)).memory_id;
    const prediction = (await op.predict({ text: 'The lighthouse backup will finish before three tonight', confidence: 0.9 }, CLI)).id;
    const thread = (await op.openThread({ text: 'Find out why the lighthouse backup was slow last week', solo: true }, CLI)).id;
    const mine = (await alpha.observe({ text: 'Last night no backup ran on the lighthouse host at two' }, MCP)).memory_id;
    const myPrediction = (await alpha.predict({ text: 'Tonight the lighthouse backup job will fail again', confidence: 0.9 }, MCP)).id;
    // Alpha's own prediction is about the shared fact: an edge from its own memory, which it may make.
    alpha.link(myPrediction, fact, 'relates_to', 1, MCP);
    return { fact, disk, prediction, thread, mine, myPrediction };
  } finally {
    op.close();
  }
}

// Everything beta's view says about the shared memories.
async function betaSees(file: string, ids: Ids) {
  const beta = MemoryStore.open(file, { now: () => T0 }).as('beta');
  try {
    const fact = beta.recall(ids.fact);
    return {
      ranking: (await beta.query(Q)).map((r) => [r.id, r.score]),
      confidence: fact.confidence,
      salience: fact.salience,
      retrievability: beta.retrievability(ids.fact, DAY_LATER),
      due: beta.overdue(DAY_LATER).map((o) => o.id),
      threads: beta.threads({ open: true }).map((t) => t.id),
      surprises: beta.surprisesSince(T0.toISOString()).map((s) => s.id),
    };
  } finally {
    beta.close();
  }
}

// Alpha's session at the shared memories, each call's error (or null: it went through).
function attack(alpha: MemoryStore, ids: Ids): Record<string, MemoryError | null> {
  const tryIt = (f: () => unknown) => {
    try {
      f();
      return null;
    } catch (err) {
      if (!(err instanceof MemoryError)) throw err;
      return err;
    }
  };
  return {
    contradict: tryIt(() => alpha.contradict(ids.fact, ids.mine, 'it did not run', MCP)),
    review: tryIt(() => alpha.review(ids.fact, 'again', MCP)),
    resolve: tryIt(() => alpha.resolvePrediction(ids.prediction, 'wrong', null, MCP)),
    link: tryIt(() => alpha.link(ids.disk, ids.fact, 'supports', 1, MCP)),
  };
}

const counts = (s: MemoryStore) =>
  Object.fromEntries(['reviews', 'edges', 'contradiction_candidates', 'audit'].map((t) => [t, ((s as unknown as { db: { prepare(q: string): { get(): { n: number } } } }).db.prepare(`SELECT count(*) AS n FROM ${t}`).get()).n]));

test("alpha's session cannot contradict, grade, resolve or link shared memories: PERMISSION, nothing written, beta's view unchanged; with the rule off it changes", async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const ids = await seed(file);
  const before = await betaSees(file, ids);
  assert.ok(before.ranking.some(([id]) => id === ids.fact), 'control: beta finds the shared fact');
  assert.ok(!before.due.includes(ids.fact) && before.surprises.length === 0);

  const op = MemoryStore.open(file, { now: () => T0 });
  t.after(() => op.close());
  const written = counts(op);
  const refused = attack(op.as('alpha'), ids);
  for (const [what, err] of Object.entries(refused)) {
    assert.ok(err && err.code === 'PERMISSION' && /(is|are) shared: .*only the operator may; .* instead/.test(err.message), `${what}: ${err?.message}`);
  }
  assert.match(refused.contradict!.message, new RegExp(`#${ids.fact} is shared: .*observe your own memory and link it \`contradicts\` #${ids.fact} instead`));
  assert.match(refused.link!.message, new RegExp(`#${ids.disk} and #${ids.fact} are shared`));
  assert.deepEqual(counts(op), written, 'nothing written, not even an audit row');

  // What it may do instead: its own memory linked `contradicts`, and its own prediction resolved.
  op.as('alpha').link(ids.mine, ids.fact, 'contradicts', 1, MCP);
  op.as('alpha').contradict(ids.mine, ids.fact, null, MCP);
  assert.ok(op.as('alpha').resolvePrediction(ids.myPrediction, 'wrong', null, MCP).touched.every((id) => id !== ids.fact), 'the shared fact it touches is not raised');
  assert.deepEqual(await betaSees(file, ids), before);

  // Control: the same calls with the rule off go through, and beta's view moves on every count.
  const unchecked = MemoryStore.open(file, { now: () => T0, crossScopeStanding: true });
  t.after(() => unchecked.close());
  assert.deepEqual(Object.values(attack(unchecked.as('alpha'), ids)), [null, null, null, null]);
  const after = await betaSees(file, ids);
  assert.ok(after.confidence < before.confidence, `confidence ${before.confidence} -> ${after.confidence}`);
  assert.ok(after.retrievability < before.retrievability, `retrievability ${before.retrievability} -> ${after.retrievability}`);
  assert.ok(after.due.includes(ids.fact), 'due for beta the next day, not in three');
  assert.deepEqual(after.surprises, [ids.prediction]);
  assert.notDeepEqual(after.ranking, before.ranking);
});

test("resolving its own prediction raises the shared memory it touches only with the rule off", async (t) => {
  const run = async (crossScopeStanding: boolean) => {
    const file = path.join(tempDir(t), 'memory.db');
    const ids = await seed(file);
    const before = await betaSees(file, ids);
    const s = MemoryStore.open(file, { now: () => T0, crossScopeStanding });
    try {
      const r = s.as('alpha').resolvePrediction(ids.myPrediction, 'wrong', null, MCP);
      return { touched: r.touched.includes(ids.fact), before: before.salience, after: (await betaSees(file, ids)).salience };
    } finally {
      s.close();
    }
  };
  const on = await run(false);
  assert.deepEqual([on.touched, on.after], [false, on.before]);
  const off = await run(true);
  assert.equal(off.touched, true);
  assert.ok(off.after > off.before, `salience ${off.before} -> ${off.after}`);
});

test('the operator keeps every power over a shared memory: contradict, review, resolve and link', async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const ids = await seed(file);
  const op = MemoryStore.open(file, { now: () => T0 });
  t.after(() => op.close());
  assert.deepEqual(Object.values(attack(op, ids)), [null, null, null, null]);
  assert.ok(op.recall(ids.fact).confidence < 0.5);
});

test("an operator's solo thread is a grant: alpha's session closes it for every agent; one that is not solo only the operator closes", async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const ids = await seed(file);
  assert.ok((await betaSees(file, ids)).threads.includes(ids.thread), 'beta sees it open');
  const op = MemoryStore.open(file, { now: () => T0 });
  t.after(() => op.close());
  const needsOperator = (await op.openThread({ text: 'Decide whether the lighthouse host keeps its second disk', solo: false }, CLI)).id;
  assert.equal(op.as('alpha').resolveThread(ids.thread, 'the second disk was full', MCP).status, 'resolved');
  assert.equal((await betaSees(file, ids)).threads.includes(ids.thread), false, 'closed for beta too: no agent redoes it');
  // Control: a thread that is not solo stays the operator's.
  assert.throws(() => op.as('alpha').resolveThread(needsOperator, 'kept it', MCP), /only the operator closes it/);
  assert.equal(op.resolveThread(needsOperator, 'kept it', CLI).status, 'resolved');
});

test("another agent's private memories never use up a shared memory's rare-word links for beta; with the rule off they do", async (t) => {
  const run = async (crossScopeStanding: boolean) => {
    let at = Date.parse('2026-03-01T10:00:00Z');
    const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => new Date((at += 60_000)), crossScopeStanding });
    try {
      // Enough observations that one word in six memories is rare (1% of 800).
      const words = ['amber', 'birch', 'cobalt', 'delta', 'ember', 'fjord', 'garnet', 'heron', 'indigo', 'juniper'];
      await s.observeMany(Array.from({ length: 800 }, (_, i) => ({ text: `Note ${i}: the ${words[i % 10]} ${words[(i * 3) % 10]} report lists item${i} and code${i * 3}` })), { surface: 'import' });
      const fact = (await s.observe({ text: 'The ZORBLAX relay on the harbour host restarts nightly' }, { surface: 'cli' })).memory_id;
      for (let i = 0; i < 5; i++) await s.as('alpha').observe({ text: `Alpha note ${i} mentions ZORBLAX once more, variant ${i}` }, { surface: 'mcp', sessionId: `S-alpha-${i}` });
      const betas = (await s.as('beta').observe({ text: 'Beta saw the ZORBLAX relay flap during the night' }, { surface: 'mcp', sessionId: 'S-beta-1' })).memory_id;
      return { betas, linked: s.recall(fact).edges.filter((e) => e.type === 'shares').map((e) => e.to) };
    } finally {
      s.close();
    }
  };
  const on = await run(false);
  assert.deepEqual([on.linked.length, on.linked.includes(on.betas)], [6, true], "alpha's five and beta's");
  // Control: counted as before, alpha's five fill the cap (5) and beta's memory is passed over.
  const off = await run(true);
  assert.deepEqual([off.linked.length, off.linked.includes(off.betas)], [5, false]);
});

test("a session's shared evidence moves a shared memory's valid-from no earlier: beta's answer as of a past time stays; the operator's does, and with the rule off alpha's does", async (t) => {
  const run = async (writer: 'alpha' | 'operator', crossScopeStanding = false) => {
    const file = path.join(tempDir(t), 'memory.db');
    const s = MemoryStore.open(file, { now: () => T0, crossScopeStanding });
    try {
      const fact = (await s.observe({ text: 'The lighthouse host backs up to the second disk every night', valid_from: '2026-02-01' }, CLI)).memory_id;
      const view = writer === 'alpha' ? s.as('alpha') : s;
      const r = await view.observe({ text: 'The lighthouse host backs up to the second disk every night', valid_from: '2025-06-01', shared: true }, writer === 'alpha' ? MCP : CLI);
      assert.equal(r.memory_id, fact, 'merged into the shared memory');
      return (await s.as('beta').query('lighthouse second disk', { as_of: '2025-12-01T00:00:00Z' })).some((m) => m.id === fact);
    } finally {
      s.close();
    }
  };
  assert.equal(await run('alpha'), false, "alpha's earlier date does not reach beta's past");
  assert.equal(await run('operator'), true, "control: the operator's evidence dates it earlier for all");
  assert.equal(await run('alpha', true), true, 'control: with the rule off alpha backdates it for beta');
});
