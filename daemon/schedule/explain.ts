// Dispatch over the ledger: which agent is due now and why each rule before it was not, with the
// holds that kept any back. Shared by the tick, `next` and `status`.
import { dayOf } from '../../config/day.js';
import type { Hold } from '../../budget/holds.js';
import type { Ledger } from '../../budget/ledger.js';
import type { Agent, BrokenAgent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { decide, withFleetHistory, type AgentHistory, type Decision } from './dispatch.js';
import { forecast, type Forecast } from './forecast.js';
import { currentHolds, type FleetHoldView } from './holds.js';

// Across a fleet: `fleetHolds`, the holds other hosts set and the sessions they ran (the tick's, once
// connected); `fleet`, every
// host's history of each agent (budget/fleet-reservations.ts fleetHistory), read beside the ledger's.
export function explain(config: Config, agents: Agent[], ledger: Ledger, at: Date, broken: BrokenAgent[] = [], busy: Record<string, string> = {}, fleetHolds: FleetHoldView = {}, fleet?: Record<string, AgentHistory>): Decision & { holds: Record<string, Hold> } {
  const limits = Object.fromEntries(agents.map((a) => [a.name, { maxRunsPerDay: a.maxRunsPerDay }]));
  const holds = currentHolds(config, ledger, at, fleetHolds);
  const invalid = Object.fromEntries(broken.map((b) => [b.name, `${b.file}: ${b.problems[0] ?? 'invalid'}`]));
  const own = ledger.history(dayOf(at, config.budget.timezone));
  return { ...decide(at, config.budget.timezone, config.dispatch, fleet ? withFleetHistory(own, fleet) : own, limits, holds, invalid, busy), holds };
}

// The forecast (./forecast.ts) over this install's ledger and the timer's ticks (./timer-ticks.ts):
// what the first tick from `at` will really do, and when each agent will really run.
export function forecastOf(config: Config, agents: Agent[], ledger: Ledger, at: Date, ticks: Date[], broken: BrokenAgent[] = []): Forecast & { holds: Record<string, Hold> } {
  const day = dayOf(at, config.budget.timezone);
  const holds = currentHolds(config, ledger, at);
  const b = config.budget;
  const f = forecast({
    now: at, ticks, timezone: b.timezone, rules: config.dispatch, history: ledger.history(day),
    limits: Object.fromEntries(agents.map((a) => [a.name, { maxRunsPerDay: a.maxRunsPerDay }])), holds,
    broken: Object.fromEntries(broken.map((x) => [x.name, `${x.file}: ${x.problems[0] ?? 'invalid'}`])),
    today: ledger.dayTotals(day), budget: { maxSessionsPerDay: b.max_sessions_per_day, maxUsdPerDay: b.max_usd_per_day, maxUsdPerSession: b.max_usd_per_session, minSessionUsd: b.min_session_usd },
    windows: ledger.windows(), windowLimit: b.max_window_utilization,
  });
  return { ...f, holds };
}
