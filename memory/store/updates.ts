// Knowledge updates at write time (memory/learning/slot-update.ts decides, this writes): a new
// memory that says what a close one says with one value changed ends the older one where the
// writer may (supersede, by the standing rule), else marks it possibly outdated for the writer's
// own view (a `supersedes` edge from the writer's memory, its validity left as it is), else, and
// for two values of one time, records a contradiction candidate. Called by observe and the dream.
import { updateRelation, type UpdateRelation } from '../learning/slot-update.js';
import type { Actor } from '../types.js';
import type { MemoryRow } from './checks.js';
import { recordCandidate } from './contradictions.js';
import type { StoreCore } from './core.js';
import { endValidity } from './rows.js';
import { supersedeProblem } from './scope.js';
import { GATE_CANDIDATES, similar } from './search.js';

export type UpdateOutcome = { other: number; kind: UpdateRelation['kind']; applied: 'superseded' | 'outdated' | 'candidate'; older: number | null; from: string; to: string };

const read = (s: StoreCore, id: number) =>
  s.stmt(`SELECT id, text, category, salience, confidence, access_count, tags, created_at, updated_at, faded, superseded_by, valid_from, valid_to, scope, speaker FROM memories WHERE id = ? AND ${s.seen()}`).get(id) as
    | (MemoryRow & { valid_from: string; speaker: string | null })
    | undefined;

// Predictions, threads, a dream's insights and anneal passes are events or derived: never ended by a changed word.
const EVENTS = new Set(['prediction', 'thread', 'insight', 'anneal']);

/**
 * Inside the caller's transaction: memory `id` against the active memories `others` (the gate's
 * close ones) this view sees. Off (test-only `knowledgeUpdates: false`): nothing.
 */
export function recordUpdates(s: StoreCore, id: number, others: number[], actor: Actor): UpdateOutcome[] {
  if (!s.knowledgeUpdates) return [];
  const me = read(s, id);
  if (!me || me.faded || me.superseded_by !== null || EVENTS.has(me.category)) return [];
  const out: UpdateOutcome[] = [];
  for (const otherId of new Set(others)) {
    if (otherId === id) continue;
    const o = read(s, otherId);
    if (!o || o.faded || o.superseded_by !== null || EVENTS.has(o.category)) continue;
    const rel = updateRelation(o, me);
    if (!rel) continue;
    const base = { other: otherId, kind: rel.kind, from: rel.slot.from, to: rel.slot.to };
    if (rel.kind === 'contradiction') {
      recordCandidate(s, id, otherId, 'heuristic', 0.9, `one time (valid from ${me.valid_from}), two values: "${rel.slot.from}" against "${rel.slot.to}"`);
      out.push({ ...base, applied: 'candidate', older: null });
      continue;
    }
    const [older, newer] = rel.kind === 'current' ? [o, me] : [me, o];
    if (older.superseded_by !== null) continue;
    // Ended where the writer may end it (scope.ts: its own agent's memory, or the operator's view).
    if ((s.crossScopeStanding ? null : supersedeProblem(s.agent, older, newer)) === null) {
      s.upsertEdge(newer.id, older.id, 'supersedes', 1);
      endValidity(s, older, newer, actor);
      older.superseded_by = newer.id;
      out.push({ ...base, applied: 'superseded', older: older.id });
    } else if (s.stmt("SELECT 1 FROM edges WHERE from_id = ? AND to_id = ? AND type = 'supersedes'").get(newer.id, older.id)) {
      continue; // marked before (a dream over what observe saw)
    } else if (s.standingProblem('link', [newer, older]) === null) {
      // Possibly outdated, for those who see the newer memory: ranked below it (pipeline.ts),
      // still valid for every other reader.
      s.upsertEdge(newer.id, older.id, 'supersedes', 1);
      out.push({ ...base, applied: 'outdated', older: older.id });
    } else {
      recordCandidate(s, id, otherId, 'heuristic', 0.8, `a changed value the writer may not apply: "${rel.slot.from}" then "${rel.slot.to}" (valid from ${older.valid_from}, then ${newer.valid_from})`);
      out.push({ ...base, applied: 'candidate', older: null });
    }
  }
  return out;
}

/**
 * The dream's share, for what is already stored: the recent memories, and the next `batch` active
 * ones (ids ascending) after where the last dream's updates phase stopped (a store from before
 * updates catches up a batch a dream), each against its close neighbours as observe would have
 * judged them; one transaction. `through` (kept in the dream's metrics row) is where the next starts.
 */
export function reconcileUpdates(s: StoreCore, recent: Array<{ id: number; text: string }>, actor: Actor, batch = 2000): { memories: number; pairs: number; superseded: number; outdated: number; candidates: number; through: number; remaining: number } {
  const after = (s.stmt(`SELECT coalesce((SELECT json_extract(metrics, '$.phases.updates.through') FROM dreams WHERE json_extract(metrics, '$.phases.updates.through') IS NOT NULL ORDER BY id DESC LIMIT 1), 0) AS n`).get() as { n: number }).n;
  const next = s.stmt(`SELECT id, text FROM memories m WHERE id > ? AND derived = 0 AND faded = 0 AND superseded_by IS NULL AND ${s.seen('m')} ORDER BY id LIMIT ?`).all(after, batch) as Array<{ id: number; text: string }>;
  const through = next.length ? next[next.length - 1].id : after;
  const memories = [...new Map([...recent, ...next].map((m) => [m.id, m])).values()];
  const counts = { pairs: 0, superseded: 0, outdated: 0, candidates: 0 };
  s.write(() => {
    for (const m of memories) {
      const near = similar(s, m.text, { limit: GATE_CANDIDATES, min: 0.3, except: m.id });
      for (const u of recordUpdates(s, m.id, near.map((n) => n.id), actor)) {
        counts.pairs++;
        if (u.applied === 'superseded') counts.superseded++;
        else if (u.applied === 'outdated') counts.outdated++;
        else counts.candidates++;
      }
    }
    if (counts.pairs) s.audit(actor, 'reconcile_updates', null, null, counts);
  })();
  const remaining = (s.stmt(`SELECT count(*) AS n FROM memories m WHERE id > ? AND derived = 0 AND faded = 0 AND superseded_by IS NULL AND ${s.seen('m')}`).get(through) as { n: number }).n;
  return { memories: memories.length, ...counts, through, remaining };
}
