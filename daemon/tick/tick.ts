// `nightshift tick`: what the timer fires. Dispatch picks the agent; the rest is the session path.
import { readAgents } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { explain } from '../schedule/explain.js';
import { dreamDue } from './dream-tick.js';
import { exitCodeOf, supervise } from './supervise.js';
import { ping } from '../../report/ping.js';
import type { RunDeps, SuperviseResult } from './types.js';

export type TickResult = Omit<SuperviseResult, 'limit'>;

// The dead-man's ping (monitor.ping_url) around the tick: /start now, not awaited, and success or
// /fail at the end, bounded by monitor.ping_timeout; it never changes the tick's result.
export async function tick(config: Config, deps: RunDeps): Promise<TickResult> {
  const url = config.monitor.ping_url;
  const pingDeps = { fetch: deps.fetch ?? fetch, logger: deps.logger, timeoutMs: config.monitor.ping_timeout };
  const started = ping(url, 'start', null, pingDeps);
  let r: TickResult;
  try {
    r = await tickOnce(config, deps);
  } catch (err) {
    await Promise.all([started, ping(url, 'fail', deps.redact(`tick failed: ${(err as Error).message}`), pingDeps)]);
    throw err;
  }
  const failed = exitCodeOf(r) !== 0;
  const why = r.session ? `${r.session.agent}: ${r.session.outcome}${r.session.error ? `: ${r.session.error}` : ''}` : r.reason;
  await Promise.all([started, ping(url, failed ? 'fail' : 'success', deps.redact(`${r.action}: ${why ?? ''}`), pingDeps)]);
  return r;
}

async function tickOnce(config: Config, deps: RunDeps): Promise<TickResult> {
  const { agents, broken } = readAgents(config);
  const byName = new Map(agents.map((a) => [a.name, a]));
  deps.logger.info({ event: 'tick_start' }, 'tick');
  // A broken agent file is skipped and said, each tick: the other agents still run.
  for (const b of broken) deps.logger.error({ event: 'agent_invalid', agent: b.name, file: b.file, problems: b.problems }, `Invalid agent file ${b.file}: ${b.problems.join('; ')} (skipped; the other agents run)`);
  const r = await supervise(
    config,
    async (ledger, now) => {
      const d = explain(config, agents, ledger, now, broken);
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
