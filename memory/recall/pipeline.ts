// The query pipeline over what the store hands in: the lexical and vector arms fused by rank,
// spreading activation from the best seeds, then recency and salience (memory/recall/rank.ts).
// No SQL here: `RecallSource` is the store's read side (memory/store/search.ts).
import { mentions, namedIn, ownWords } from '../text/speaker.js';
import { namedPeriods, within } from '../text/periods.js';
import { asksMostly, ftsQuery, queryTerms } from '../text/text.js';
import type { Category, EdgeType, QueryOptions, QueryResult } from '../types.js';
import { fuseRanks, rankCandidates, spreadActivation, type Adjacency, type Candidate, type RankWeights } from './rank.js';

export const LEXICAL_DEPTH = 200; // rows each arm contributes to the fusion
const DAY_MS = 86_400_000;
// A memory's time is when it was said or began to hold; the day a query names may be a day off (time zones).
const PERIOD_SLACK_DAYS = 1;

// The reads ranking needs, each a plain list.
export type RecallSource = {
  weights: RankWeights;
  now: Date; // the clock's now; a query as of a time counts every age from that time instead
  // The `max` rarest of `terms`, the common ones dropped while rarer ones remain.
  selective(terms: string[], max: number, common: number): string[];
  // BM25 hits (higher is better) of memories' own text and of their evidence, each at most `depth`.
  lexical(q: string, depth: number): { memories: Array<{ id: number; s: number }>; evidence: Array<{ id: number; s: number }> };
  vectorTop(qvec: Float32Array, depth: number): Array<{ id: number; score: number }>;
  // The edges with an end in `ids`; `shares` edges only when asked. Only memories the query may
  // return (its view's; with `as_of`, begun by then).
  edgesAround(ids: number[], shares: boolean): Array<{ from_id: number; to_id: number; type: EdgeType; weight: number }>;
  // `last_seen`: its newest evidence (as of the query's time, what was observed by then).
  // `outdated`: a newer memory that says another value of it (a `supersedes` edge that did not end
  // it) is one the query may return and had begun by the query's time.
  // `text`: the memory's own, for the priors read from it.
  states(ids: number[]): Array<{ id: number; text: string; salience: number; last_seen: string; faded: number; superseded_by: number | null; speaker: string | null; valid_from: string; valid_to: string | null; outdated: number }>;
  // The speakers the store knows (memory/text/speaker.ts), to find those a query names.
  speakers(): string[];
  texts(ids: number[]): Array<{ id: number; text: string; category: Category; faded: number; superseded_by: number | null }>;
  sourcesOf(ids: number[]): Map<number, string[]>;
};

export function rankMemories(src: RecallSource, text: string, qvec: Float32Array | null, opts: QueryOptions & { limit: number }): QueryResult[] {
  const w = src.weights;
  const q = ftsQuery(src.selective(queryTerms(text), 48, w.common));
  // One lexical list: each memory by the better BM25 of its own text and of its evidence.
  const lexical = new Map<number, number>();
  if (q) {
    const best = (id: number, score: number) => lexical.set(id, Math.max(lexical.get(id) ?? -Infinity, score));
    const hits = src.lexical(q, LEXICAL_DEPTH);
    for (const r of hits.memories) best(r.id, r.s);
    for (const r of hits.evidence) best(r.id, r.s);
  }
  const lexList = [...lexical].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([id]) => id);
  const vector = new Map<number, number>();
  const vecList: number[] = [];
  if (qvec) {
    for (const h of src.vectorTop(qvec, LEXICAL_DEPTH)) {
      vecList.push(h.id);
      vector.set(h.id, h.score);
    }
  }
  const fused = fuseRanks(
    [
      { weight: w.lexical, ids: lexList },
      { weight: w.vector, ids: vecList },
    ],
    w.rrf_k,
  );
  if (!fused.size) return [];
  const top = Math.max(...fused.values());
  const seeds = new Map([...fused].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, w.seeds).map(([id, s]) => [id, s / top] as [number, number]));
  const activation = w.activation && w.hops > 0 ? spreadActivation(seeds, adjacency(src, seeds.keys(), w.hops), w) : new Map<number, number>();

  const candidateIds = new Set([...fused.keys(), ...activation.keys()]);
  const asOf = opts.as_of ?? null;
  // Ages as of the query's time: as of then, "recent" is recent then.
  const refMs = asOf !== null ? Date.parse(asOf) : src.now.getTime();
  const cands: Candidate[] = [];
  const states = src.states([...candidateIds]);
  const elsewhere = w.speaker > 0 ? saidElsewhere(src, text, states) : new Set<number>();
  const periods = w.period > 0 ? namedPeriods(text) : [];
  const superseded = new Set<number>();
  const outdated = new Set(states.filter((r) => r.outdated).map((r) => r.id));
  for (const r of states) {
    // As of a time, what was superseded by then; what came later is left to the store (never returned).
    if (r.superseded_by !== null && (asOf === null || r.valid_to === null || r.valid_to <= asOf)) superseded.add(r.id);
    if (!opts.include_faded && (r.faded || superseded.has(r.id))) continue;
    cands.push({
      id: r.id,
      lexical: lexical.get(r.id) ?? 0,
      vector: vector.get(r.id) ?? 0,
      fused: fused.get(r.id) ?? 0,
      activation: activation.get(r.id) ?? 0,
      ageDays: (refMs - isoMs(r.last_seen)) / DAY_MS,
      validAgeDays: (refMs - isoMs(r.valid_from)) / DAY_MS,
      salience: r.salience,
      elsewhere: elsewhere.has(r.id),
      outdated: !!r.outdated && !superseded.has(r.id),
      asks: w.asking > 0 && asksMemo(r.id, r.text),
      outside: periods.length > 0 && !within(r.valid_from, periods, PERIOD_SLACK_DAYS),
    });
  }
  const ranked = rankCandidates(cands, w).slice(0, opts.limit);
  const sources = src.sourcesOf(ranked.map((r) => r.id));
  const byId = new Map(src.texts(ranked.map((r) => r.id)).map((r) => [r.id, r]));
  return ranked.map((r) => {
    const m = byId.get(r.id)!;
    const out: QueryResult = { id: r.id, text: m.text, category: m.category, score: round(r.score, 6), sources: sources.get(r.id) ?? [], faded: !!m.faded, superseded: superseded.has(r.id), ...(outdated.has(r.id) && !superseded.has(r.id) ? { possibly_outdated: true as const } : {}) };
    if (opts.explain) out.explain = Object.fromEntries(Object.entries(r.parts).map(([k, v]) => [k, round(v as number, 6)])) as QueryResult['explain'];
    return out;
  });
}

