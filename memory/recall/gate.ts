// The prediction-error gate: how close an observation is to what the store already knows decides
// whether it strengthens a memory (merge), starts a related one (link) or a new one (novel).
import type { GateDecision } from '../types.js';

export type GateThresholds = { merge: number; link: number };

// Pure: `similarity` is the nearest memory's, 0..1; at a threshold the stronger decision wins.
export function gateDecision(similarity: number, t: GateThresholds): GateDecision {
  if (similarity >= t.merge) return 'merge';
  if (similarity >= t.link) return 'link';
  return 'novel';
}

// Expected thresholds in 0..1 with link at or below merge; a message when they are not.
export function checkThresholds(t: GateThresholds): string | null {
  const ok = (x: number) => Number.isFinite(x) && x >= 0 && x <= 1;
  if (!ok(t.merge) || !ok(t.link)) return `Expected gate thresholds between 0 and 1, got merge ${t.merge}, link ${t.link}`;
  if (t.link > t.merge) return `Expected gate.link (${t.link}) to be at most gate.merge (${t.merge})`;
  return null;
}

// 0 = already known, 1 = nothing like it.
export function predictionError(similarity: number): number {
  return Math.min(1, Math.max(0, 1 - similarity));
}
