// Whether a session ever reached the model. One that did not (the CLI could not start, was not
// logged in, every request was refused) is counted by the ledger like any other, but its result
// record is not a memory: "ended spawn_failed after 0 turns" teaches nothing and would rank in recall.
export type SessionFacts = { outcome: string; turns: number; cost_usd: number };

// Pure. No API usage means no cost; the CLI counts a refused first request as one turn, so an
// error with no cost and at most one turn never got an answer.
export function reachedModel(s: SessionFacts): boolean {
  if (s.outcome === 'spawn_failed') return false;
  if (s.outcome === 'error' && s.cost_usd === 0 && s.turns <= 1) return false;
  return true;
}
