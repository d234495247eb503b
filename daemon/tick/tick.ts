// `nightshift tick`: what the timer fires. Dispatch picks the agent; the rest is the session path.
import { loadAgents } from '../config/agents.js';
import type { Config } from '../config/schema.js';
import { explain } from '../schedule/explain.js';
import { dreamDue } from './dream-tick.js';
import { supervise } from './supervise.js';
import type { RunDeps, SuperviseResult } from './types.js';

export type TickResult = Omit<SuperviseResult, 'limit'>;

export async function tick(config: Config, deps: RunDeps): Promise<TickResult> {
  const agents = loadAgents(config);
  const byName = new Map(agents.map((a) => [a.name, a]));
  deps.logger.info({ event: 'tick_start' }, 'tick');
  const r = await supervise(
    config,
    async (ledger, now) => {
      const d = explain(config, agents, ledger, now);
      if (d.agent) return { agent: byName.get(d.agent)!, reason: d.reason };
      // Nothing due: a session always wins, so only now may the memory's pressure ask for a dream.
      const dream = await dreamDue(config, deps, now);
      return dream ? { dream } : { skip: d.reason };
    },
    { force: false },
    deps,
  );
  const { limit: _limit, ...rest } = r;
  return rest;
}
