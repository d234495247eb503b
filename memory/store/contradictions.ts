// Contradictions: an explicit one applied at once (`contradict`), and candidates (from the offline
// heuristic at observe time, or Gemini after it) recorded for review, never applied.
import { heuristicVerdict } from '../learning/contradiction.js';
import { MemoryError, type Actor, type ContradictionCandidate } from '../types.js';
import { applyGrade } from './cards.js';
import { checkActor, checkId, checkText, round } from './checks.js';
import type { StoreCore } from './core.js';

/**
 * `otherId` contradicts `id`: a `contradicts` edge from other to id, id's confidence lowered by a
 * third, an Again review on id, and the pair recorded as a confirmed contradiction. A session may
 * contradict only its own memories (scope.ts standingProblem): MemoryError PERMISSION.
 */
export function contradict(s: StoreCore, id: number, otherId: number, note: string | null, actor: Actor): { id: number; other_id: number; confidence: number } {
  checkActor(actor);
  checkId(id);
  checkId(otherId);
  if (id === otherId) throw new MemoryError('INVALID', `Expected two different memories, got ${id} twice`);
  checkText({ note });
  return s.write(() => {
    s.tombstones.refuse([['note', note]]);
    const before = s.row(id);
    s.row(otherId);
    s.mayChange('contradict', before);
    const confidence = round(Math.max(0.05, before.confidence * (2 / 3)));
    s.stmt('UPDATE memories SET confidence = ?, updated_at = ? WHERE id = ?').run(confidence, s.iso(), id);
    s.upsertEdge(otherId, id, 'contradicts', 1);
    const [a, b] = id < otherId ? [id, otherId] : [otherId, id];
    s.stmt(
      `INSERT INTO contradiction_candidates (a, b, method, score, reason, status, created_at) VALUES (?, ?, 'explicit', 1, ?, 'confirmed', ?)
       ON CONFLICT (a, b) DO UPDATE SET status = 'confirmed', method = 'explicit', score = 1, reason = coalesce(excluded.reason, reason)`,
    ).run(a, b, note ?? null, s.iso());
    applyGrade(s, id, 'again', 'contradicted', actor, s.now());
    s.audit(actor, 'contradict', `memory:${id}`, { confidence: before.confidence }, { other_id: otherId, confidence, note });
    return { id, other_id: otherId, confidence };
  })();
}

// Inside a transaction: candidates from the offline heuristic against the close memories the gate saw.
export function heuristicCandidates(s: StoreCore, id: number, text: string, neighbours: Array<{ id: number; text: string; lexical: number }>): number[] {
  const out: number[] = [];
  for (const n of neighbours) {
    if (n.id === id || n.lexical < 0.2) continue;
    const v = heuristicVerdict(text, n.text);
    if (v.contradicts && recordCandidate(s, id, n.id, 'heuristic', v.score, v.reason)) out.push(n.id);
  }
  return out;
}

/** Records a contradiction candidate (never applied); false when the pair is already known. */
// `actor`: who found it, for the audit row (observe audits its own candidates in its own row).
export function recordCandidate(s: StoreCore, x: number, y: number, method: 'heuristic' | 'gemini', score: number, reason: string, actor?: Actor): boolean {
  checkText({ reason });
  const [a, b] = x < y ? [x, y] : [y, x];
  // A derived reason (Gemini's words) that quotes a forgotten claim is withheld, not stored.
  if (s.tombstones.match([['reason', reason]])) reason = '(withheld: it quotes a forgotten claim)';
  return s.write(() => {
    const r = s.stmt(
      `INSERT INTO contradiction_candidates (a, b, method, score, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (a, b) DO UPDATE SET method = excluded.method, score = excluded.score, reason = excluded.reason
       WHERE status = 'candidate' AND excluded.method = 'gemini'`,
    ).run(a, b, method, score, reason, s.iso());
    if (r.changes > 0 && actor) s.audit(actor, 'candidate', `memories:${a},${b}`, null, { method, score, reason });
    return r.changes > 0;
  })();
}

/** Drops a candidate that a later check found compatible (only while it is still a candidate). */
export function dismissCandidate(s: StoreCore, x: number, y: number, actor?: Actor): boolean {
  const [a, b] = x < y ? [x, y] : [y, x];
  return s.write(() => {
    const done = s.stmt("UPDATE contradiction_candidates SET status = 'dismissed' WHERE a = ? AND b = ? AND status = 'candidate'").run(a, b).changes > 0;
    if (done && actor) s.audit(actor, 'dismiss_candidate', `memories:${a},${b}`, { status: 'candidate' }, { status: 'dismissed' });
    return done;
  })();
}

/** Contradiction candidates, newest first. */
export function contradictionCandidates(s: StoreCore, status: ContradictionCandidate['status'] | null = 'candidate', limit = 100): ContradictionCandidate[] {
  // Both memories this view's to see, or the pair is not there for it.
  const both = `EXISTS (SELECT 1 FROM memories m WHERE m.id = c.a AND ${s.seen('m')}) AND EXISTS (SELECT 1 FROM memories m WHERE m.id = c.b AND ${s.seen('m')})`;
  return (status
    ? s.stmt(`SELECT c.* FROM contradiction_candidates c WHERE c.status = ? AND ${both} ORDER BY c.id DESC LIMIT ?`).all(status, limit)
    : s.stmt(`SELECT c.* FROM contradiction_candidates c WHERE ${both} ORDER BY c.id DESC LIMIT ?`).all(limit)) as ContradictionCandidate[];
}