// asksMostly per memory id, kept with the text it was read from: a verdict is reused only for the
// very same text, so a memory whose text changed (or another store's memory of the same id) is read
// again. Three regular expressions over every candidate were a tenth of a query at 10k memories,
// and the same memories come back query after query; keyed by the text itself, the string hashing
// cost almost as much as the expressions.
const ASKS = new Map<number, { text: string; asks: boolean }>();
function asksMemo(id: number, text: string): boolean {
  const hit = ASKS.get(id);
  if (hit !== undefined && hit.text === text) return hit.asks;
  if (ASKS.size >= 50_000) ASKS.clear();
  const asks = asksMostly(text);
  ASKS.set(id, { text, asks });
  return asks;
}

// When the query names known speakers: the memories another speaker said that name none of them.
function saidElsewhere(src: RecallSource, query: string, states: Array<{ id: number; text: string; speaker: string | null }>): Set<number> {
  const out = new Set<number>();
  const named = namedIn(query, src.speakers());
  if (!named.size) return out;
  for (const r of states) {
    if (r.speaker === null || named.has(r.speaker.toLowerCase())) continue;
    const own = ownWords(r.text, r.speaker);
    if (![...named].some((n) => mentions(own, n))) out.add(r.id);
  }
  return out;
}

// The edges around `start`, out to `hops` hops, both directions. Rare-word links (`shares`) are
// walked one hop from the seeds only, and what they reach is not walked on: a linked memory
// joins the candidates, its own neighbourhood does not (walked like any edge, at 5 links a
// memory, they took a query at 10k from 1.7 to 6.1 ms; walked so, 2.5 against 2.0 in one run).
function adjacency(src: RecallSource, start: Iterable<number>, hops: number): Adjacency {
  const adj: Adjacency = new Map();
  let frontier = [...start];
  const loaded = new Set<number>();
  for (let h = 0; h < hops && frontier.length; h++) {
    for (const id of frontier) loaded.add(id);
    const rows = src.edgesAround(frontier, h === 0);
    const next = new Set<number>();
    // A row read twice (both ends in the frontier) adds nothing the first did not: an edge is kept
    // once per end and type.
    const add = (a: number, b: number, e: { type: EdgeType; weight: number }) => {
      let list = adj.get(a);
      if (!list) adj.set(a, (list = []));
      if (!list.some((x) => x.to === b && x.type === e.type)) list.push({ to: b, weight: e.weight, type: e.type });
      if (!loaded.has(b) && e.type !== 'shares') next.add(b);
    };
    for (const e of rows) {
      add(e.from_id, e.to_id, e);
      add(e.to_id, e.from_id, e);
    }
    frontier = [...next];
  }
  return adj;
}

// Date.parse of a time as the store writes it (toISOString: `2024-05-08T13:56:00.000Z`), 4x faster
// by its fixed digits: two per candidate were a twentieth of a query at 10k memories. Anything
// else goes to Date.parse, and so do the days past the 28th (which month they fit is Date.parse's
// to judge) and years before 100 (Date.UTC reads 0-99 as 1900-1999).
export function isoMs(s: string): number {
  if (s.length !== 24 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 46 || s.charCodeAt(23) !== 90) return Date.parse(s);
  const y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2), h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2), ms = digits(s, 20, 3);
  if (!(y >= 100 && mo >= 1 && mo <= 12 && d >= 1 && d <= 28 && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 59 && ms >= 0)) return Date.parse(s);
  return Date.UTC(y, mo - 1, d, h, mi, sec, ms);
}

// The number written in s[i, i + n), or -1 if any of it is not a digit.
function digits(s: string, i: number, n: number): number {
  let v = 0;
  for (let j = i; j < i + n; j++) {
    const c = s.charCodeAt(j) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

function round(x: number, d: number): number {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}
