// `budget --json`: the shape other tools read.
import type { Ledger } from '../../budget/ledger.js';
import { roundUsd } from '../../budget/money.js';
import type { Config } from '../config/schema.js';

export function budgetReport(config: Config, ledger: Ledger, date: string) {
  const t = ledger.dayTotals(date);
  const by_agent: Record<string, { sessions: number; cost_usd: number }> = {};
  for (const [name, v] of Object.entries(t.byAgent)) by_agent[name] = { sessions: v.sessions, cost_usd: roundUsd(v.costUsd) };
  return { date, sessions: t.sessions, max_sessions: config.budget.max_sessions_per_day, cost_usd: roundUsd(t.costUsd), max_usd: config.budget.max_usd_per_day, by_agent };
}
