// Wander over this store: the graph memory/learning/wander.ts walks, read from the edges.
import { WANDER_DEFAULTS, seededRng, walk, type Rng, type WanderGraph } from '../learning/wander.js';
import { MemoryError, type Category, type WanderItem } from '../types.js';
import { retrievability } from './cards.js';
import { ids } from './checks.js';
import type { StoreCore } from './core.js';

/** A seeded random walk over edges (memory/learning/wander.ts); the same seed on the same store gives the same path. */
export function wander(s: StoreCore, opts: { steps?: number; seed?: number; jumpRate?: number; rng?: Rng } = {}): { seed: number; path: WanderItem[] } {
  const steps = opts.steps ?? WANDER_DEFAULTS.steps;
  if (!Number.isInteger(steps) || steps < 1 || steps > 100) throw new MemoryError('INVALID', `Expected steps to be a whole number from 1 to 100, got ${JSON.stringify(steps)}`);
  const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31);
  if (!Number.isInteger(seed) || seed < 0) throw new MemoryError('INVALID', `Expected seed to be a whole number of 0 or more, got ${JSON.stringify(seed)}`);
  const jumpRate = opts.jumpRate ?? s.learning.wander_jump;
  const at = s.now();
  // Only what this view may see: another agent's private memories are neither stops nor bridges.
  const active = `faded = 0 AND superseded_by IS NULL AND ${s.seen()}`;
  const count = (s.stmt(`SELECT count(*) AS n FROM memories WHERE ${active}`).get() as { n: number }).n;
  const overdue = s.stmt(`SELECT id FROM memories WHERE due <= ? AND ${active} ORDER BY id LIMIT 10000`).pluck().all(at.toISOString()) as number[];
  const rCache = new Map<number, number>();
  const r = (id: number) => {
    let v = rCache.get(id);
    if (v === undefined) rCache.set(id, (v = retrievability(s, id, at)));
    return v;
  };
  const graph: WanderGraph = {
    count,
    at: (i) => s.stmt(`SELECT id FROM memories WHERE ${active} ORDER BY id LIMIT 1 OFFSET ?`).pluck().get(i) as number,
    retrievability: r,
    neighbours: (id) =>
      s.stmt(
        `SELECT e.other AS "to", max(e.weight) AS weight FROM (
           SELECT to_id AS other, weight FROM edges WHERE from_id = ? UNION ALL SELECT from_id AS other, weight FROM edges WHERE to_id = ?
         ) e JOIN memories m ON m.id = e.other WHERE m.faded = 0 AND m.superseded_by IS NULL AND ${s.seen('m')} GROUP BY e.other ORDER BY e.other`,
      ).all(id, id) as Array<{ to: number; weight: number }>,
    overdue,
  };
  const path = walk(graph, { steps, jumpRate, rng: opts.rng ?? seededRng(seed) });
  const rows = new Map(
    (s.stmt('SELECT id, text, category FROM memories WHERE id IN (SELECT value FROM json_each(?))').all(ids(path.map((p) => p.id))) as Array<{ id: number; text: string; category: Category }>).map((x) => [x.id, x]),
  );
  return { seed, path: path.map((p) => ({ id: p.id, text: rows.get(p.id)!.text, category: rows.get(p.id)!.category, retrievability: r(p.id), via: p.via })) };
}
