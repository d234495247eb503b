// Beliefs and whose word they are: a belief's confidence, confirmation by the operator or by use
// in a later session (memory/learning/claims.ts decides), and the top beliefs for session-state.
import { confirmedAfterBelieve, confirmsByUse, isOperator } from '../learning/claims.js';
import { retrievability as retrievabilityAt } from '../learning/fsrs.js';
import { MemoryError, type Actor, type BeliefRecord, type GateDecision } from '../types.js';
import { checkActor, checkFraction, checkId, round } from './checks.js';
import type { StoreCore } from './core.js';
import { createSpecial, observe } from './observe.js';

/** A belief with a confidence (default 0.7): observed through the gate, its memory's category becomes `belief`. */
export async function believe(s: StoreCore, input: { text: string; confidence?: number; source?: string | null; tags?: string[] }, actor: Actor): Promise<{ id: number; decision: GateDecision }> {
  const confidence = input?.confidence ?? 0.7;
  checkFraction(confidence, 'confidence');
  let r: { memory_id: number; decision: GateDecision } = await observe(s, { text: input?.text, source: input?.source ?? null, tags: input?.tags, category: 'belief' }, actor);
  // Merged into a thread or a prediction: those keep what they are; the belief is its own memory.
  if (r.decision === 'merge' && ['thread', 'prediction'].includes(s.row(r.memory_id).category)) {
    const own = await createSpecial(s, { text: input.text, source: input?.source ?? null, tags: input?.tags, category: 'belief' }, actor, () => undefined);
    r = { memory_id: own.id, decision: 'novel' };
  }
  s.write(() => {
    const before = { ...s.row(r.memory_id), confirmed: confirmedOf(s, r.memory_id) };
    const confirmed = confirmedAfterBelieve(before, actor) ? 1 : 0;
    s.stmt("UPDATE memories SET category = 'belief', confidence = ?, confirmed = ? WHERE id = ?").run(confidence, confirmed, r.memory_id);
    s.audit(actor, 'believe', `memory:${r.memory_id}`, { category: before.category, confidence: before.confidence, confirmed: before.confirmed }, { category: 'belief', confidence, confirmed });
  })();
  return { id: r.memory_id, decision: r.decision };
}

function confirmedOf(s: StoreCore, id: number): boolean {
  return !!(s.stmt('SELECT confirmed FROM memories WHERE id = ?').get(id) as { confirmed: number } | undefined)?.confirmed;
}

// Inside a transaction: a claim used in a session that ended ok, other than one that stated it, is confirmed.
export function confirmByUse(s: StoreCore, id: number, actor: Actor): void {
  if (confirmedOf(s, id)) return;
  const statedBy = s.stmt('SELECT DISTINCT session_id FROM observations WHERE memory_id = ?').pluck().all(id) as Array<string | null>;
  if (!confirmsByUse(actor.sessionId ?? '', statedBy)) return;
  s.stmt('UPDATE memories SET confirmed = 1 WHERE id = ?').run(id);
  s.audit(actor, 'confirm', `memory:${id}`, { confirmed: 0 }, { confirmed: 1, by: 'use' });
}

/** The operator confirms a memory: a belief or value an agent stated becomes part of Identity. */
export function confirm(s: StoreCore, id: number, actor: Actor): { id: number; confirmed: boolean } {
  checkActor(actor);
  checkId(id);
  if (!isOperator(actor)) throw new MemoryError('INVALID', `Expected the operator (cli) to confirm memory ${id}, got surface ${actor.surface}: an agent cannot confirm a claim`);
  s.write(() => {
    s.row(id);
    if (confirmedOf(s, id)) return;
    s.stmt('UPDATE memories SET confirmed = 1 WHERE id = ?').run(id);
    s.audit(actor, 'confirm', `memory:${id}`, { confirmed: 0 }, { confirmed: 1, by: 'operator' });
  })();
  return { id, confirmed: true };
}

/** The most confident active beliefs (for session-state). */
export function topBeliefs(s: StoreCore, n = 10): BeliefRecord[] {
  const at = s.now();
  const rows = s.stmt(
    `SELECT id, text, confidence, salience, stability, last_review, created_at FROM memories
     WHERE category = 'belief' AND faded = 0 AND superseded_by IS NULL AND ${s.seen()} ORDER BY confidence DESC, salience DESC, id LIMIT ?`,
  ).all(n) as Array<{ id: number; text: string; confidence: number; salience: number; stability: number; last_review: string | null; created_at: string }>;
  return rows.map((r) => ({ id: r.id, text: r.text, confidence: r.confidence, salience: r.salience, retrievability: round(retrievabilityAt(r, at, r.created_at)) }));
}
