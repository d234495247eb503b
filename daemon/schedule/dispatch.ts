// Pure dispatch: (now in the budget's time zone, today's ledger, the rules and agents) -> which
// agent runs now, and for every rule before the winner, why not.
import { isUtc } from '../../config/day.js';
import type { Hold } from '../../budget/holds.js';
import { DAY_NAMES } from '../../config/schedule-spec.js';

export type Rule = { agent: string; days?: number[]; hours?: number[]; min_interval?: number; max_runs_per_day?: number };
export type AgentHistory = { today: number; lastStartedAt: Date | null };

// Pure: this host's history of each agent beside the fleet's (every host's, this one's too): the
// larger count of today's sessions and the later start, so a rule's max_runs_per_day and
// min_interval hold across hosts.
export function withFleetHistory(own: Record<string, AgentHistory>, fleet: Record<string, AgentHistory>): Record<string, AgentHistory> {
  const out: Record<string, AgentHistory> = { ...own };
  for (const [agent, f] of Object.entries(fleet)) {
    const o = out[agent];
    const last = [o?.lastStartedAt, f.lastStartedAt].filter((d): d is Date => d instanceof Date).sort((a, b) => b.getTime() - a.getTime())[0] ?? null;
    out[agent] = { today: Math.max(o?.today ?? 0, f.today), lastStartedAt: last };
  }
  return out;
}
// passed: the rule's own terms held and it was passed over all the same (a hold, an invalid file).
export type RuleVerdict = { index: number; agent: string; matched: boolean; why: string; passed?: 'held' | 'invalid' | 'busy' };
export type Decision = { agent: string | null; rule: number | null; reason: string; rules: RuleVerdict[] };

const parts = new Map<string, Intl.DateTimeFormat>();

// Weekday (0 = sun) and hour (0-23) of an instant in a time zone.
export function localTime(at: Date, timezone: string): { day: number; hour: number } {
  if (isUtc(timezone)) return { day: at.getUTCDay(), hour: at.getUTCHours() };
  let f = parts.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, weekday: 'short', hour: 'numeric', hourCycle: 'h23' });
    parts.set(timezone, f);
  }
  let day = 0;
  let hour = 0;
  for (const p of f.formatToParts(at)) {
    if (p.type === 'weekday') day = DAY_NAMES.indexOf(p.value.toLowerCase().slice(0, 3) as (typeof DAY_NAMES)[number]);
    if (p.type === 'hour') hour = Number(p.value) % 24;
  }
  return { day, hour };
}

const list = (xs: number[], names?: readonly string[]) => xs.map((x) => (names ? names[x] : String(x))).join(',');

export function decide(
  now: Date,
  timezone: string,
  rules: Rule[],
  history: Record<string, AgentHistory>,
  agentLimits: Record<string, { maxRunsPerDay: number | null }>,
  // Agents that wait (a rate limit or a backoff, budget/holds.ts): skipped, with the reason.
  holds: Record<string, Hold> = {},
  // Agents whose file does not validate: their rules are passed over, with the reason.
  broken: Record<string, string> = {},
  // Agents that cannot start now beside the sessions running (one per agent, one per vault): why.
  busy: Record<string, string> = {},
): Decision {
  const { day, hour } = localTime(now, timezone);
  const verdicts: RuleVerdict[] = [];
  for (const [index, r] of rules.entries()) {
    const h = history[r.agent] ?? { today: 0, lastStartedAt: null };
    const invalid = broken[r.agent];
    // An invalid file has no limits of its own to read: the rule's terms alone decide if it was due.
    const not = whyNot(r, day, hour, h, invalid !== undefined ? null : agentLimits[r.agent]?.maxRunsPerDay ?? null, now);
    if (invalid !== undefined) {
      // Due but for its file: passed over, and the tick exits 78 so OnFailure= fires.
      verdicts.push(not === null
        ? { index, agent: r.agent, matched: false, why: `the agent file is invalid: ${invalid} (due now: the tick passes it over and exits 78)`, passed: 'invalid' }
        : { index, agent: r.agent, matched: false, why: `${not}; the agent file is invalid: ${invalid}` });
      continue;
    }
    const occupied = not === null && busy[r.agent] !== undefined ? `due, but ${busy[r.agent]}` : null;
    const held = not === null && !occupied ? heldWhy(holds[r.agent]) : null;
    const why = not ?? occupied ?? held;
    verdicts.push({ index, agent: r.agent, matched: why === null, why: why ?? 'due', ...(occupied ? { passed: 'busy' as const } : held ? { passed: 'held' as const } : {}) });
    if (why === null) {
      return { agent: r.agent, rule: index, reason: `rule ${index} (${r.agent}) is due`, rules: verdicts };
    }
  }
  // A rule due but for its agent's hold or file: the skip names the hold and its end, or the file.
  const held = verdicts.filter((v) => v.passed).map((v) => (v.passed === 'held' || v.passed === 'busy' ? `rule ${v.index} (${v.agent}) is ${v.why}` : `rule ${v.index} (${v.agent}) is passed over: ${v.why}`));
  const none = held.length ? `no rule is due: ${[...new Set(held)].join('; ')}` : 'no rule is due';
  return { agent: null, rule: null, reason: rules.length ? none : 'no dispatch rules configured', rules: verdicts };
}

const heldWhy = (h: Hold | undefined) => (h ? `held until ${h.until}: ${h.reason}` : null);

export function whyNot(r: Rule, day: number, hour: number, h: AgentHistory, agentMax: number | null, now: Date): string | null {
  if (r.days && !r.days.includes(day)) return `not on ${DAY_NAMES[day]} (days: ${list(r.days, DAY_NAMES)})`;
  if (r.hours && !r.hours.includes(hour)) return `not at hour ${hour} (hours: ${list(r.hours)})`;
  const max = r.max_runs_per_day ?? agentMax;
  if (max !== null && max !== undefined && h.today >= max) return `ran ${h.today} of max_runs_per_day ${max} today (every session started counts, a failed one too)`;
  if (r.min_interval && h.lastStartedAt) {
    const since = now.getTime() - h.lastStartedAt.getTime();
    if (since < r.min_interval) return `last session began ${Math.floor(since / 60_000)}m ago (min_interval ${Math.round(r.min_interval / 60_000)}m)`;
  }
  return null;
}
