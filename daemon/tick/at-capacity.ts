// A tick that found every slot held (sessions.max_concurrent above 1): each agent it would have
// started gets a fire row of its own, settled `locked` with why it waits and when the next tick
// tries again, so a due agent left without a slot is never silent; with telemetry on each is a
// trace of its own (a fire span, `locked`), linked from its row. Read-only over the ledger; it
// never fails the tick (what it cannot write is logged).
import { Ledger, ledgerFile } from '../../budget/ledger.js';
import type { FireTrigger } from '../../budget/fires.js';
import type { Agent, BrokenAgent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { timerTicksAsync, nextTicks } from '../schedule/timer-ticks.js';
import { besidePlan } from './beside-plan.js';
import type { Telemetry } from '../../logs/telemetry.js';
import { FireRecord } from './fire-record.js';
import { beginFireSpan, settleTraced, type Traced } from './fire-trace.js';
import type { RunDeps } from './types.js';

export async function recordWaiting(config: Config, agents: Agent[], broken: BrokenAgent[], deps: RunDeps, start: { trigger: FireTrigger; slot: Date | null; why: string }, trace: { telemetry: Telemetry | null; traced: Traced } = { telemetry: null, traced: [] }): Promise<string[]> {
  const now = deps.now();
  let plan;
  const ledger = Ledger.look(ledgerFile(config));
  try {
    plan = besidePlan(config, agents, broken, ledger, now, 0);
  } finally {
    ledger.close();
  }
  if (!plan.waits.length) return [];
  const { ticks } = await timerTicksAsync(undefined, new Date(now.getTime() + 1000), deps.env.PATH, config.state_dir).catch(() => ({ ticks: [] as Date[] }));
  const next = nextTicks(ticks, now, 1)[0] ?? null;
  for (const w of plan.waits) {
    const begun = Date.now();
    const fire = FireRecord.begin(config, { kind: 'tick', trigger: start.trigger, slot: start.slot }, deps);
    const span = beginFireSpan(trace.telemetry, { kind: 'tick', trigger: start.trigger, fire: fire.id, atMs: begun });
    fire.choose(w.agent, w.rule);
    const reason = `${w.agent} is due and waits: ${start.why}; ${next ? `the next tick (${next}) tries again` : 'the next tick tries again'}`;
    await settleTraced(fire, { dispatch: [], result: { action: 'skip', reason, limit: 'lock', exit: 0, session: null, dream: null } }, { ...trace, span, logger: deps.logger, wait: deps.traceAtFire });
    deps.logger.info({ event: 'at_capacity', agent: w.agent, next_tick: next }, reason);
  }
  return plan.waits.map((w) => w.agent);
}
