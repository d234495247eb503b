// Links across sessions: a memory is joined by `shares` edges to the memories of other sessions
// that hold the same rare words (rare by document frequency over the store), at most `cap` a
// memory at either end, so a common-enough word never wires the store into one lump. Made at
// observe, and by the dream for memories observed before (or while) the links were off.
import { contentTerms, ftsQuery } from '../text/text.js';
import { ids } from './checks.js';
import type { StoreCore } from './core.js';

export type LinkSettings = { cap: number; rare: number }; // rare: a term in at most this share of observations (and at most 1 when the store is small)

// Candidates looked at per link wanted: enough that those of the same session or already at the
// cap can be passed over.
const CANDIDATES_PER_LINK = 4;
// A word more memories than this hold links none of them, whatever the store's size: it bounds
// the postings an observe reads (12 words of 1% of 100k would be 12,000 rows).
const MAX_HOLDERS = 200;

// The `shares` edges of memory `id` (its first observation at `at`, in session `sessionId`):
// the memories holding its rare words, each scored by the IDF of the words it shares, the best
// few checked; returns the ids it was linked to. Inside the caller's transaction. One short
// postings read per word (LIMIT: a common word stops early): one BM25 OR-query over the rare
// words measured slower (1.0 against 0.34 ms at 10k), its ranking scores every posting; and
// skipping the words whose cached count says only this memory holds them cost 0.4 points @10 on
// dev (the counts lag while a small store grows).
export function linkRareTerms(s: StoreCore, id: number, text: string, at: string, sessionId: string | null, o: LinkSettings): number[] {
  if (o.cap < 1) return [];
  const room = o.cap - countLinks(s, id);
  if (room < 1) return [];
  const docs = Math.max(1, s.docCount());
  const maxDf = Math.min(MAX_HOLDERS, Math.max(1, Math.floor(docs * o.rare)));
  const find = s.stmt(`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ${maxDf + 2}`).pluck();
  const score = new Map<number, number>();
  for (const t of contentTerms(text)) {
    // The cached count may lag a little; it only spares the read of a plainly common word.
    if (s.df(t) > 2 * maxDf + 20) continue;
    const others = (find.all(ftsQuery([t])) as number[]).filter((x) => x !== id);
    if (!others.length || others.length > maxDf) continue;
    const idf = Math.log(docs / (others.length + 1));
    for (const other of others) score.set(other, (score.get(other) ?? 0) + idf);
  }
  if (!score.size) return [];
  const hits = [...score].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, o.cap * CANDIDATES_PER_LINK).map(([x]) => x);
  // Each check an index lookup (an OR inside the correlated subquery scanned the edges). A
  // candidate's links count toward its cap only where this memory's readers see their other end
  // (shared, or of this memory's scope): another agent's private memories never use up a shared
  // memory's links for the rest (scope.ts: a session changes only what its own agent sees; the
  // test-only crossScopeStanding counts them all, as before).
  const scope = (s.stmt('SELECT scope FROM memories WHERE id = ?').get(id) as { scope: string | null } | undefined)?.scope ?? null;
  const rows = s.stmt(
    `SELECT m.id, m.created_at,
            EXISTS (SELECT 1 FROM observations o WHERE o.memory_id = m.id AND +o.session_id = @session) AS same_session,
            (SELECT count(*) FROM edges e JOIN memories x ON x.id = e.to_id WHERE e.type = 'shares' AND e.from_id = m.id AND (@all OR x.scope IS NULL OR x.scope IS @scope))
              + (SELECT count(*) FROM edges e JOIN memories x ON x.id = e.from_id WHERE e.type = 'shares' AND e.to_id = m.id AND (@all OR x.scope IS NULL OR x.scope IS @scope)) AS links
       FROM memories m WHERE m.id IN (SELECT value FROM json_each(@hits)) AND m.faded = 0 AND m.superseded_by IS NULL AND ${s.seen('m')}`,
  ).all({ session: sessionId, hits: ids(hits), scope, all: s.crossScopeStanding ? 1 : 0 }) as Array<{ id: number; created_at: string; same_session: number; links: number }>;
  const linked = new Set(s.stmt(`SELECT to_id FROM edges WHERE type = 'shares' AND from_id = ? UNION SELECT from_id FROM edges WHERE type = 'shares' AND to_id = ?`).pluck().all(id, id) as number[]);
  const order = new Map(hits.map((h, i) => [h, i]));
  const picked = rows
    .filter((r) => r.created_at !== at && !r.same_session && r.links < o.cap && !linked.has(r.id))
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
    .slice(0, room)
    .map((r) => r.id);
  for (const other of picked) s.upsertEdge(other, id, 'shares', 1);
  return picked;
}

export function countLinks(s: StoreCore, id: number): number {
  return (s.stmt(`SELECT (SELECT count(*) FROM edges WHERE type = 'shares' AND from_id = ?) + (SELECT count(*) FROM edges WHERE type = 'shares' AND to_id = ?) AS n`).get(id, id) as { n: number }).n;
}

// Where the dream's backfill stands: every memory up to this id was offered its links. Kept in
// the dreams' metrics rows (a dream whose links phase failed recorded none; the one before counts).
export function linksThrough(s: StoreCore): number {
  return (s.stmt(`SELECT coalesce((SELECT json_extract(metrics, '$.phases.links.through') FROM dreams WHERE json_extract(metrics, '$.phases.links.through') IS NOT NULL ORDER BY id DESC LIMIT 1), 0) AS n`).get() as { n: number }).n;
}

/**
 * The dream's share: the next `batch` active memories after `after` (ids ascending) offered
 * their links, as observe would have made them; `through` is where the next batch starts. Links
 * off (cap 0): nothing, and `through` stays.
 */
export function backfillLinks(s: StoreCore, after: number, batch: number): { memories: number; linked: number; through: number; remaining: number } {
  const o = { cap: s.weights.link_cap, rare: s.weights.link_rare };
  if (o.cap < 1) return { memories: 0, linked: 0, through: after, remaining: 0 };
  // A memory's own conversation: its first observation's time and session.
  const next = s.stmt(
    `SELECT m.id, m.text, m.created_at AS at, (SELECT o.session_id FROM observations o WHERE o.memory_id = m.id ORDER BY o.id LIMIT 1) AS session_id
       FROM memories m WHERE m.id > ? AND m.derived = 0 AND m.faded = 0 AND m.superseded_by IS NULL ORDER BY m.id LIMIT ?`,
  ).all(after, batch) as Array<{ id: number; text: string; at: string; session_id: string | null }>;
  let linked = 0;
  s.write(() => {
    for (const m of next) linked += linkRareTerms(s, m.id, m.text, m.at, m.session_id, o).length;
  })();
  const through = next.length ? next[next.length - 1].id : after;
  const remaining = (s.stmt('SELECT count(*) AS n FROM memories WHERE id > ? AND derived = 0 AND faded = 0 AND superseded_by IS NULL').get(through) as { n: number }).n;
  return { memories: next.length, linked, through, remaining };
}
