// Dispatch over the ledger: which agent is due now and why each rule before it was not, with the
// holds that kept any back. Shared by the tick, `next` and `status`.
import { dayOf } from '../../budget/day.js';
import type { Hold } from '../../budget/holds.js';
import type { Ledger } from '../../budget/ledger.js';
import type { Agent, BrokenAgent } from '../config/agents.js';
import type { Config } from '../config/schema.js';
import { decide, type Decision } from './dispatch.js';
import { currentHolds } from './holds.js';

export function explain(config: Config, agents: Agent[], ledger: Ledger, at: Date, broken: BrokenAgent[] = []): Decision & { holds: Record<string, Hold> } {
  const limits = Object.fromEntries(agents.map((a) => [a.name, { maxRunsPerDay: a.maxRunsPerDay }]));
  const holds = currentHolds(config, ledger, at);
  const invalid = Object.fromEntries(broken.map((b) => [b.name, `${b.file}: ${b.problems[0] ?? 'invalid'}`]));
  return { ...decide(at, config.budget.timezone, config.dispatch, ledger.history(dayOf(at, config.budget.timezone)), limits, holds, invalid), holds };
}
