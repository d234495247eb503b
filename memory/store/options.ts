// What a store is opened with, and the defaults of each knob (config `memory.*`).
import { DEFAULTS } from '../../config/defaults.js';
import type { GateThresholds } from '../recall/gate.js';
import type { RankWeights } from '../recall/rank.js';
import type { Embedder } from '../types.js';

// pino-compatible; the store never writes to stdout.
export type Logger = { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void; debug?(obj: object, msg?: string): void };

export type StoreOptions = {
  embedder?: Embedder | null;
  thresholds?: Partial<GateThresholds>;
  weights?: Partial<RankWeights>;
  now?: () => Date;
  logger?: Logger | null;
  learning?: Partial<LearningSettings>;
  // HyDE (memory/recall/hyde.ts, with Gemini): the query plus a guessed answer passage, for the vector
  // arm only; the lexical arm keeps the words the caller asked.
  expandQuery?: ((query: string) => Promise<string>) | null;
  // Test-only: `deferred` shows, as a negative control, the lost writes IMMEDIATE prevents.
  transactionMode?: 'immediate' | 'deferred';
  // Test-only: true lifts the standing rule (scope.ts standingProblem), as a negative control:
  // what a session's supersede, contradict, review, resolve or link of a shared memory would do,
  // and its private memories counted toward a shared memory's `shares` cap (links.ts).
  crossScopeStanding?: boolean;
  // Config `memory.updates`: false turns off knowledge updates (memory/store/updates.ts: a changed
  // value ends or outdates the older memory, and no merge joins two values); the tests' control.
  knowledgeUpdates?: boolean;
  // Config `memory.forget_similarity`: a text this close to a forgotten one is refused.
  forgetSimilarity?: number;
  // Whose view (memory/store/scope.ts): a session's agent under `memory.scope: agent`; unset, the operator's.
  agent?: string | null;
};

// The learning layer's knobs (config `memory.learning`): wander's jump rate, and what dream fades.
export type LearningSettings = { wander_jump: number; fade_retrievability: number; fade_salience: number };
// R < 0.5 under FSRS-6's flat power curve: a memory never used since its creation (S = 2.3 days) reaches it after ~7 months.
export const DEFAULT_LEARNING: LearningSettings = { wander_jump: 0.4, fade_retrievability: 0.5, fade_salience: 0.3 };

export const DEFAULT_THRESHOLDS: GateThresholds = { ...DEFAULTS.memory.gate };
export const DEFAULT_WEIGHTS: RankWeights = { ...DEFAULTS.memory.recall, edges: { ...DEFAULTS.memory.recall.edges } };
