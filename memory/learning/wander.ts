// Wander: a seeded random walk over memory edges. From a well-remembered memory it may jump to an
// overdue one, so what is slipping gets seen again. Pure over a graph the store hands in; the RNG is
// injected, so the same seed on the same graph gives the same path.

export type Rng = () => number; // uniform in [0, 1)

// mulberry32: small, fast, good enough for choosing paths; a 32-bit seed.
export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type WanderGraph = {
  // How many memories a walk may start from, and the i-th of them (a stable order).
  count: number;
  at(index: number): number;
  retrievability(id: number): number;
  // Active neighbours over edges of either direction, with weights, in a stable order.
  neighbours(id: number): Array<{ to: number; weight: number }>;
  // Overdue memories, in a stable order.
  overdue: number[];
};

export type WanderStep = { id: number; via: 'start' | 'edge' | 'jump' | 'restart' };

export type WanderOptions = {
  steps: number; // memories on the path, the start included
  jumpRate: number; // chance to jump to an overdue memory from a well-remembered one
  wellRemembered?: number; // retrievability above which a jump may happen (default 0.7)
  rng: Rng;
};

export const WANDER_DEFAULTS = { steps: 5, jumpRate: 0.4, wellRemembered: 0.7 } as const;

/** One walk. Never visits a memory twice; stops early when the graph runs out. */
export function walk(g: WanderGraph, o: WanderOptions): WanderStep[] {
  const path: WanderStep[] = [];
  if (!g.count || o.steps < 1) return path;
  const seen = new Set<number>();
  const push = (id: number, via: WanderStep['via']) => {
    seen.add(id);
    path.push({ id, via });
  };
  const pickFresh = (): number | null => {
    // A few tries at a random unvisited memory, then the first unvisited one from a random place.
    for (let k = 0; k < 8; k++) {
      const id = g.at(Math.floor(o.rng() * g.count));
      if (!seen.has(id)) return id;
    }
    if (seen.size >= g.count) return null;
    const from = Math.floor(o.rng() * g.count);
    for (let k = 0; k < g.count; k++) {
      const id = g.at((from + k) % g.count);
      if (!seen.has(id)) return id;
    }
    return null;
  };
  const first = pickFresh();
  if (first === null) return path;
  push(first, 'start');
  const threshold = o.wellRemembered ?? WANDER_DEFAULTS.wellRemembered;
  while (path.length < o.steps) {
    const cur = path[path.length - 1].id;
    const overdue = g.overdue.filter((id) => !seen.has(id));
    // The one decision the jump rate governs: from a well-remembered memory, with somewhere overdue to go.
    if (overdue.length && g.retrievability(cur) > threshold && o.rng() < o.jumpRate) {
      push(overdue[Math.floor(o.rng() * overdue.length)], 'jump');
      continue;
    }
    const next = g.neighbours(cur).filter((n) => !seen.has(n.to) && n.weight > 0);
    if (next.length) {
      const total = next.reduce((s, n) => s + n.weight, 0);
      let x = o.rng() * total;
      let pick = next[next.length - 1].to;
      for (const n of next) {
        x -= n.weight;
        if (x < 0) {
          pick = n.to;
          break;
        }
      }
      push(pick, 'edge');
      continue;
    }
    const fresh = pickFresh();
    if (fresh === null) break;
    push(fresh, 'restart');
  }
  return path;
}
