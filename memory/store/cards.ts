// Each memory's FSRS card in its columns and the reviews table: a grade moves the card
// (memory/learning/fsrs.ts decides how), one review row per grade.
import { GRADES, initialCard, retrievability as retrievabilityAt, review as reviewCard, type CardRow, type GradeReason } from '../learning/fsrs.js';
import { MemoryError, type Actor, type Category, type GradeName, type OverdueRecord, type ReviewResult } from '../types.js';
import { checkActor, checkId, round } from './checks.js';
import type { StoreCore } from './core.js';

// Memories from before the learning layer get the card they would have had from creation.
export function backfillCards(s: StoreCore): void {
  const rows = s.stmt('SELECT id, created_at FROM memories WHERE stability IS NULL').all() as Array<{ id: number; created_at: string }>;
  if (!rows.length) return;
  const set = s.stmt('UPDATE memories SET due = ?, stability = ?, difficulty = ?, elapsed_days = ?, scheduled_days = ?, reps = ?, lapses = ?, state = ?, last_review = ? WHERE id = ?');
  s.write(() => {
    for (const r of rows) {
      const c = initialCard(r.created_at);
      set.run(c.due, c.stability, c.difficulty, c.elapsed_days, c.scheduled_days, c.reps, c.lapses, c.state, c.last_review, r.id);
    }
  })();
}

export function card(s: StoreCore, id: number): CardRow & { created_at: string } {
  const r = s.stmt('SELECT due, stability, difficulty, elapsed_days, scheduled_days, reps, lapses, state, last_review, created_at FROM memories WHERE id = ?').get(id) as
    | (CardRow & { created_at: string })
    | undefined;
  if (!r) throw new MemoryError('NOT_FOUND', `No memory with id ${id}`);
  return r.stability === null ? { ...initialCard(r.created_at), created_at: r.created_at } : r;
}

/** Retrievability (FSRS-6, 0..1) of one memory at `at` (default now). */
export function retrievability(s: StoreCore, id: number, at: Date = s.now()): number {
  const c = card(s, id);
  return round(retrievabilityAt(c, at, c.created_at));
}

// Inside a transaction: one grade on one memory's card, one review row; an audit row unless the caller writes its own.
export function applyGrade(s: StoreCore, id: number, grade: GradeName, reason: GradeReason, actor: Actor, at: Date, audit = false): ReviewResult {
  const before = card(s, id);
  // Grades arrive in time order, but an import may carry older times: never review into the past.
  const last = before.last_review ? Date.parse(before.last_review) : 0;
  const when = at.getTime() < last ? new Date(last) : at;
  const r = retrievabilityAt(before, when, before.created_at);
  const after = reviewCard(before, grade, when);
  s.stmt('UPDATE memories SET due = ?, stability = ?, difficulty = ?, elapsed_days = ?, scheduled_days = ?, reps = ?, lapses = ?, state = ?, last_review = ? WHERE id = ?').run(
    after.due, after.stability, after.difficulty, after.elapsed_days, after.scheduled_days, after.reps, after.lapses, after.state, after.last_review, id,
  );
  s.stmt('INSERT INTO reviews (memory_id, at, grade, reason, session_id, retrievability, stability_before, stability_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
    id, when.toISOString(), grade, reason, actor.sessionId ?? null, round(r), before.stability, after.stability,
  );
  const result: ReviewResult = { id, grade, retrievability: round(r), stability: round(after.stability), due: after.due };
  if (audit) s.audit(actor, 'review', `memory:${id}`, { stability: before.stability, due: before.due }, { ...result, reason });
  return result;
}

/** Grades a memory by hand (the `review` tool): FSRS moves its stability and due date. A session only its own (PERMISSION). */
export function review(s: StoreCore, id: number, grade: GradeName, actor: Actor): ReviewResult {
  checkActor(actor);
  checkId(id);
  if (!GRADES.includes(grade)) throw new MemoryError('INVALID', `Expected grade to be one of ${GRADES.join(', ')}, got ${JSON.stringify(grade)}`);
  return s.write(() => {
    s.mayChange('review', s.row(id));
    return applyGrade(s, id, grade, 'manual', actor, s.now(), true);
  })();
}

/** Overdue memories (FSRS due time passed), most overdue first: what session-state may bring back. */
export function overdue(s: StoreCore, at: Date = s.now(), n = 10): OverdueRecord[] {
  const rows = s.stmt(
    `SELECT id, text, category, salience, due, stability, last_review, created_at FROM memories
     WHERE due <= ? AND faded = 0 AND superseded_by IS NULL AND ${s.seen()} ORDER BY due, id LIMIT ?`,
  ).all(at.toISOString(), n) as Array<{ id: number; text: string; category: Category; salience: number; due: string; stability: number; last_review: string | null; created_at: string }>;
  return rows.map((r) => ({ id: r.id, text: r.text, category: r.category, salience: r.salience, retrievability: round(retrievabilityAt(r, at, r.created_at)), due: r.due }));
}
