// Reading one memory and writing the hand-made changes to it: link, fade, supersede; the export
// of every observation and the audit rows.
import { retrievability as retrievabilityAt } from '../learning/fsrs.js';
import { EDGE_TYPES, MemoryError, type Actor, type Category, type EdgeType, type MemoryRecord } from '../types.js';
import { applyGrade, card } from './cards.js';
import { checkActor, publicRow, round, type MemoryRow } from './checks.js';
import type { StoreCore } from './core.js';
import { supersedeProblem } from './scope.js';
import { sourcesOf } from './search.js';

// An import line (the same shape `exportAll` writes).
export type ExportLine = { text: string; source?: string | null; created_at?: string; valid_from?: string; scope?: string; tags?: string[]; category?: Category };

/** One memory with its sources and edges. Throws MemoryError NOT_FOUND. */
export function recall(s: StoreCore, id: number): MemoryRecord {
  if (!Number.isInteger(id)) throw new MemoryError('INVALID', `Expected a memory id (a whole number), got ${JSON.stringify(id)}`);
  const r = s.row(id);
  // Edges to memories this view may not see are not there for it.
  const edges = (s.stmt(
    `SELECT e.type, e.to_id AS other, e.weight, 'out' AS direction FROM edges e JOIN memories m ON m.id = e.to_id WHERE e.from_id = ? AND ${s.seen('m')}
     UNION ALL SELECT e.type, e.from_id AS other, e.weight, 'in' AS direction FROM edges e JOIN memories m ON m.id = e.from_id WHERE e.to_id = ? AND ${s.seen('m')} ORDER BY 2`,
  ).all(id, id) as Array<{ type: EdgeType; other: number; weight: number; direction: 'out' | 'in' }>).map((e) => ({ type: e.type, to: e.other, weight: e.weight, direction: e.direction }));
  const c = card(s, id);
  return { ...publicRow(r), valid_from: r.valid_from ?? r.created_at, sources: sourcesOf(s, [id]).get(id) ?? [], edges, retrievability: round(retrievabilityAt(c, s.now(), c.created_at)), due: c.due };
}

/** Import lines for every observation (oldest first), so `observeMany` can rebuild the store elsewhere. */
export function* exportAll(s: StoreCore): Iterable<ExportLine> {
  const rows = s.stmt(
    `SELECT o.text, o.source, o.created_at, m.tags, m.category, m.valid_from, m.scope FROM observations o JOIN memories m ON m.id = o.memory_id WHERE ${s.seen('m')} ORDER BY o.id`,
  ).iterate() as Iterable<{ text: string; source: string | null; created_at: string; tags: string; category: Category; valid_from: string | null; scope: string | null }>;
  for (const r of rows) {
    const line: ExportLine = { text: r.text, created_at: r.created_at, category: r.category };
    if (r.valid_from !== null && r.valid_from !== r.created_at) line.valid_from = r.valid_from;
    if (r.scope !== null) line.scope = r.scope;
    if (r.source !== null) line.source = r.source;
    const tags = JSON.parse(r.tags) as string[];
    if (tags.length) line.tags = tags;
    yield line;
  }
}

/** True when session `sessionId` already has an observation of `text` (as the store keeps it): a spooled item stored before a crash is not stored again. */
export function hasObservation(s: StoreCore, sessionId: string, text: string): boolean {
  return !!s.stmt('SELECT 1 FROM observations WHERE session_id = ? AND text = ? LIMIT 1').get(sessionId, String(text).normalize('NFKC').trim());
}

/**
 * A typed, weighted edge between two memories (weight 0..1; an existing edge takes the new weight).
 * `from supersedes to` is a supersession (see `supersede`), refused where this view may not make one;
 * a session may link only where one end is its own (scope.ts standingProblem).
 */
