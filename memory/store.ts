// The memory store as the rest of nightshift uses it: one object composed from the concern files
// in memory/store/, each a set of plain functions over the one StoreCore (the SQLite owner):
//   observe.ts (the gate's write path), search.ts (the query's reads; memory/recall/ ranks them),
//   rows.ts (one memory, link, fade, supersede, export, audit), cards.ts and session-grades.ts
//   (FSRS), beliefs.ts, contradictions.ts, predictions.ts, threads.ts (and anneal), wander-graph.ts,
//   forget.ts (tombstones, delete for good), dream-rows.ts (what a dream reads and writes), links.ts
//   (rare-word links, and the dream's backfill of them), updates.ts (a changed value), stats.ts.
// `MemoryStore.open` binds each function to the core, so `store.believe(input, actor)` is
// `believe(core, input, actor)`; nothing here restates a method. A new verb is a function in its
// concern's file plus its name in OPS below.
import { SCHEMA_VERSION } from './store/schema.js';
import { StoreCore } from './store/core.js';
import type { LearningSettings, StoreOptions } from './store/options.js';
import { backfillCards, overdue, retrievability, review } from './store/cards.js';
import { believe, confirm, topBeliefs } from './store/beliefs.js';
import { contradict, contradictionCandidates, dismissCandidate, recordCandidate } from './store/contradictions.js';
import { addAbstraction, dreamPressure, edgesAmong, fadeWeak, hasAbstraction, lastDream, lastObservationId, recentMemories, recordDream } from './store/dream-rows.js';
import { deleteForever, derivedFrom, forget, isForgotten, tombstone } from './store/forget.js';
import { backfillLinks, linksThrough } from './store/links.js';
import { observe, observeMany } from './store/observe.js';
import { predict, resolvePrediction, surprisesSince } from './store/predictions.js';
import { auditLog, exportAll, fade, hasObservation, link, recall, supersede } from './store/rows.js';
import { query, similar } from './store/search.js';
import { gradeSession } from './store/session-grades.js';
import { reembed, reindex, scheduleReport, stats } from './store/stats.js';
import { openThread, recordAnneal, resolveThread, threads } from './store/threads.js';
import { reconcileUpdates } from './store/updates.js';
import { wander } from './store/wander-graph.js';

export { DEFAULT_LEARNING, DEFAULT_THRESHOLDS, DEFAULT_WEIGHTS } from './store/options.js';
export type { LearningSettings, Logger, StoreOptions } from './store/options.js';
export type { ExportLine } from './store/rows.js';

const OPS = {
  observe, observeMany, query, similar, recall, exportAll, hasObservation, link, fade, supersede, auditLog,
  stats, scheduleReport, reembed, reindex, retrievability, review, overdue, gradeSession,
  believe, confirm, topBeliefs, contradict, recordCandidate, dismissCandidate, contradictionCandidates,
  predict, resolvePrediction, surprisesSince, openThread, resolveThread, threads, recordAnneal, wander,
  tombstone, forget, deleteForever, isForgotten, derivedFrom,
  lastDream, dreamPressure, lastObservationId, recentMemories, edgesAmong, hasAbstraction, addAbstraction, fadeWeak, recordDream,
  linksThrough, backfillLinks, reconcileUpdates,
};

// A function over the core, as a method of the store: the core argument bound.
type Bound<F> = F extends (core: StoreCore, ...args: infer A) => infer R ? (...args: A) => R : never;
type Ops = { [K in keyof typeof OPS]: Bound<(typeof OPS)[K]> };

export type MemoryStore = Ops & {
  readonly file: string;
  readonly learning: LearningSettings;
  // Whose view this is (memory/store/scope.ts): an agent's, or null, the operator's.
  readonly agent: string | null;
  // The same open store as `agent` sees it (null: the operator); closing it leaves the store open.
  as(agent: string | null): MemoryStore;
  close(): void;
};

function bind(core: StoreCore, close: () => void): MemoryStore {
  const ops = Object.fromEntries(Object.entries(OPS).map(([name, fn]) => [name, (...args: unknown[]) => (fn as (c: StoreCore, ...a: unknown[]) => unknown)(core, ...args)])) as Ops;
  const store: MemoryStore = { ...ops, file: core.file, learning: core.learning, agent: core.agent, as: (agent) => bind(core.as(agent), () => {}), close };
  // Not part of the interface: tests reach the connection and the backfill as they reached the
  // old class's private members.
  Object.defineProperties(store, { db: { value: core.db }, backfillCards: { value: () => backfillCards(core) } });
  return store;
}

export const MemoryStore = {
  /** Opens (or creates) the store at `file`. Throws MemoryError CORRUPT or FOREIGN, naming the file, for a file that is not ours; it is never overwritten. */
  open(file: string, opts: StoreOptions = {}): MemoryStore {
    const core = StoreCore.open(file, opts, backfillCards);
    return bind(core, () => core.close());
  },
  schemaVersion: SCHEMA_VERSION,
};
