// Predictions: made with a confidence, resolved with an outcome; the surprise raises the salience
// of the prediction and of every memory it touches.
import { MemoryError, type Actor, type PredictionOutcome, type SurpriseRecord } from '../types.js';
import { checkActor, checkFraction, checkId, checkText, round } from './checks.js';
import type { StoreCore } from './core.js';
import { createSpecial } from './observe.js';

/** A prediction with the confidence that it comes true (default 0.5) and an optional due time; linked to the close memories it is about. */
export async function predict(s: StoreCore, input: { text: string; confidence?: number; due?: string | null; source?: string | null }, actor: Actor): Promise<{ id: number }> {
  const confidence = input?.confidence ?? 0.5;
  checkFraction(confidence, 'confidence');
  let due: string | null = null;
  if (input?.due !== undefined && input.due !== null) {
    const ms = Date.parse(input.due);
    if (Number.isNaN(ms)) throw new MemoryError('INVALID', `Expected \`due\` to be an ISO-8601 time, got ${JSON.stringify(input.due)}`);
    due = new Date(ms).toISOString();
  }
  return createSpecial(s, { text: input?.text, source: input?.source ?? null, category: 'prediction' }, actor, (id) => {
    s.stmt('UPDATE memories SET confidence = ? WHERE id = ?').run(confidence, id);
    s.stmt('INSERT INTO predictions (memory_id, confidence, due) VALUES (?, ?, ?)').run(id, confidence, due);
    s.audit(actor, 'predict', `memory:${id}`, null, { confidence, due });
  });
}

/**
 * Resolves a prediction. Surprise is how wrong it was: |actual - confidence| with correct = 1,
 * partly = 0.5, wrong = 0. The prediction and every memory it touches (its edges) gain salience
 * in proportion: s + surprise * (1 - s) / 2. A session resolves only its own predictions and raises
 * only its own memories (scope.ts standingProblem): another reader's salience is not its to move.
 */
export function resolvePrediction(s: StoreCore, id: number, outcome: PredictionOutcome, note: string | null, actor: Actor): { id: number; surprise: number; touched: number[] } {
  checkActor(actor);
  checkId(id);
  const actual = { correct: 1, partly: 0.5, wrong: 0 }[outcome];
  if (actual === undefined) throw new MemoryError('INVALID', `Expected outcome to be one of correct, partly, wrong, got ${JSON.stringify(outcome)}`);
  checkText({ note });
  return s.write(() => {
    s.tombstones.refuse([['note', note]]);
    const p = s.stmt(`SELECT p.confidence, p.outcome, p.resolved_at, m.scope FROM predictions p JOIN memories m ON m.id = p.memory_id WHERE p.memory_id = ? AND ${s.seen('m')}`).get(id) as { confidence: number; outcome: string | null; resolved_at: string | null; scope: string | null } | undefined;
    if (!p) throw new MemoryError('NOT_FOUND', `Memory ${id} is not a prediction (make one with \`predict\`)`);
    s.mayChange('resolve', { id, scope: p.scope });
    if (p.resolved_at) throw new MemoryError('INVALID', `Prediction ${id} was already resolved (${p.outcome}) on ${p.resolved_at}`);
    const surprise = round(Math.abs(actual - p.confidence));
    s.stmt('UPDATE predictions SET outcome = ?, surprise = ?, resolved_at = ?, note = ? WHERE memory_id = ?').run(outcome, surprise, s.iso(), note ?? null, id);
    const near = s.stmt('SELECT id, scope FROM memories WHERE id IN (SELECT to_id FROM edges WHERE from_id = ? UNION SELECT from_id FROM edges WHERE to_id = ?) ORDER BY id').all(id, id) as Array<{ id: number; scope: string | null }>;
    const touched = [id, ...near.filter((m) => !s.standingProblem('resolve', [m])).map((m) => m.id)];
    const raise = s.stmt('UPDATE memories SET salience = min(1, salience + ? * (1 - salience) / 2) WHERE id = ?');
    for (const t of touched) raise.run(surprise, t);
    s.audit(actor, 'resolve', `memory:${id}`, { confidence: p.confidence }, { outcome, surprise, note, touched });
    return { id, surprise, touched };
  })();
}

/** Predictions resolved since `iso`, most surprising first (for session-state). */
export function surprisesSince(s: StoreCore, iso: string, n = 10): SurpriseRecord[] {
  return s.stmt(
    `SELECT m.id, m.text, p.confidence, p.outcome, p.surprise, p.resolved_at, p.note FROM predictions p JOIN memories m ON m.id = p.memory_id
     WHERE p.resolved_at >= ? AND ${s.seen('m')} ORDER BY p.surprise DESC, p.resolved_at DESC LIMIT ?`,
  ).all(iso, n) as SurpriseRecord[];
}
