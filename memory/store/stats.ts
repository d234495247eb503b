// Counts: the store's statistics, what FSRS says is due, and index upkeep (re-embedding, optimize).
import { retrievability as retrievabilityAt } from '../learning/fsrs.js';
import type { Category, MemoryStats } from '../types.js';
import { backfillCards } from './cards.js';
import { round } from './checks.js';
import type { StoreCore } from './core.js';
import { dreamSummary } from './dream-summary.js';

// An agent's view counts only what it may see (scope.ts): another agent's memories, threads or
// predictions would show as numbers that move when that agent writes. The operator's counts all.
export function stats(s: StoreCore): MemoryStats {
  const one = (sql: string, ...args: unknown[]) => (s.stmt(sql).get(...args) as { n: number }).n;
  const m = s.seen('m');
  const by = s.stmt(`SELECT category, count(*) AS n FROM memories m WHERE ${m} GROUP BY category`).all() as Array<{ category: Category; n: number }>;
  const all = s.agent === null;
  return {
    memories: one(`SELECT count(*) AS n FROM memories m WHERE ${m}`),
    observations: all ? one('SELECT count(*) AS n FROM observations') : one(`SELECT count(*) AS n FROM observations o JOIN memories m ON m.id = o.memory_id WHERE ${m}`),
    edges: all
      ? one('SELECT count(*) AS n FROM edges')
      : one(`SELECT count(*) AS n FROM edges e JOIN memories m ON m.id = e.from_id JOIN memories t ON t.id = e.to_id WHERE ${m} AND ${s.seen('t')}`),
    faded: one(`SELECT count(*) AS n FROM memories m WHERE faded = 1 AND ${m}`),
    superseded: one(`SELECT count(*) AS n FROM memories m WHERE superseded_by IS NOT NULL AND ${m}`),
    tombstones: one('SELECT count(*) AS n FROM tombstones'),
    by_category: Object.fromEntries(by.map((r) => [r.category, r.n])),
    embedding_model: s.embedder?.model ?? null,
    embedded: !s.vectors ? 0 : all ? s.vectors.size : one(`SELECT count(*) AS n FROM embeddings e JOIN memories m ON m.id = e.memory_id WHERE e.model = ? AND ${m}`, s.vectors.model),
    schema_version: s.db.pragma('user_version', { simple: true }) as number,
    file: s.file,
    ...learningStats(s),
    // Dreams run over the whole store: an agent's scoped view does not see them.
    last_dream: all ? lastDreamOf(s) : null,
  };
}

function lastDreamOf(s: StoreCore) {
  const row = s.stmt('SELECT started_at, duration_ms, metrics FROM dreams ORDER BY id DESC LIMIT 1').get() as { started_at: string; duration_ms: number; metrics: string } | undefined;
  return row ? dreamSummary(row) : null;
}

function learningStats(s: StoreCore): Pick<MemoryStats, 'retrievability' | 'overdue' | 'reviews' | 'threads_open' | 'predictions_open' | 'contradiction_candidates'> {
  const one = (sql: string, ...args: unknown[]) => (s.stmt(sql).get(...args) as { n: number }).n;
  const m = s.seen('m');
  const at = s.now();
  let sum = 0;
  let n = 0;
  let low = 0;
  for (const r of s.stmt(`SELECT stability, last_review, created_at FROM memories m WHERE faded = 0 AND superseded_by IS NULL AND ${m}`).iterate() as Iterable<{ stability: number; last_review: string | null; created_at: string }>) {
    const x = retrievabilityAt(r, at, r.created_at);
    sum += x;
    n++;
    if (x < 0.5) low++;
  }
  const of = (table: string, where: string) => one(`SELECT count(*) AS n FROM ${table} x JOIN memories m ON m.id = x.memory_id WHERE ${where} AND ${m}`);
  const seenBoth = `EXISTS (SELECT 1 FROM memories m WHERE m.id = c.a AND ${m}) AND EXISTS (SELECT 1 FROM memories m WHERE m.id = c.b AND ${m})`;
  return {
    retrievability: { mean: n ? round(sum / n) : 0, below_half: low },
    overdue: one(`SELECT count(*) AS n FROM memories m WHERE due <= ? AND faded = 0 AND superseded_by IS NULL AND ${m}`, at.toISOString()),
    reviews: s.agent === null ? one('SELECT count(*) AS n FROM reviews') : of('reviews', '1'),
    threads_open: of('threads', "x.status = 'open'"),
    predictions_open: of('predictions', 'x.resolved_at IS NULL'),
    contradiction_candidates: one(`SELECT count(*) AS n FROM contradiction_candidates c WHERE c.status = 'candidate' AND ${seenBoth}`),
  };
}

/** Backfills cards and counts what FSRS says now: overdue and mean retrievability of active memories. */
export function scheduleReport(s: StoreCore): { overdue: number; retrievability_mean: number; below_half: number; predictions_due: number } {
  backfillCards(s);
  const l = learningStats(s);
  const due = (s.stmt('SELECT count(*) AS n FROM predictions WHERE resolved_at IS NULL AND due IS NOT NULL AND due <= ?').get(s.iso()) as { n: number }).n;
  return { overdue: l.overdue, retrievability_mean: l.retrievability.mean, below_half: l.retrievability.below_half, predictions_due: due };
}

/** Embeds memories that have no vector of the current model yet (after a model change, or a failed call); returns how many. */
export async function reembed(s: StoreCore, batch = 64): Promise<number> {
  if (!s.embedder || !s.vectors) return 0;
  let done = 0;
  for (;;) {
    const rows = s.stmt(
      'SELECT id, text FROM memories WHERE id NOT IN (SELECT memory_id FROM embeddings WHERE model = ?) AND id > ? ORDER BY id LIMIT ?',
    ).all(s.vectors.model, done ? s.lastEmbedded : 0, batch) as Array<{ id: number; text: string }>;
    if (!rows.length) return done;
    const vecs = await s.embed(rows.map((r) => r.text));
    if (vecs.some((v) => !v)) return done;
    s.write(() => {
      rows.forEach((r, i) => s.putVector(r.id, vecs[i]!));
    })();
    s.lastEmbedded = rows[rows.length - 1].id;
    done += rows.length;
  }
}

/** Rebuilds the search indices (FTS5 optimize, planner statistics) and embeds memories with no vector of the current model. */
export async function reindex(s: StoreCore): Promise<{ reembedded: number }> {
  s.db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('optimize'); INSERT INTO observations_fts (observations_fts) VALUES ('optimize');");
  s.db.pragma('optimize');
  s.forgetCounts();
  return { reembedded: await reembed(s) };
}
