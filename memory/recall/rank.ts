// Ranking, as pure functions over plain data: reciprocal-rank fusion of the arms, spreading
// activation over edges, and the final mix with recency and salience.
import type { EdgeType, ScoreParts } from '../types.js';

export type RankWeights = {
  rrf_k: number; // reciprocal-rank constant: small trusts the top ranks more
  lexical: number; // the BM25 list (memory text and the evidence merged into it)
  common: number; // query terms in more than this share of observations are dropped while rarer ones remain
  vector: number; // the same-model cosine list
  seeds: number; // how many of the best fused results spread activation
  hops: number;
  decay: number; // per hop
  activation: number; // weight of received activation in the final score
  recency: number;
  half_life_days: number;
  salience: number;
  edges: Record<EdgeType, number>; // how well each edge type carries activation
  outdated: number; // a memory a newer one of this view marks possibly outdated (memory/store/updates.ts) keeps 1 - this of its score
  speaker: number; // a query naming a known speaker: what another speaker said, not about them, loses this share of its score
  asking: number; // a memory that mostly asks (memory/text/text.ts asksMostly) loses this share of its score
  period: number; // a query naming a date or month (memory/text/periods.ts): a memory begun outside it loses this share of its score
  link_cap: number; // `shares` edges a memory may have (memory/store/links.ts)
  link_rare: number; // a word in at most this share of observations is rare enough to link by
};

export type Ranked = { id: number; score: number; parts: ScoreParts };

// Reciprocal-rank fusion: each list gives weight / (k + rank) to its ids (rank from 1).
export function fuseRanks(lists: Array<{ weight: number; ids: number[] }>, k: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const { weight, ids } of lists) {
    if (!weight) continue;
    ids.forEach((id, i) => out.set(id, (out.get(id) ?? 0) + weight / (k + i + 1)));
  }
  return out;
}

export type Adjacency = Map<number, Array<{ to: number; weight: number; type: EdgeType }>>;

// Activation each node receives from the seeds: a seed's activation passes along every edge
// (either direction) times the edge's weight, its type's weight and `decay`, for `hops` hops.
// Seeds receive from each other too, so clusters of hits rise together.
export function spreadActivation(
  seeds: Map<number, number>,
  adjacency: Adjacency,
  opts: { hops: number; decay: number; edges: Record<EdgeType, number> },
): Map<number, number> {
  const received = new Map<number, number>();
  let frontier = seeds;
  for (let hop = 0; hop < opts.hops && frontier.size; hop++) {
    const next = new Map<number, number>();
    for (const [from, a] of frontier) {
      for (const e of adjacency.get(from) ?? []) {
        const c = a * e.weight * (opts.edges[e.type] ?? 0) * opts.decay;
        if (c > 0) next.set(e.to, (next.get(e.to) ?? 0) + c);
      }
    }
    for (const [id, c] of next) received.set(id, (received.get(id) ?? 0) + c);
    frontier = next;
  }
  return received;
}

// 1 now, 0.5 after one half-life.
export function recency(ageDays: number, halfLifeDays: number): number {
  if (!(halfLifeDays > 0)) return 0;
  return Math.pow(0.5, Math.max(0, ageDays) / halfLifeDays);
}

// `elsewhere`: the query names a speaker, and someone else said this and it does not name them.
// `validAgeDays`: since it began to hold (valid_from); `outdated`: a newer value of it is known (updates.ts);
// `asks`: its text mostly asks; `outside`: the query names a period and this began outside it.
export type Candidate = { id: number; lexical: number; vector: number; fused: number; activation: number; ageDays: number; validAgeDays?: number; salience: number; elsewhere?: boolean; outdated?: boolean; asks?: boolean; outside?: boolean };

// The final order: fused rank score (scaled so the best is 1) plus weighted activation, recency
// and salience, times (1 - speaker) for what another speaker said (Candidate `elsewhere`) and
// (1 - asking) for a memory that mostly asks and (1 - period) for one begun outside the period a
// query names. Ties go to the lower id (older memory) so results are stable.
export function rankCandidates(cands: Candidate[], w: RankWeights): Ranked[] {
  const top = Math.max(0, ...cands.map((c) => c.fused));
  const out = cands.map((c) => {
    const fused = top > 0 ? c.fused / top : 0;
    const parts: ScoreParts = {
      lexical: c.lexical,
      vector: c.vector,
      fused,
      activation: c.activation,
      // From its newest evidence and from when it began to hold, equally: of two facts seen as
      // recently, the one that began to hold later is the more recent.
      recency: c.validAgeDays === undefined ? recency(c.ageDays, w.half_life_days) : (recency(c.ageDays, w.half_life_days) + recency(c.validAgeDays, w.half_life_days)) / 2,
      salience: c.salience,
    };
    const mixed = fused + w.activation * parts.activation + w.recency * parts.recency + w.salience * parts.salience;
    const score = mixed * (c.elsewhere ? 1 - w.speaker : 1) * (c.outdated ? 1 - (w.outdated ?? 0) : 1) * (c.asks ? 1 - (w.asking ?? 0) : 1) * (c.outside ? 1 - (w.period ?? 0) : 1);
    return { id: c.id, score, parts };
  });
  return out.sort((a, b) => b.score - a.score || a.id - b.id);
}
