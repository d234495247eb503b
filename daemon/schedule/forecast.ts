// What the ticks will really do: the tick's own steps (dispatch over the rules and holds, then the
// day's budget and a usage window for the agent chosen) played forward over plain data, each start
// counted as the next tick would see it. So an agent whose rule an earlier, always-due rule shadows,
// a held agent and a day whose cap is reached get the time they will really run, or why not. Pure;
// `next` and `status` show it. The ticks are the timer's own elapses (daemon/schedule/timer-ticks.ts
// reads them from the installed nightshift.timer), never assumed: a hold or a min_interval that ends
// between two ticks is seen by the tick after. Each start is assumed to end ok and to spend nothing
// more than what the ledger holds.
import { dayOf } from '../../config/day.js';
import type { Hold } from '../../budget/holds.js';
import { canStart, type DayTotals, type Limits } from '../../budget/policy.js';
import { windowHold, type UsageWindow } from '../../budget/windows.js';
import { decide, localTime, whyNot, type AgentHistory, type Decision, type Rule } from './dispatch.js';
import { slotHours, timeSlots, unreachable } from './fire-slots.js';

const HOUR = 3_600_000;
export const HORIZON_MS = 8 * 24 * HOUR;

// Pure: the hour starts from `from` (itself when on the hour) to the horizon: the default timer
// (OnCalendar=hourly) where systemd-analyze cannot say when it fires.
export function hourlyTicks(from: Date, horizonMs = HORIZON_MS): Date[] {
  const out: Date[] = [];
  for (let t = Math.ceil(from.getTime() / HOUR) * HOUR; t < from.getTime() + horizonMs; t += HOUR) out.push(new Date(t));
  return out;
}

export type ForecastInput = {
  now: Date;
  // When the timer fires from `now` on (the first may be `now` itself): only these ticks run.
  ticks: Date[];
  timezone: string;
  rules: Rule[];
  // Today's (the budget day of `now`).
  history: Record<string, AgentHistory>;
  limits: Record<string, { maxRunsPerDay: number | null }>;
  holds: Record<string, Hold>;
  broken: Record<string, string>;
  today: DayTotals;
  budget: Omit<Limits, 'maxRunsPerDay'>;
  windows: UsageWindow[];
  windowLimit: number;
};

// One tick: whom dispatch chooses, and whether that agent starts.
export type TickVerdict = { agent: string | null; rule: number | null; starts: boolean; reason: string; decision: Decision };

export type Forecast = {
  // The first tick from `now` (null: the timer fires none within 8 days; then the verdict is
  // dispatch's at `now`, and nothing starts).
  tickAt: Date | null;
  tick: TickVerdict;
  // When each rule's agent, and each agent, first starts (null: not within 8 days).
  rules: Array<Date | null>;
  agents: Record<string, Date | null>;
  // For an agent that never starts within 8 days, the first reason a tick passed it over.
  why: Record<string, string>;
  // For an agent that starts, the first reason a tick before that passed it over, beyond its own
  // days and hours (its max_runs_per_day used up, a min_interval, a hold, the day's budget, a
  // usage window, an earlier rule): why it does not run sooner.
  waits: Record<string, string>;
};

type Sim = { history: Record<string, AgentHistory>; totals: DayTotals };

// Pure: one tick at `t` over the simulated day.
export function tickAt(i: ForecastInput, s: Sim, t: Date): TickVerdict {
  const holds = Object.fromEntries(Object.entries(i.holds).filter(([, h]) => Date.parse(h.until) > t.getTime()));
  const decision = decide(t, i.timezone, i.rules, s.history, i.limits, holds, i.broken);
  if (!decision.agent) return { agent: null, rule: null, starts: false, reason: decision.reason, decision };
  const v = canStart(decision.agent, s.totals, { ...i.budget, maxRunsPerDay: i.limits[decision.agent]?.maxRunsPerDay ?? null });
  const w = v.ok ? windowHold(i.windows, i.windowLimit, t) : null;
  const blocked = !v.ok ? v.reason : w ? w.reason : null;
  if (blocked) return { agent: decision.agent, rule: decision.rule, starts: false, reason: `${decision.reason}, but nothing starts: ${blocked}`, decision };
  return { agent: decision.agent, rule: decision.rule, starts: true, reason: decision.reason, decision };
}

const emptyTotals = (): DayTotals => ({ sessions: 0, costUsd: 0, reservedUsd: 0, byAgent: {} });

