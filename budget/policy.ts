import { money } from './money.js';

// Pure: may this agent start now, given today's ledger and the limits?
export type DayTotals = { sessions: number; costUsd: number; byAgent: Record<string, { sessions: number; costUsd: number }> };
export type Limits = { maxSessionsPerDay: number; maxUsdPerDay: number; maxRunsPerDay: number | null };
export type Verdict = { ok: true } | { ok: false; limit: 'max_sessions_per_day' | 'max_usd_per_day' | 'max_runs_per_day'; reason: string };

export function canStart(agent: string, today: DayTotals, limits: Limits): Verdict {
  if (today.sessions >= limits.maxSessionsPerDay) {
    return { ok: false, limit: 'max_sessions_per_day', reason: `budget.max_sessions_per_day reached: ${today.sessions} of ${limits.maxSessionsPerDay} sessions today` };
  }
  if (today.costUsd >= limits.maxUsdPerDay) {
    return { ok: false, limit: 'max_usd_per_day', reason: `budget.max_usd_per_day reached: ${money(today.costUsd)} of ${money(limits.maxUsdPerDay)} spent today` };
  }
  const mine = today.byAgent[agent]?.sessions ?? 0;
  if (limits.maxRunsPerDay !== null && mine >= limits.maxRunsPerDay) {
    return { ok: false, limit: 'max_runs_per_day', reason: `${agent}: max_runs_per_day reached: ${mine} of ${limits.maxRunsPerDay} runs today` };
  }
  return { ok: true };
}
