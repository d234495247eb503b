// `nightshift tick`: what the timer fires. Dispatch picks the agent; the rest is the session path.
import path from 'node:path';
import pino from 'pino';
import { dayOf } from '../../budget/day.js';
import type { Hold } from '../../budget/holds.js';
import { currentHolds } from '../schedule/holds.js';
import type { Ledger } from '../../budget/ledger.js';
import { loadAgents, type Agent } from '../config/agents.js';
import type { Config } from '../config/config.js';
import { decide, type Decision } from '../schedule/dispatch.js';
import { dreamDue } from './dream-tick.js';
import { VaultGit } from '../git/git-sync.js';
import { lockOwner } from '../lock.js';
import { supervise, type RunDeps, type SuperviseResult } from './run.js';
import { toRecord } from './session-record.js';
import { budgetReport } from './budget-report.js';

export function explain(config: Config, agents: Agent[], ledger: Ledger, at: Date): Decision & { holds: Record<string, Hold> } {
  const limits = Object.fromEntries(agents.map((a) => [a.name, { maxRunsPerDay: a.maxRunsPerDay }]));
  const holds = currentHolds(config, ledger, at);
  return { ...decide(at, config.budget.timezone, config.dispatch, ledger.history(dayOf(at, config.budget.timezone)), limits, holds), holds };
}

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

// `nightshift status --json`: one look at the host.
export async function status(config: Config, ledger: Ledger, at: Date) {
  const agents = loadAgents(config);
  const git = config.git.enabled ? new VaultGit(config, pino({ enabled: false })) : null;
  const unpushed = git ? await git.unpushedCount() : null;
  return {
    budget: budgetReport(config, ledger, dayOf(at, config.budget.timezone)),
    last_sessions: ledger.recent(5).map(toRecord),
    next: explain(config, agents, ledger, at),
    holds: currentHolds(config, ledger, at),
    locks: { run: lockOwner(path.join(config.state_dir, 'run')), git: lockOwner(config.git.lock_file) },
    unpushed,
    last_ok_at: ledger.lastOkAt(),
  };
}



