// `budget --json`: the shape other tools read. cost_usd is the meter's spend (what the API
// served, priced by our table); reserved_usd what running sessions still hold of the day.
import type { Ledger } from '../../budget/ledger.js';
import { roundUsd } from '../../core/money.js';
import type { Config } from '../../config/schema.js';

export function budgetReport(config: Config, ledger: Ledger, date: string) {
  const t = ledger.dayTotals(date);
  const by_agent: Record<string, { sessions: number; cost_usd: number }> = {};
  for (const [name, v] of Object.entries(t.byAgent)) by_agent[name] = { sessions: v.sessions, cost_usd: roundUsd(v.costUsd) };
  return {
    date, sessions: t.sessions, max_sessions: config.budget.max_sessions_per_day, cost_usd: roundUsd(t.costUsd), reserved_usd: roundUsd(t.reservedUsd),
    left_usd: roundUsd(Math.max(0, config.budget.max_usd_per_day - t.costUsd - t.reservedUsd)), max_usd: config.budget.max_usd_per_day,
    max_usd_per_session: config.budget.max_usd_per_session, min_session_usd: Math.min(config.budget.min_session_usd, config.budget.max_usd_per_session), by_agent,
  };
}
