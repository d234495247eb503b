// When each dispatch rule, and so each agent, is next due: the first moment from now on (now, then
// each hour's start, for eight days) at which the rule's days, hours, run limits and min_interval
// all hold. Pure. A later day starts with no runs counted; min_interval counts from the last start.
import { dayOf } from '../../budget/day.js';
import { localTime, whyNot, type AgentHistory, type Rule } from './dispatch.js';

const HOUR = 3_600_000;
const HORIZON_HOURS = 8 * 24;

export function nextDue(rule: Rule, history: AgentHistory | undefined, agentMax: number | null, now: Date, timezone: string): Date | null {
  const h = history ?? { today: 0, lastStartedAt: null };
  const today = dayOf(now, timezone);
  const candidates = [now];
  const first = Math.floor(now.getTime() / HOUR) * HOUR + HOUR;
  for (let i = 0; i < HORIZON_HOURS; i++) candidates.push(new Date(first + i * HOUR));
  // min_interval may end inside an hour: that moment is a candidate too.
  if (rule.min_interval && h.lastStartedAt) {
    const free = new Date(h.lastStartedAt.getTime() + rule.min_interval);
    if (free > now) candidates.push(free);
  }
  candidates.sort((a, b) => a.getTime() - b.getTime());
  for (const at of candidates) {
    const { day, hour } = localTime(at, timezone);
    const seen = dayOf(at, timezone) === today ? h : { ...h, today: 0 };
    if (whyNot(rule, day, hour, seen, agentMax, at) === null) return at;
  }
  return null;
}

// Pure: per agent, the earliest next due time over its rules (null: no rule of it is due within 8 days).
export function nextDueByAgent(
  rules: Rule[], history: Record<string, AgentHistory>, limits: Record<string, { maxRunsPerDay: number | null }>, now: Date, timezone: string,
): { rules: Array<Date | null>; agents: Record<string, Date | null> } {
  const perRule = rules.map((r) => nextDue(r, history[r.agent], limits[r.agent]?.maxRunsPerDay ?? null, now, timezone));
  const agents: Record<string, Date | null> = {};
  rules.forEach((r, i) => {
    const t = perRule[i];
    const prev = agents[r.agent];
    agents[r.agent] = prev === undefined ? t : prev === null ? t : t === null ? prev : t < prev ? t : prev;
  });
  return { rules: perRule, agents };
}
