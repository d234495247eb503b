// Links across sessions: a new memory is joined by `shares` edges to the memories of other sessions
// that hold the same rare words (rare by document frequency over the store), at most `cap` a
// memory at either end, so a common-enough word never wires the store into one lump.
import { contentTerms, ftsQuery } from '../text/text.js';
import type { StoreCore } from './core.js';

export type LinkSettings = { cap: number; rare: number }; // rare: a term in at most this share of observations (and at most 1 when the store is small)

// Inside the observe transaction: the `shares` edges of memory `id` (created at `at`, in session
// `sessionId`); returns the ids it was linked to.
export function linkRareTerms(s: StoreCore, id: number, text: string, at: string, sessionId: string | null, o: LinkSettings): number[] {
  if (o.cap < 1) return [];
  const docs = Math.max(1, s.docCount());
  const maxDf = Math.max(1, Math.floor(docs * o.rare));
  const score = new Map<number, number>();
  const find = s.stmt(`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ${maxDf + 2}`).pluck();
  for (const t of new Set(contentTerms(text))) {
    // The cached frequency may lag a little; it only spares the lookup of a plainly common word.
    if (s.df(t) > 2 * maxDf + 20) continue;
    const others = (find.all(ftsQuery([t])) as number[]).filter((x) => x !== id);
    if (!others.length || others.length > maxDf) continue;
    const idf = Math.log(docs / (others.length + 1));
    for (const other of others) score.set(other, (score.get(other) ?? 0) + idf);
  }
  if (!score.size) return [];
  const rows = s.stmt(
    `SELECT m.id, m.created_at,
            EXISTS (SELECT 1 FROM observations o WHERE o.memory_id = m.id AND o.session_id = ?) AS same_session,
            (SELECT count(*) FROM edges e WHERE e.type = 'shares' AND (e.from_id = m.id OR e.to_id = m.id)) AS links
       FROM memories m WHERE m.id IN (SELECT value FROM json_each(?)) AND m.faded = 0 AND m.superseded_by IS NULL AND ${s.seen('m')}`,
  ).all(sessionId, JSON.stringify([...score.keys()])) as Array<{ id: number; created_at: string; same_session: number; links: number }>;
  const picked = rows
    .filter((r) => r.created_at !== at && !r.same_session && r.links < o.cap)
    .sort((a, b) => score.get(b.id)! - score.get(a.id)! || a.id - b.id)
    .slice(0, o.cap - countLinks(s, id))
    .map((r) => r.id);
  for (const other of picked) s.upsertEdge(other, id, 'shares', 1);
  return picked;
}

export function countLinks(s: StoreCore, id: number): number {
  return (s.stmt(`SELECT count(*) AS n FROM edges WHERE type = 'shares' AND (from_id = ? OR to_id = ?)`).get(id, id) as { n: number }).n;
}
