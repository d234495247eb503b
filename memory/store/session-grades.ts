// Grading what a session did with memory (docs/memory.md), once per session.
import { MemoryError, type Actor, type GradeName, type SessionUse } from '../types.js';
import { confirmByUse } from './beliefs.js';
import { applyGrade } from './cards.js';
import type { StoreCore } from './core.js';

/**
 * Grades what a session did with memory (docs/memory.md): used after a recall in a session that
 * ended ok is Good; surfaced by wander or injected and not used is Hard; recalled and not used is
 * not graded. A session that did not end ok grades nothing. Grading a session twice changes nothing.
 */
export function gradeSession(s: StoreCore, use: SessionUse): Array<{ id: number; grade: GradeName }> {
  if (!use || typeof use.sessionId !== 'string' || !use.sessionId) throw new MemoryError('INVALID', 'Expected a session id to grade');
  if (use.outcome !== 'ok') return [];
  const actor: Actor = { surface: 'session', sessionId: use.sessionId };
  return s.write(() => {
    const done = (s.stmt("SELECT count(*) AS n FROM reviews WHERE session_id = ? AND reason IN ('used', 'ignored')").get(use.sessionId) as { n: number }).n;
    if (done) return [];
    const used = new Set(use.usedIds);
    const seen = new Set([...use.recalledIds, ...(use.surfacedIds ?? []), ...(use.injectedIds ?? [])]);
    const shown = new Set([...(use.surfacedIds ?? []), ...(use.injectedIds ?? [])]);
    const out: Array<{ id: number; grade: GradeName }> = [];
    // Only what this session's view holds: an id it names of another agent's memory is not graded.
    const exists = s.stmt(`SELECT 1 FROM memories WHERE id = ? AND ${s.seen()}`).pluck();
    for (const id of [...new Set([...seen, ...used])].sort((a, b) => a - b)) {
      if (!Number.isInteger(id) || !exists.get(id)) continue;
      const grade: GradeName | null = used.has(id) && seen.has(id) ? 'good' : shown.has(id) ? 'hard' : null;
      if (!grade) continue;
      applyGrade(s, id, grade, grade === 'good' ? 'used' : 'ignored', actor, s.now(), true);
      if (grade === 'good') s.stmt('UPDATE memories SET access_count = access_count + 1 WHERE id = ?').run(id);
      if (grade === 'good') confirmByUse(s, id, actor);
      out.push({ id, grade });
    }
    return out;
  })();
}
