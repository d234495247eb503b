// `nightshift tick`: what the timer fires. Its fire row is written first (./fire-record.ts), then
// dispatch picks the agent and the rest is the session path; the fire is settled with what the tick
// did and the exit code it ends with.
import { mark } from '../../core/profile.js';
import { readAgentsCached } from '../../config/agent-file.js';
import type { Config } from '../../config/schema.js';
import type { FireTrigger, PassedOver } from '../../budget/fires.js';
import { explain } from '../schedule/explain.js';
import { dreamDue } from './dream-tick.js';
import { ping } from '../../report/ping.js';
import { exitCodeForError, FireRecord, triggerOf } from './fire-record.js';
import { dispatchPassedOver } from './fire-words.js';
import { exitCodeOf, supervise } from './supervise.js';
import type { RunDeps, SuperviseResult } from './types.js';

// exit_code: what the tick exits with (the fire's record); fire: its row's id (null: unwritable).
export type TickResult = Omit<SuperviseResult, 'limit'> & { exit_code: number; fire: number | null; passed_over: PassedOver[] };

// The dead-man's ping (monitor.ping_url) around the tick: /start now, not awaited, and success or
// /fail at the end, bounded by monitor.ping_timeout; it never changes the tick's result.
export async function tick(config: Config, deps: RunDeps, trigger: FireTrigger = triggerOf(deps.env, false)): Promise<TickResult> {
  const url = config.monitor.ping_url;
  const pingDeps = { fetch: deps.fetch ?? fetch, logger: deps.logger, timeoutMs: config.monitor.ping_timeout };
  const started = ping(url, 'start', null, pingDeps);
  let r: TickResult;
  try {
    r = await tickOnce(config, deps, trigger);
  } catch (err) {
    await Promise.all([started, ping(url, 'fail', deps.redact(`tick failed: ${(err as Error).message}`), pingDeps)]);
    throw err;
  }
  const failed = r.exit_code !== 0;
  const why = r.session ? `${r.session.agent}: ${r.session.outcome}${r.session.error ? `: ${r.session.error}` : ''}` : r.reason;
  await Promise.all([started, ping(url, failed ? 'fail' : 'success', deps.redact(`${r.action}: ${why ?? ''}`), pingDeps)]);
  return r;
}

async function tickOnce(config: Config, deps: RunDeps, trigger: FireTrigger): Promise<TickResult> {
  mark('tick');
  const { agents, broken } = await readAgentsCached(config);
  mark('agents_read');
  const byName = new Map(agents.map((a) => [a.name, a]));
  deps.logger.info({ event: 'tick_start', trigger }, 'tick');
  const fire = FireRecord.begin(config, { kind: 'tick', trigger, slot: deps.slot ?? null }, deps);
  // A broken agent file is skipped and said, each tick: the other agents still run (a due rule
  // passed over for it makes the tick exit 78, see ./fire-words.ts).
  mark('fire_begun');
  for (const b of broken) deps.logger.error({ event: 'agent_invalid', agent: b.name, file: b.file, problems: b.problems }, `Invalid agent file ${b.file}: ${b.problems.join('; ')} (skipped; the other agents run)`);
  let dispatch: PassedOver[] = [];
  try {
    const r = await supervise(
      config,
      async (ledger, now) => {
        const d = explain(config, agents, ledger, now, broken);
        dispatch = dispatchPassedOver(d.rules);
        for (const p of dispatch.filter((x) => x.cause === 'invalid')) {
          deps.logger.error({ event: 'due_rule_invalid', agent: p.agent, rule: p.rule, why: p.why }, `rule ${p.rule} (${p.agent}) is due and passed over: ${p.why}`);
        }
        if (d.agent) {
          fire.choose(d.agent, d.rule);
          return { agent: byName.get(d.agent)!, reason: d.reason };
        }
        // Nothing due: a session always wins, so only now may the memory's pressure ask for a dream.
        const dream = await dreamDue(config, deps, now);
        return dream ? { dream } : { skip: d.reason };
      },
      { force: false },
      { ...deps, onCharged: (id) => fire.charge(id) },
    );
    const settled = fire.settle({
      dispatch,
      result: {
        action: r.action, reason: r.reason, limit: r.limit, exit: exitCodeOf(r),
        session: r.session ? { id: r.session.id, outcome: r.session.outcome } : null,
        dream: r.dream ? { id: r.dream.id, ok: r.dream.ok } : null,
      },
    });
    mark('fire_settled');
    const { limit: _limit, ...rest } = r;
    return { ...rest, exit_code: settled.exit, fire: fire.id, passed_over: settled.passed_over };
  } catch (err) {
    fire.settle({ dispatch, error: { message: deps.redact((err as Error)?.message ?? String(err)), exitCode: exitCodeForError(err) } });
    throw err;
  }
}
