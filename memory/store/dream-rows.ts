// The primitives memory/dream/dream.ts runs: where the last dream stopped, what came since, the
// abstractions it adds, what it fades, and its metrics row.
import { retrievability as retrievabilityAt } from '../learning/fsrs.js';
import { confirmedAtCreation } from '../learning/claims.js';
import { MemoryError, type Actor, type Category, type EdgeType } from '../types.js';
import { checkActor, checkText, ids, round } from './checks.js';
import type { StoreCore } from './core.js';
import { LAST_DREAM_SQL, pressureOf } from './pressure.js';

// An abstraction's edges to its members: light, so a hit on one member does not lift all its
// siblings through the abstraction (LoCoMo dev after a dream, recall@10: 0.8 cost 1.5 points, 0.2
// cost 0.4 at @20, 0.05 costs nothing).
const ABSTRACT_EDGE_WEIGHT = 0.05;

/** The last dream, or null before the first. */
export function lastDream(s: StoreCore): { id: number; started_at: string; duration_ms: number; last_observation_id: number } | null {
  return (s.stmt(LAST_DREAM_SQL).get() as
    | { id: number; started_at: string; duration_ms: number; last_observation_id: number }
    | undefined) ?? null;
}

/** Memory pressure for the supervisor: observations since the last dream, and when that was. */
export function dreamPressure(s: StoreCore): { observations_since: number; last_dream_at: string | null; first_since_at: string | null } {
  return pressureOf((sql) => s.stmt(sql));
}

/** The newest observation id (a dream remembers where it stopped). */
export function lastObservationId(s: StoreCore): number {
  return (s.stmt('SELECT coalesce(max(id), 0) AS n FROM observations').get() as { n: number }).n;
}

/** Active memories that observations after `sinceObservationId` went to, newest first, at most `limit`. */
export function recentMemories(s: StoreCore, sinceObservationId: number, limit: number): Array<{ id: number; text: string; salience: number; category: Category; scope: string | null }> {
  return s.stmt(
    `SELECT m.id, m.text, m.salience, m.category, m.scope FROM memories m WHERE m.faded = 0 AND m.superseded_by IS NULL AND ${s.seen('m')}
     AND m.id IN (SELECT memory_id FROM observations WHERE id > ?) ORDER BY m.id DESC LIMIT ?`,
  ).all(sinceObservationId, limit) as Array<{ id: number; text: string; salience: number; category: Category; scope: string | null }>;
}

/** Edges whose two ends are both in `memoryIds` (of the given types). */
export function edgesAmong(s: StoreCore, memoryIds: number[], types: EdgeType[]): Array<{ from: number; to: number; type: EdgeType }> {
  if (!memoryIds.length) return [];
  return s.stmt(
    `SELECT from_id AS "from", to_id AS "to", type FROM edges WHERE from_id IN (SELECT value FROM json_each(@ids))
     AND to_id IN (SELECT value FROM json_each(@ids)) AND type IN (SELECT value FROM json_each(@types))`,
  ).all({ ids: ids(memoryIds), types: JSON.stringify(types) }) as Array<{ from: number; to: number; type: EdgeType }>;
}

/** True when an abstraction already covers at least half of `memberIds`. */
export function hasAbstraction(s: StoreCore, memberIds: number[]): boolean {
  if (!memberIds.length) return false;
  const r = s.stmt(
    `SELECT from_id, count(*) AS n FROM edges WHERE type = 'abstracts' AND to_id IN (SELECT value FROM json_each(?)) GROUP BY from_id ORDER BY n DESC LIMIT 1`,
  ).get(ids(memberIds)) as { n: number } | undefined;
  return !!r && r.n * 2 >= memberIds.length;
}

/** A new `insight` memory that abstracts `memberIds` (an `abstracts` edge to each); not through the gate: it is derived, not observed. Its members are of one scope, and so is it. */
export async function addAbstraction(s: StoreCore, text: string, memberIds: number[], actor: Actor): Promise<number> {
  checkActor(actor);
  if (typeof text !== 'string' || !text.trim()) throw new MemoryError('INVALID', 'Expected the abstraction as a non-empty string');
  checkText({ text });
  s.tombstones.refuse([['text', text]]);
  const [vec] = await s.embed([text]);
  return s.write(() => {
    s.tombstones.refuse([['text', text]]);
    const members = memberIds.map((m) => s.row(m));
    const scopes = new Set(members.map((m) => m.scope));
    if (scopes.size > 1) throw new MemoryError('INVALID', `Expected the members of an abstraction to be of one scope, got ${[...scopes].map((x) => x ?? 'shared').join(', ')}`);
    const salience = round(members.reduce((sum, m) => sum + m.salience, 0) / Math.max(1, members.length));
    const validFrom = members.map((m) => m.valid_from).filter(Boolean).sort()[0] ?? null;
    const id = s.insertMemory(text.trim(), 'insight', salience, [], s.iso(), 0.5, true, confirmedAtCreation(actor), { validFrom, scope: members[0]?.scope ?? null });
    s.putVector(id, vec);
    for (const m of memberIds) s.upsertEdge(id, m, 'abstracts', ABSTRACT_EDGE_WEIGHT);
    s.audit(actor, 'abstract', `memory:${id}`, null, { members: memberIds });
    return id;
  })();
}

/**
 * Fades active memories low on both retrievability and salience (never deletes; faded memories
 * stay searchable with include_faded, labelled). Open threads and unresolved predictions stay.
 */
export function fadeWeak(s: StoreCore, limits: { retrievability: number; salience: number }, actor: Actor): number[] {
  checkActor(actor);
  const at = s.now();
  const rows = s.stmt(
    `SELECT id, stability, last_review, created_at FROM memories WHERE faded = 0 AND superseded_by IS NULL AND salience < ?
     AND id NOT IN (SELECT memory_id FROM threads WHERE status = 'open') AND id NOT IN (SELECT memory_id FROM predictions WHERE resolved_at IS NULL)`,
  ).all(limits.salience) as Array<{ id: number; stability: number; last_review: string | null; created_at: string }>;
  const weak = rows.filter((r) => retrievabilityAt(r, at, r.created_at) < limits.retrievability).map((r) => r.id);
  if (!weak.length) return [];
  s.write(() => {
    const set = s.stmt('UPDATE memories SET faded = 1 WHERE id = ?');
    for (const id of weak) set.run(id);
    s.audit(actor, 'fade', `memories:${weak.length}`, null, { faded: weak, rule: limits });
  })();
  return weak;
}

/** Writes a dream's metrics row. */
export function recordDream(s: StoreCore, startedAt: string, durationMs: number, lastObservationId: number, metrics: unknown, actor: Actor): number {
  checkActor(actor);
  return s.write(() => {
    const id = Number(s.stmt('INSERT INTO dreams (started_at, duration_ms, last_observation_id, metrics) VALUES (?, ?, ?, ?)').run(startedAt, durationMs, lastObservationId, JSON.stringify(metrics)).lastInsertRowid);
    s.audit(actor, 'dream', `dream:${id}`, null, { duration_ms: durationMs, last_observation_id: lastObservationId });
    return id;
  })();
}
