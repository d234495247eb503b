// When a schedule can start a tick, as the week's (weekday, hour) slots in budget.timezone, and
// the dispatch rules that no such slot can ever satisfy. Pure: the timer's times come in as data
// (systemd-analyze lists them, daemon/schedule/calendar.ts), the daemon's cron expressions are read here.
import { DAY_NAMES } from '../../config/schedule-spec.js';
import { localTime } from './dispatch.js';

// slots[day][hour]: a tick can start then (day 0 = sun).
export type Slots = boolean[][];

const empty = (): Slots => Array.from({ length: 7 }, () => Array<boolean>(24).fill(false));

// The values one cron field allows, or null when it cannot be read (then nothing is claimed).
function cronField(field: string, min: number, max: number, names: readonly string[] = []): Set<number> | null {
  const out = new Set<number>();
  const value = (s: string) => {
    const i = names.indexOf(s.toLowerCase().slice(0, 3));
    if (i !== -1 && s.length >= 3) return i + (names.length === 12 ? 1 : 0);
    return /^\d+$/.test(s) ? Number(s) : NaN;
  };
  for (const part of field.split(',')) {
    const [range, stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) return null;
    let a: number;
    let b: number;
    if (range === '*' || range === '?') [a, b] = [min, max];
    else if (range.includes('-')) [a, b] = range.split('-').map(value) as [number, number];
    else [a, b] = [value(range), stepText === undefined ? value(range) : max];
    if (!Number.isInteger(a) || !Number.isInteger(b) || a < min || b > max || a > b) return null;
    for (let i = a; i <= b; i += step) out.add(i);
  }
  return out;
}

// The slots of one cron expression (node-cron's 5 or 6 fields, in budget.timezone); null when unreadable.
export function cronSlots(expr: string): Slots | null {
  const f = expr.trim().split(/\s+/);
  if (f.length !== 5 && f.length !== 6) return null;
  const [, hour, dom, month, dow] = f.length === 6 ? f.slice(1) : f;
  const hours = cronField(hour, 0, 23);
  const dows = cronField(dow, 0, 7, DAY_NAMES);
  if (!hours || !dows || !cronField(dom, 1, 31) || !cronField(month, 1, 12, ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'])) return null;
  // A restricted day of month falls on every weekday in time, so only a weekday list narrows days.
  const days = dom !== '*' && dom !== '?' ? [0, 1, 2, 3, 4, 5, 6] : [...dows].map((d) => d % 7);
  const s = empty();
  for (const d of days) for (const h of hours) s[d][h] = true;
  return s;
}

// The slots of a list of instants (a timer's next elapses), read in the budget's time zone.
export function timeSlots(times: Date[], timezone: string): Slots {
  const s = empty();
  for (const t of times) {
    const { day, hour } = localTime(t, timezone);
    s[day][hour] = true;
  }
  return s;
}

export function mergeSlots(list: Slots[]): Slots {
  const s = empty();
  for (const x of list) for (let d = 0; d < 7; d++) for (let h = 0; h < 24; h++) s[d][h] ||= x[d][h];
  return s;
}

type RuleTimes = { agent: string; days?: number[]; hours?: number[] };

// Pure: the index of every rule whose days and hours meet no slot of the schedule.
export function unreachable(rules: RuleTimes[], slots: Slots): number[] {
  const out: number[] = [];
  rules.forEach((r, i) => {
    const days = r.days ?? [0, 1, 2, 3, 4, 5, 6];
    const hours = r.hours ?? Array.from({ length: 24 }, (_, h) => h);
    if (!days.some((d) => hours.some((h) => slots[d][h]))) out.push(i);
  });
  return out;
}

// The hours a schedule fires on the rule's days, for the message ("fires at 0,6,12,18").
export function slotHours(slots: Slots, days?: number[]): number[] {
  const ds = days ?? [0, 1, 2, 3, 4, 5, 6];
  return Array.from({ length: 24 }, (_, h) => h).filter((h) => ds.some((d) => slots[d][h]));
}
