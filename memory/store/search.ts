// The store's read side for search: the gate's near-duplicate candidates, the arms' SQL for the
// query pipeline (memory/recall/pipeline.ts ranks what these return), and memories' sources.
import { rankMemories, type RecallSource } from '../recall/pipeline.js';
import { contentTerms, dice, ftsQuery, tokens } from '../text/text.js';
import { MemoryError, type Category, type EdgeType, type QueryOptions, type QueryResult } from '../types.js';
import { ids, isoOf, round } from './checks.js';
import type { StoreCore } from './core.js';

export const GATE_CANDIDATES = 8;
const GATE_TERMS = 4;
const GATE_SCORE_BUDGET = 400; // rows BM25 may score per gate decision
const GATE_RECENT = 32;

// Terms worth matching: those in more than `common` of all observations say little and cost a
// scan of most of the index, so they go when rarer ones remain; the `max` rarest are kept.
export function selective(s: StoreCore, terms: string[], max: number, common: number): string[] {
  if (terms.length <= 1) return terms;
  const docs = Math.max(1, s.docCount());
  const withDf = terms.map((t) => ({ t, df: s.df(t) }));
  const rare = withDf.filter((x) => x.df / docs <= common);
  return (rare.length ? rare : withDf).sort((a, b) => a.df - b.df).slice(0, max).map((x) => x.t);
}

// Memories that could be near-duplicates: a near-duplicate shares the rarest words, so those
// are searched, by BM25 while they are rare enough to score cheaply; when even the rarest word
// is common, the newest memories holding it (FTS5 walks rowids without scoring).
export function gateCandidates(s: StoreCore, terms: string[]): Array<{ id: number; text: string; scope: string | null }> {
  if (!terms.length) return [];
  const ranked = selective(s, terms, GATE_TERMS, 1).map((t) => ({ t, df: s.df(t) }));
  const pick: string[] = [];
  let cost = 0;
  for (const x of ranked) {
    if (pick.length && cost + x.df > GATE_SCORE_BUDGET) break;
    pick.push(x.t);
    cost += x.df;
  }
  const active = `m.faded = 0 AND m.superseded_by IS NULL AND ${s.seen('m')}`;
  if (cost <= GATE_SCORE_BUDGET) {
    return s.stmt(
      `SELECT m.id, m.text, m.scope FROM memories_fts f JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ? AND ${active} ORDER BY bm25(memories_fts) LIMIT ${GATE_CANDIDATES}`,
    ).all(ftsQuery(pick)) as Array<{ id: number; text: string; scope: string | null }>;
  }
  return s.stmt(
    `SELECT m.id, m.text, m.scope FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT ${GATE_RECENT}) f
     JOIN memories m ON m.id = f.rowid WHERE ${active}`,
  ).all(ftsQuery(pick)) as Array<{ id: number; text: string; scope: string | null }>;
}

// The gate's candidate terms for a text: its content words, else its first distinct words.
export function candidateTerms(text: string): string[] {
  const content = contentTerms(text);
  return content.length ? content : [...new Set(tokens(text))].slice(0, 48);
}

/** Active memories close in words to `text` (Dice over the gate's candidates), best first; `except` left out. */
export function similar(s: StoreCore, text: string, opts: { limit?: number; min?: number; except?: number } = {}): Array<{ id: number; text: string; lexical: number }> {
  const words = tokens(text);
  const out: Array<{ id: number; text: string; lexical: number }> = [];
  for (const r of gateCandidates(s, candidateTerms(text))) {
    if (r.id === opts.except) continue;
    const d = dice(words, tokens(r.text));
    if (d >= (opts.min ?? 0)) out.push({ id: r.id, text: r.text, lexical: round(d) });
  }
  return out.sort((a, b) => b.lexical - a.lexical || a.id - b.id).slice(0, opts.limit ?? GATE_CANDIDATES);
}

