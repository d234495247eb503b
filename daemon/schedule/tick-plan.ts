// Pure: what one tick does beside other sessions (sessions.max_concurrent): the due agents in
// dispatch order, each the one decide() would choose with those before it taken; the first `free`
// start, the rest wait (no slot, or a vault shared where sessions take turns). `next` says it; a
// tick at capacity records a fire row for each that waits.
import type { Decision } from './dispatch.js';

export type TickPlan = {
  start: Array<{ agent: string; rule: number | null }>;
  wait: Array<{ agent: string; rule: number | null; why: string }>;
};

// decideWith: dispatch with these agents taken (their reason); free: slots free; turnsWith: the
// agent started this tick whose vault this one would share where sessions take turns, else null.
export function tickPlan(decideWith: (taken: Record<string, string>) => Decision, free: number, o: { limit: number; turnsWith?: (agent: string, started: string[]) => string | null }): TickPlan {
  const plan: TickPlan = { start: [], wait: [] };
  const taken: Record<string, string> = {};
  for (let i = 0; i < 1000; i++) {
    const d = decideWith(taken);
    if (!d.agent) break;
    taken[d.agent] = 'taken by this tick';
    const started = plan.start.map((s) => s.agent);
    const turn = o.turnsWith?.(d.agent, started) ?? null;
    if (plan.start.length >= free) plan.wait.push({ agent: d.agent, rule: d.rule, why: `at capacity: sessions.max_concurrent ${o.limit}` });
    else if (turn) plan.wait.push({ agent: d.agent, rule: d.rule, why: `its vault is shared with ${turn}, which starts first: sessions sharing a vault without git take turns` });
    else plan.start.push({ agent: d.agent, rule: d.rule });
  }
  return plan;
}