// Why a rule the tick did not start passed over its agent at `t`, when its own terms held.
function passedOver(i: ForecastInput, s: Sim, t: Date, v: TickVerdict, index: number): string | null {
  const r = i.rules[index];
  if (v.rule === index) return v.starts ? null : v.reason.replace(/^.*, but nothing starts: /, '');
  const seen = v.decision.rules.find((x) => x.index === index);
  if (seen) return seen.why === 'due' ? null : /^(held until|the agent file is invalid)/.test(seen.why) ? seen.why : null;
  // After the winner: never looked at. Due on its own terms, it is shadowed.
  const { day, hour } = localTime(t, i.timezone);
  const due = whyNot(r, day, hour, s.history[r.agent] ?? { today: 0, lastStartedAt: null }, i.limits[r.agent]?.maxRunsPerDay ?? null, t) === null;
  return due && v.rule !== null ? `shadowed: rule [${v.rule}] ${i.rules[v.rule].agent} is due first at every tick` : null;
}

// Why a rule's agent waited at `t`: passedOver's reasons, and its own limits (max_runs_per_day,
// min_interval), not its days and hours (the rhythm the rule asks for).
function waitedOn(i: ForecastInput, s: Sim, t: Date, v: TickVerdict, index: number): string | null {
  const rhythm = (why: string) => /^not (on|at) /.test(why);
  const over = passedOver(i, s, t, v, index);
  if (over) return over;
  const r = i.rules[index];
  const seen = v.decision.rules.find((x) => x.index === index);
  if (seen) return seen.why === 'due' || rhythm(seen.why) ? null : seen.why;
  if (v.rule === index) return null;
  const { day, hour } = localTime(t, i.timezone);
  const why = whyNot(r, day, hour, s.history[r.agent] ?? { today: 0, lastStartedAt: null }, i.limits[r.agent]?.maxRunsPerDay ?? null, t);
  return why && !rhythm(why) ? why : null;
}

export function forecast(i: ForecastInput): Forecast {
  const start = i.now.getTime();
  const end = start + HORIZON_MS;
  const queue = [...new Set(i.ticks.map(Number).filter((t) => t >= start && t < end))].sort((a, b) => a - b);
  const s: Sim = { history: structuredClone(i.history), totals: structuredClone(i.today) };
  let day = dayOf(i.now, i.timezone);
  const rules: Array<Date | null> = i.rules.map(() => null);
  const agents: Record<string, Date | null> = Object.fromEntries(i.rules.map((r) => [r.agent, null]));
  const why: Record<string, string> = {};
  const waits: Record<string, string> = {};
  let tick: TickVerdict | null = null;
  for (const ms of queue) {
    const t = new Date(ms);
    const d = dayOf(t, i.timezone);
    if (d !== day) {
      day = d;
      s.totals = emptyTotals();
      for (const h of Object.values(s.history)) h.today = 0;
    }
    const v = tickAt(i, s, t);
    tick ??= v;
    i.rules.forEach((r, index) => {
      if (agents[r.agent] !== null || (v.starts && v.agent === r.agent)) return;
      const because = why[r.agent] === undefined ? passedOver(i, s, t, v, index) : null;
      if (because) why[r.agent] = because;
      const waited = waits[r.agent] === undefined ? waitedOn(i, s, t, v, index) : null;
      if (waited) waits[r.agent] = waited;
    });
    if (v.starts && v.agent !== null && v.rule !== null) {
      rules[v.rule] ??= t;
      agents[v.agent] ??= t;
      const h = s.history[v.agent] ?? { today: 0, lastStartedAt: null };
      s.history[v.agent] = { today: h.today + 1, lastStartedAt: t };
      s.totals.sessions++;
      const mine = s.totals.byAgent[v.agent] ?? { sessions: 0, costUsd: 0 };
      s.totals.byAgent[v.agent] = { ...mine, sessions: mine.sessions + 1 };
    }
    if (Object.values(agents).every((a) => a !== null)) break;
  }
  // A rule whose days and hours no tick meets: the timer's hours, said.
  const slots = timeSlots(queue.map((t) => new Date(t)), i.timezone);
  for (const index of unreachable(i.rules, slots)) {
    const r = i.rules[index];
    if (agents[r.agent] === null) why[r.agent] ??= `no tick falls in its hours: the timer fires at hours ${slotHours(slots, r.days).join(',') || 'none'} on its days (${i.timezone})`;
  }
  for (const a of Object.keys(agents)) if (agents[a] !== null) delete why[a];
  for (const a of Object.keys(waits)) if (agents[a] === null) delete waits[a];
  // No tick: the rules as they stand at `now`, and nothing starts.
  tick ??= { ...tickAt(i, { history: structuredClone(i.history), totals: structuredClone(i.today) }, i.now), agent: null, rule: null, starts: false, reason: 'the timer fires no tick within 8 days' };
  return { tickAt: queue.length ? new Date(queue[0]) : null, tick, rules, agents, why, waits };
}