export function sourcesOf(s: StoreCore, memoryIds: number[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  if (!memoryIds.length) return out;
  // The ids outer (CROSS JOIN), not `IN (SELECT ... json_each)`: no temporary index built, half the time for a query's 10.
  const rows = s.rawStmt(
    `SELECT o.memory_id, o.source FROM json_each(?) j CROSS JOIN observations o ON o.memory_id = j.value WHERE o.source IS NOT NULL ORDER BY o.created_at, o.id`,
  ).all(ids(memoryIds)) as Raw;
  for (const r of rows) {
    const memoryId = r[0] as number;
    const source = r[1] as string;
    const list = out.get(memoryId) ?? [];
    if (!list.includes(source)) list.push(source);
    out.set(memoryId, list);
  }
  return out;
}

// A BM25 score (higher is better) as column `s`, for `ORDER BY s DESC LIMIT n`. Not `ORDER BY rank`:
// for that FTS5 prepares a fresh statement on every query and sorts every match (sqlite fts5_main.c
// fts5CursorFirstSorted), where bm25() keeps the best n as it goes, 0.1 ms less per arm at 10k
// memories. Same scores, and ties keep the index's order (rowid ascending) either way.
const BM25 = (table: 'memories_fts' | 'observations_fts') => `-bm25(${table}) AS s`;

// The rows of memories `m` a query may return: this view's (scope.ts) and, as of a time, those
// begun by then. Null when every row may (the operator's query of now): its SQL stays as it was.
function within(s: StoreCore, asOf: string | null): { sql: string; args: string[] } | null {
  if (s.agent === null && asOf === null) return null;
  return { sql: asOf === null ? s.seen('m') : `${s.seen('m')} AND m.valid_from <= ?`, args: asOf === null ? [] : [asOf] };
}

// As of a time, a memory's evidence is what was observed of it by then: its first observation
// (whose time may be a valid_from given for the past) and those recorded no later.
const EVIDENCE_THEN = ' AND (o.created_at <= ? OR o.id = (SELECT min(o2.id) FROM observations o2 WHERE o2.memory_id = o.memory_id))';

// As of a time, when a memory was last seen then: its newest observation by then, or when it
// began to hold if that is later (updated_at counts evidence, reviews and fades of every time since).
const LAST_SEEN_THEN = 'max(m.valid_from, coalesce((SELECT max(o.created_at) FROM observations o WHERE o.memory_id = m.id AND o.created_at <= ?), m.valid_from))';

// Whether a newer memory this view sees, begun by the time (first argument) and not ended by the
// second, marks memory `m` possibly outdated (memory/store/updates.ts: a `supersedes` edge whose
// writer could not end it). The edges first (CROSS JOIN): the planner otherwise scanned every
// active memory per candidate.
const OUTDATED = (s: StoreCore) =>
  `(m.superseded_by IS NULL AND EXISTS (SELECT 1 FROM edges e CROSS JOIN memories n ON n.id = e.from_id WHERE e.to_id = m.id AND e.type = 'supersedes' AND +n.faded = 0 AND n.valid_from <= ? AND (n.valid_to IS NULL OR n.valid_to > ?) AND ${s.seen('n')}))`;

// The raw rows (core.rawStmt) of the pipeline's reads, as the objects RecallSource names.
type Raw = unknown[][];
const scored = (rows: unknown[]) => (rows as Raw).map((r) => ({ id: r[0] as number, s: r[1] as number }));
const edgeRows = (rows: unknown[]) => (rows as Raw).map((r) => ({ from_id: r[0] as number, to_id: r[1] as number, type: r[2] as EdgeType, weight: r[3] as number }));
const stateRows = (rows: unknown[]): ReturnType<RecallSource['states']> =>
  (rows as Raw).map((r) => ({
    id: r[0] as number, text: r[1] as string, salience: r[2] as number, last_seen: r[3] as string, faded: r[4] as number, superseded_by: r[5] as number | null,
    speaker: r[6] as string | null, valid_from: r[7] as string, valid_to: r[8] as string | null, outdated: r[9] as number,
  }));
const textRows = (rows: unknown[]): ReturnType<RecallSource['texts']> =>
  (rows as Raw).map((r) => ({ id: r[0] as number, text: r[1] as string, category: r[2] as Category, faded: r[3] as number, superseded_by: r[4] as number | null }));

// The pipeline's reads, over this store, for a query as of `asOf` (null: now).
function recallSource(s: StoreCore, asOf: string | null): RecallSource {
  const w = within(s, asOf);
  const keep = (rows: Array<{ id: number; score: number }>) => {
    if (!w || !rows.length) return rows;
    const ok = new Set(s.stmt(`SELECT id FROM memories m WHERE id IN (SELECT value FROM json_each(?)) AND ${w.sql}`).pluck().all(ids(rows.map((r) => r.id)), ...w.args) as number[]);
    return rows.filter((r) => ok.has(r.id));
  };
  return {
    weights: s.weights,
    now: s.now(),
    selective: (terms, max, common) => selective(s, terms, max, common),
    lexical: (q, depth) =>
      w
        ? {
            memories: scored(s.rawStmt(`SELECT f.rowid AS id, ${BM25('memories_fts')} FROM memories_fts f JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ? AND ${w.sql} ORDER BY s DESC LIMIT ${depth}`).all(q, ...w.args)),
            evidence: scored(
              s.rawStmt(
                `SELECT o.memory_id AS id, ${BM25('observations_fts')} FROM observations_fts f JOIN observations o ON o.id = f.rowid JOIN memories m ON m.id = o.memory_id
               WHERE observations_fts MATCH ? AND ${w.sql}${asOf === null ? '' : EVIDENCE_THEN} ORDER BY s DESC LIMIT ${depth}`,
              ).all(q, ...w.args, ...(asOf === null ? [] : [asOf])),
            ),
          }
        : {
            memories: scored(s.rawStmt(`SELECT rowid AS id, ${BM25('memories_fts')} FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s DESC LIMIT ${depth}`).all(q)),
            evidence: scored(
              s.rawStmt(
                `SELECT o.memory_id AS id, ${BM25('observations_fts')} FROM observations_fts f JOIN observations o ON o.id = f.rowid
               WHERE observations_fts MATCH ? ORDER BY s DESC LIMIT ${depth}`,
              ).all(q),
            ),
          },
    vectorTop: (qvec, depth) => keep(s.vectors?.top(qvec, depth) ?? []),
    // The walk's one read of the graph; it never steps onto a memory this query may not return.
    // The frontier ascending and outer (CROSS JOIN): the rows come in the order `IN (SELECT ...
    // json_each)` gave them (its list is walked ascending), which the walk's sums follow, in less time.
    edgesAround: (frontier, shares) => {
      const f = ids([...frontier].sort((a, b) => a - b));
      return edgeRows(w
        ? s.rawStmt(
            `SELECT e.from_id, e.to_id, e.type, e.weight FROM json_each(?) j CROSS JOIN edges e ON e.from_id = j.value JOIN memories m ON m.id = e.to_id WHERE (? OR e.type != 'shares') AND ${w.sql}
             UNION ALL SELECT e.from_id, e.to_id, e.type, e.weight FROM json_each(?) j CROSS JOIN edges e ON e.to_id = j.value JOIN memories m ON m.id = e.from_id WHERE (? OR e.type != 'shares') AND ${w.sql}`,
          ).all(f, shares ? 1 : 0, ...w.args, f, shares ? 1 : 0, ...w.args)
        : s.rawStmt(
            `SELECT e.from_id, e.to_id, e.type, e.weight FROM json_each(@f) j CROSS JOIN edges e ON e.from_id = j.value WHERE (@shares OR e.type != 'shares')
             UNION ALL SELECT e.from_id, e.to_id, e.type, e.weight FROM json_each(@f) j CROSS JOIN edges e ON e.to_id = j.value WHERE (@shares OR e.type != 'shares')`,
          ).all({ f, shares: shares ? 1 : 0 }));
    },
    // The ids drive the join (CROSS JOIN keeps them outer): as `id IN (SELECT ... json_each)` the
    // possibly-outdated check cost ~0.1 ms more at 10k memories (~140 candidates). The ids are distinct.
    states: (memoryIds) =>
      stateRows(
        s.rawStmt(`SELECT m.id, m.text, m.salience, ${asOf === null ? 'm.updated_at' : LAST_SEEN_THEN} AS last_seen, m.faded, m.superseded_by, m.speaker, m.valid_from, m.valid_to, ${OUTDATED(s)} AS outdated FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value WHERE ${w?.sql ?? '1'}`).all(
          ...(asOf === null ? [] : [asOf]),
          asOf ?? s.iso(),
          asOf ?? s.iso(),
          ids(memoryIds),
          ...(w?.args ?? []),
        ),
      ),
    speakers: () => s.stmt('SELECT name FROM speakers').pluck().all() as string[],
    texts: (memoryIds) => textRows(s.rawStmt('SELECT m.id, m.text, m.category, m.faded, m.superseded_by FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value').all(ids(memoryIds))),
    sourcesOf: (memoryIds) => sourcesOf(s, memoryIds),
  };
}

/** Ranked memories for `text`: lexical and vector arms fused by rank, then spreading activation, recency and salience. */
export async function query(s: StoreCore, text: string, opts: QueryOptions = {}): Promise<QueryResult[]> {
  if (typeof text !== 'string') throw new MemoryError('INVALID', `Expected the query to be a string, got ${typeof text}`);
  const limit = opts.limit ?? 10;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new MemoryError('INVALID', `Expected limit to be a whole number from 1 to 1000, got ${limit}`);
  const vectorText = s.vectors?.size && text.trim() && s.expandQuery ? await s.expandQuery(text) : text;
  const [qvec] = s.vectors?.size && text.trim() ? await s.embed([vectorText], 'query') : [null];
  const asOf = isoOf(opts.as_of, 'as_of');
  // Its reads are synchronous: one snapshot of the store (StoreCore.read).
  return s.read(() => rankMemories(recallSource(s, asOf), text, qvec ?? null, { ...opts, limit, as_of: asOf }));
}