export function link(s: StoreCore, from: number, to: number, type: EdgeType, weight: number, actor: Actor): { from: number; to: number; type: EdgeType; weight: number } {
  checkActor(actor);
  if (!EDGE_TYPES.includes(type)) throw new MemoryError('INVALID', `Expected an edge type (${EDGE_TYPES.join(', ')}), got ${JSON.stringify(type)}`);
  if (typeof weight !== 'number' || !(weight >= 0 && weight <= 1)) throw new MemoryError('INVALID', `Expected weight between 0 and 1, got ${JSON.stringify(weight)}`);
  if (from === to) throw new MemoryError('INVALID', `Expected two different memories, got ${from} twice`);
  return s.write(() => {
    const source = s.row(from);
    const target = s.row(to);
    if (type === 'supersedes') mayReplace(s, target, source);
    else s.mayChange('link', source, target);
    const before = s.stmt('SELECT weight FROM edges WHERE from_id = ? AND to_id = ? AND type = ?').get(from, to, type) as { weight: number } | undefined;
    s.stmt(
      `INSERT INTO edges (from_id, to_id, type, weight, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (from_id, to_id, type) DO UPDATE SET weight = excluded.weight`,
    ).run(from, to, type, weight, s.iso());
    const edge = { from, to, type, weight };
    s.audit(actor, 'link', `memory:${from}`, before ? { ...edge, weight: before.weight } : null, edge);
    // Idempotent as the tool says: the same supersession again only sets the weight.
    if (type === 'supersedes' && target.superseded_by !== from) endValidity(s, target, source, actor);
    return edge;
  })();
}

/** Fades (or with `faded = false` revives) a memory: searchable only with include_faded, never injected. */
export function fade(s: StoreCore, id: number, actor: Actor, faded = true): void {
  checkActor(actor);
  s.write(() => {
    const before = s.row(id);
    s.stmt('UPDATE memories SET faded = ? WHERE id = ?').run(faded ? 1 : 0, id);
    s.audit(actor, faded ? 'fade' : 'revive', `memory:${id}`, { faded: !!before.faded }, { faded });
  })();
}

/**
 * `newer` replaces `older`: older gets superseded_by and a `supersedes` edge points at it. Older
 * held until newer began (valid_to: newer's valid_from, never before older's own). An agent's
 * view may supersede only its own memories, and only by one every reader of the older sees
 * (scope.ts supersedeProblem); the operator's, any. Throws MemoryError PERMISSION or INVALID.
 */
export function supersede(s: StoreCore, older: number, newer: number, actor: Actor): void {
  checkActor(actor);
  if (older === newer) throw new MemoryError('INVALID', `Expected two different memories, got ${older} twice`);
  s.write(() => {
    const before = s.row(older);
    const after = s.row(newer);
    mayReplace(s, before, after);
    s.upsertEdge(newer, older, 'supersedes', 1);
    endValidity(s, before, after, actor);
  })();
}

function mayReplace(s: StoreCore, older: MemoryRow, newer: MemoryRow): void {
  const problem = s.crossScopeStanding ? null : supersedeProblem(s.agent, older, newer);
  if (problem) throw new MemoryError(problem.code, problem.message);
}

// Inside a transaction: `older` (as read before) held until `newer` began; graded Again.
export function endValidity(s: StoreCore, older: MemoryRow, newer: MemoryRow, actor: Actor): void {
  const validTo = [older.valid_from, newer.valid_from].sort()[1];
  s.stmt('UPDATE memories SET superseded_by = ?, valid_to = ? WHERE id = ?').run(newer.id, validTo, older.id);
  const graded = applyGrade(s, older.id, 'again', 'superseded', actor, s.now());
  s.audit(actor, 'supersede', `memory:${older.id}`, { superseded_by: older.superseded_by, valid_to: older.valid_to }, { superseded_by: newer.id, valid_to: validTo, graded: graded.grade });
}

/** The audit rows, oldest first (for `stats`-style reports and tests). */
export function auditLog(s: StoreCore, limit = 1000): Array<{ id: number; at: string; surface: string; session_id: string | null; action: string; target: string | null; before: unknown; after: unknown }> {
  return (s.stmt('SELECT * FROM audit ORDER BY id LIMIT ?').all(limit) as Array<Record<string, unknown>>).map((r) => ({
    ...(r as { id: number; at: string; surface: string; session_id: string | null; action: string; target: string | null }),
    before: r.before === null ? null : JSON.parse(r.before as string),
    after: r.after === null ? null : JSON.parse(r.after as string),
  }));
}
