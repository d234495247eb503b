import { money } from '../core/money.js';
import { reservationFor } from './reservation.js';

// Pure: may this agent start now, given today's ledger and the limits, and what does it reserve?
// costUsd: spent today (a running session's metered spend and the worst case of its call in
// flight); reservedUsd: what running sessions hold beyond that.
export type DayTotals = { sessions: number; costUsd: number; reservedUsd: number; byAgent: Record<string, { sessions: number; costUsd: number }> };

// Pure: the day's totals from its rows per agent (sessions, spent, held unspent), as the ledger
// and the fleet's database each sum them.
export function dayTotalsOf(rows: Array<{ agent: string; n: number; usd: number; reserved: number }>): DayTotals {
  const byAgent: DayTotals['byAgent'] = {};
  let sessions = 0;
  let costUsd = 0;
  let reservedUsd = 0;
  for (const r of rows) {
    byAgent[r.agent] = { sessions: r.n, costUsd: r.usd };
    sessions += r.n;
    costUsd += r.usd;
    reservedUsd += r.reserved;
  }
  return { sessions, costUsd, reservedUsd, byAgent };
}
export type Limits = { maxSessionsPerDay: number; maxUsdPerDay: number; maxUsdPerSession: number; minSessionUsd: number; maxRunsPerDay: number | null };
export type Verdict = { ok: true; reserveUsd: number } | { ok: false; limit: 'max_sessions_per_day' | 'max_usd_per_day' | 'max_runs_per_day'; reason: string };

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
  const r = reservationFor(today, limits);
  if (!r.ok) return r;
  return { ok: true, reserveUsd: r.usd };
}

// The charge's own decision, made inside the transaction that writes the charge (Ledger.open), from
// the totals it is added to: supervisors that start sessions at once (max_concurrent, a run by hand
// beside a tick) cannot together pass a daily limit; canStart before it only spares the work.
// `force`: past a daily limit it would meet, with the session's own ceiling.
export type Charge = { ok: true; usd: number } | Extract<Verdict, { ok: false }>;
export function chargeFor(agent: string, today: DayTotals, limits: Limits, force: boolean): Charge {
  const v = canStart(agent, today, limits);
  if (v.ok) return { ok: true, usd: v.reserveUsd };
  return force ? { ok: true, usd: limits.maxUsdPerSession } : v;
}

// Pure: the bounds on the day's totals within which a charge of `usd` passes every daily limit
// chargeFor checks: fewer sessions than the day's and the agent's limits, spent below the cap, and
// what is left of the cap after the day's spent and held, to a millionth of a dollar as
// reservationFor sums it, still `usd` or more. Each limit only tightens as the day's totals grow,
// so a charge decided before the day was read stands wherever its guard holds; the fleet checks
// the guard in the statement that writes the charge (budget/fleet-reservations.ts).
export type ChargeGuard = { sessionsBelow: number; agentRunsBelow: number | null; capUsd: number; usd: number };
export function chargeGuard(limits: Limits, usd: number): ChargeGuard {
  return { sessionsBelow: limits.maxSessionsPerDay, agentRunsBelow: limits.maxRunsPerDay, capUsd: limits.maxUsdPerDay, usd };
}

// The negative control for tests: the rule before reservations (start while spent < cap, and
// spend up to the ceiling). Never used by a session.
export function startsBeforeReservations(today: Pick<DayTotals, 'costUsd'>, limits: Pick<Limits, 'maxUsdPerDay' | 'maxUsdPerSession'>): number | null {
  return today.costUsd < limits.maxUsdPerDay ? limits.maxUsdPerSession : null;
}
