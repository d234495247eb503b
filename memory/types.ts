// The memory store's public shapes: what the MCP server, the CLI and the supervisor rely on.
// Keep these stable; the MCP tool schemas and `nightshift memory ... --json` print them as they are.

// `anneal`: one pass of the self-annealing loop (sessions/state/anneal.ts), a memory of its own.
export const CATEGORIES = ['belief', 'pattern', 'entity', 'topic', 'value', 'project', 'insight', 'thread', 'prediction', 'observation', 'anneal'] as const;
export type Category = (typeof CATEGORIES)[number];

// `shares`: two memories of different sessions that hold the same rare words (memory/store/links.ts).
export const EDGE_TYPES = ['supports', 'contradicts', 'abstracts', 'relates_to', 'supersedes', 'follows', 'shares'] as const;
export type EdgeType = (typeof EDGE_TYPES)[number];

// Who made a change; every mutation writes one audit row with it.
export const SURFACES = ['mcp', 'cli', 'import', 'session'] as const;
export type Surface = (typeof SURFACES)[number];
export type Actor = { surface: Surface; sessionId?: string | null };

export type ObserveInput = {
  text: string;
  source?: string | null;
  created_at?: string | null; // ISO-8601; honoured when given
  salience?: number; // 0..1
  tags?: string[];
  category?: Category;
  speaker?: string | null; // who said or wrote it: `operator`, an agent, a person in an imported conversation
  valid_from?: string | null; // ISO-8601: since when it holds; default created_at, else now
  shared?: boolean; // every agent's, not only the writing agent's (an operator's write always is)
  scope?: string | null; // whose it is, set by the operator (an import of an export); an agent's view refuses it
};

export type GateDecision = 'merge' | 'link' | 'novel';

export type ObserveResult = {
  observation_id: number;
  memory_id: number;
  decision: GateDecision;
  prediction_error: number; // 0 (already known) .. 1 (nothing like it)
  linked_to: number | null; // the neighbour a `link` decision points at
};

export type QueryOptions = {
  limit?: number; // default 10
  include_faded?: boolean; // faded and superseded come back only when asked, labelled
  explain?: boolean;
  as_of?: string | null; // ISO-8601: what held then (begun by then, not yet superseded)
};

export type ScoreParts = { lexical: number; vector: number; fused: number; activation: number; recency: number; salience: number };

export type QueryResult = {
  id: number;
  text: string;
  category: Category;
  score: number;
  sources: string[]; // of every observation merged into this memory, oldest first
  faded: boolean;
  superseded: boolean;
  // A newer memory this view sees says another value for it (memory/store/updates.ts): ranked below.
  possibly_outdated?: true;
  explain?: ScoreParts;
};

export type MemoryRecord = {
  id: number;
  text: string;
  category: Category;
  salience: number;
  confidence: number;
  access_count: number;
  tags: string[];
  created_at: string;
  updated_at: string;
  faded: boolean;
  superseded_by: number | null;
  valid_from: string; // since when it holds
  valid_to: string | null; // until when: set when it is superseded
  scope: string | null; // the agent whose it is; null: shared
  sources: string[];
  edges: Array<{ type: EdgeType; to: number; weight: number; direction: 'out' | 'in' }>;
  retrievability: number; // FSRS-6, 0..1, now
  due: string | null; // when FSRS next expects a review
};

export type MemoryStats = {
  memories: number;
  observations: number;
  edges: number;
  faded: number;
  superseded: number;
  tombstones: number;
  by_category: Partial<Record<Category, number>>;
  embedding_model: string | null;
  embedded: number;
  schema_version: number;
  file: string;
  // Over active (not faded, not superseded) memories, now.
  retrievability: { mean: number; below_half: number };
  overdue: number;
  reviews: number;
  threads_open: number;
  predictions_open: number;
  contradiction_candidates: number;
  // The last dream's metrics row, read only (null: none yet, or an agent's scoped view).
  last_dream: LastDream | null;
};

// What the last dream did, from its metrics row (memory/dream/dream.ts); a count is null when its
// phase failed or did not run.
export type LastDream = {
  at: string;
  duration_ms: number;
  observations: number | null;
  clusters: number | null;
  abstractions: number | null;
  superseded: number | null;
  contradictions: number | null;
  linked: number | null;
  faded: number | null;
  failed_phases: string[];
};

// ---- the learning layer (memory/fsrs.ts, wander.ts, contradiction.ts, dream.ts) ----------------

export type GradeName = 'again' | 'hard' | 'good' | 'easy';
export type ReviewResult = { id: number; grade: GradeName; retrievability: number; stability: number; due: string };
export type WanderItem = { id: number; text: string; category: Category; retrievability: number; via: 'start' | 'edge' | 'jump' | 'restart' };
export type ThreadRecord = { id: number; text: string; status: 'open' | 'resolved'; solo: boolean; opened_at: string; resolved_at: string | null; resolution: string | null };
export type PredictionOutcome = 'correct' | 'partly' | 'wrong';
export type SurpriseRecord = { id: number; text: string; confidence: number; outcome: PredictionOutcome; surprise: number; resolved_at: string; note: string | null };
export type BeliefRecord = { id: number; text: string; confidence: number; salience: number; retrievability: number };
export type OverdueRecord = { id: number; text: string; category: Category; salience: number; retrievability: number; due: string };
export type ContradictionCandidate = { id: number; a: number; b: number; method: 'heuristic' | 'gemini' | 'explicit'; score: number; reason: string | null; status: 'candidate' | 'confirmed' | 'dismissed'; created_at: string };
// What a session did with memory (memory/grading.ts reads it from the transcript).
export type SessionUse = { sessionId: string; outcome: string; recalledIds: number[]; usedIds: number[]; surfacedIds?: number[]; injectedIds?: number[] };

// A vector model. `model` names the space: vectors of two models never meet in one ranking.
export type Embedder = {
  model: string;
  dim: number;
  embed(texts: string[]): Promise<Float32Array[]>;
};

// Raised for a refusal the caller should show as is (a tombstoned claim, an unknown id, bad input).
export class MemoryError extends Error {
  constructor(readonly code: 'TOMBSTONED' | 'NOT_FOUND' | 'INVALID' | 'CORRUPT' | 'FOREIGN' | 'PERMISSION', message: string) {
    super(message);
  }
}
