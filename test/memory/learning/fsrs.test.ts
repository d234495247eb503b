import assert from 'node:assert/strict';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { initialCard, retrievability, review, type GradeName } from '../../../memory/learning/fsrs.js';
import { MemoryStore } from '../../../memory/store.js';
import type { Actor } from '../../../memory/types.js';
import { tempDir } from '../../helpers.js';

const DAY = 86_400_000;
const T0 = '2026-01-01T00:00:00.000Z';
const at = (days: number) => new Date(Date.parse(T0) + days * DAY);
const CLI: Actor = { surface: 'cli' };

test('retrievability falls over simulated time and is 0.9 when a fresh card falls due', () => {
  const c = initialCard(T0);
  assert.equal(c.reps, 0, 'no grade was given at creation');
  const rs = [0, 1, 3, 10, 30, 100, 365].map((d) => retrievability(c, at(d)));
  assert.equal(rs[0], 1);
  for (let i = 1; i < rs.length; i++) assert.ok(rs[i] < rs[i - 1], `R falls: ${rs.join(', ')}`);
  assert.ok(Math.abs(retrievability(c, at(c.stability)) - 0.9) < 1e-6, 'R is 0.9 after one stability');
  assert.ok(rs[6] < 0.5);
});

test('each grade moves stability the right way: again down, then hard < good < easy, all above again', () => {
  const c = review(initialCard(T0), 'good', at(3));
  const next = Object.fromEntries((['again', 'hard', 'good', 'easy'] as GradeName[]).map((g) => [g, review(c, g, at(10))])) as Record<GradeName, ReturnType<typeof review>>;
  assert.ok(next.again.stability < c.stability, 'again lowers stability');
  assert.ok(next.hard.stability < next.good.stability && next.good.stability < next.easy.stability);
  assert.ok(next.good.stability > c.stability, 'a successful late review raises stability');
  assert.equal(next.again.lapses, c.lapses + 1);
  assert.ok(Date.parse(next.easy.due) > Date.parse(next.good.due) && Date.parse(next.good.due) > Date.parse(next.again.due));
});

function open(t: TestContext, now: () => Date): MemoryStore {
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now });
  t.after(() => s.close());
  return s;
}

test('the store grades: a merge is Easy, supersede and contradict are Again, review by hand, each with a review row', async (t) => {
  let clock = at(0);
  const s = open(t, () => clock);
  const a = await s.observe({ text: 'The backup job runs at 02:00 every night on the NAS' }, CLI);
  const s0 = s.recall(a.memory_id);
  assert.equal(s0.retrievability, 1);
  clock = at(5);
  assert.ok(s.retrievability(a.memory_id) < 0.9, 'overdue after five days');
  assert.deepEqual(s.overdue(clock).map((o) => o.id), [a.memory_id]);
  const m = await s.observe({ text: 'the backup job runs at 02:00 every night on the NAS.' }, CLI);
  assert.equal(m.decision, 'merge');
  const afterMerge = s.recall(a.memory_id);
  assert.equal(afterMerge.retrievability, 1, 'reviewed just now');
  assert.ok(Date.parse(afterMerge.due!) > Date.parse(s0.due!) + 10 * DAY, `Easy pushes the due date out: ${afterMerge.due}`);
  assert.deepEqual(s.overdue(clock), []);

  const b = await s.observe({ text: 'The backup job moved to 03:30 on the new storage server' }, CLI);
  s.supersede(a.memory_id, b.memory_id, CLI);
  const c = await s.observe({ text: 'Quarterly reports go to the finance mailing list' }, CLI);
  const d = await s.observe({ text: 'Quarterly reports are no longer emailed; they live in the wiki' }, CLI);
  const before = s.recall(c.memory_id).confidence;
  const x = s.contradict(c.memory_id, d.memory_id, 'moved to the wiki', CLI);
  assert.ok(x.confidence < before, 'confidence lowered');
  assert.ok(s.recall(d.memory_id).edges.some((e) => e.type === 'contradicts' && e.to === c.memory_id && e.direction === 'out'));
  const r = s.review(b.memory_id, 'hard', { surface: 'mcp', sessionId: 's9' });
  assert.equal(r.grade, 'hard');
  assert.throws(() => s.review(b.memory_id, 'great' as GradeName, CLI), /one of again, hard, good, easy/);
  const reviews = (s as any).db.prepare('SELECT memory_id, grade, reason FROM reviews ORDER BY id').all();
  assert.deepEqual(reviews, [
    { memory_id: a.memory_id, grade: 'easy', reason: 'confirmed' },
    { memory_id: a.memory_id, grade: 'again', reason: 'superseded' },
    { memory_id: c.memory_id, grade: 'again', reason: 'contradicted' },
    { memory_id: b.memory_id, grade: 'hard', reason: 'manual' },
  ]);
  const st = s.stats();
  assert.equal(st.reviews, 4);
  assert.equal(typeof st.retrievability.mean, 'number');
});

test('gradeSession: used in an ok session is Good, surfaced and ignored is Hard, recalled and ignored is not graded; twice is once', async (t) => {
  const clock = at(2);
  const s = open(t, () => clock);
  const ids: number[] = [];
  for (const text of ['Alpha service listens on 8080', 'Beta queue drains hourly', 'Gamma cache is redis 7', 'Delta cron cleans tmp']) ids.push((await s.observe({ text, created_at: T0 }, CLI)).memory_id);
  const [a, b, c, d] = ids;
  assert.deepEqual(s.gradeSession({ sessionId: 'failed', outcome: 'error', recalledIds: [a], usedIds: [a] }), [], 'a failed session grades nothing');
  const g = s.gradeSession({ sessionId: 'sess-1', outcome: 'ok', recalledIds: [a, b], usedIds: [a], surfacedIds: [c], injectedIds: [d] });
  assert.deepEqual(g, [{ id: a, grade: 'good' }, { id: c, grade: 'hard' }, { id: d, grade: 'hard' }]);
  assert.deepEqual(s.gradeSession({ sessionId: 'sess-1', outcome: 'ok', recalledIds: [a], usedIds: [a] }), []);
  assert.equal(s.recall(a).access_count, 1);
  const audit = s.auditLog().filter((r) => r.action === 'review');
  assert.deepEqual(audit.map((r) => [r.surface, r.session_id]), [['session', 'sess-1'], ['session', 'sess-1'], ['session', 'sess-1']]);
});

test('a store from before the learning layer gets cards from each memory\'s creation', async (t) => {
  const clock = at(1);
  const s = open(t, () => clock);
  const r = await s.observe({ text: 'legacy row', created_at: T0 }, CLI);
  (s as any).db.prepare('UPDATE memories SET due = NULL, stability = NULL, last_review = NULL WHERE id = ?').run(r.memory_id);
  (s as any).backfillCards();
  const m = s.recall(r.memory_id);
  assert.equal(m.due, initialCard(T0).due);
  assert.ok(m.retrievability > 0.9 && m.retrievability < 1);
});
