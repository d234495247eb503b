// When the ticks really come: the installed nightshift.timer's OnCalendar= (else the default
// hourly `systemd install` writes), expanded by systemd-analyze. The forecast's edge: it gets the
// times as data (./forecast.ts). Where systemd-analyze cannot say, hourly is assumed, and said.
import path from 'node:path';
import { installedTimer, UNIT_DIR } from '../systemd.js';
import { elapsesWithin, type CalendarCheck } from './calendar.js';
import { HORIZON_MS, hourlyTicks } from './forecast.js';
import { elapsesKept } from './elapses-kept.js';

export type TickCalendar = {
  // The specs the ticks come from, and whose: the installed timer's, or the default.
  on_calendar: string[];
  source: 'timer' | 'default';
  file: string;
  // Set when the times could not be had from systemd: why, and that hourly ticks were assumed.
  assumed: string | null;
};

// The ticks from `from` to the forecast's horizon, and the calendar they came from.
export function timerTicks(unitDir: string | undefined, from: Date, pathEnv: string | undefined): { ticks: Date[]; calendar: TickCalendar } {
  const calendar = tickCalendar(unitDir);
  return ticksOf(calendar, from, calendar.on_calendar.map((spec) => elapsesWithin(spec, from, HORIZON_MS, pathEnv)));
}

// The same without blocking, each spec's systemd-analyze at once, from the list kept in
// `stateDir` while it covers them (./elapses-kept.ts).
export async function timerTicksAsync(unitDir: string | undefined, from: Date, pathEnv: string | undefined, stateDir: string): Promise<{ ticks: Date[]; calendar: TickCalendar }> {
  const calendar = tickCalendar(unitDir);
  return ticksOf(calendar, from, await Promise.all(calendar.on_calendar.map((spec) => elapsesKept(spec, from, HORIZON_MS, pathEnv, stateDir))));
}

// The installed timer's calendar, else the default.
export function tickCalendar(unitDir: string | undefined): TickCalendar {
  const file = path.join(path.resolve(unitDir ?? UNIT_DIR), 'nightshift.timer');
  const timer = installedTimer(file);
  return timer?.specs.length ? { on_calendar: timer.specs, source: 'timer', file, assumed: null } : { on_calendar: ['hourly'], source: 'default', file, assumed: null };
}

// Pure: the ticks of each spec's answer, merged; the first that failed makes them hourly, said.
function ticksOf(calendar: TickCalendar, from: Date, answers: CalendarCheck[]): { ticks: Date[]; calendar: TickCalendar } {
  const ticks: Date[] = [];
  for (const [i, r] of answers.entries()) {
    if (r.ok !== true) {
      const why = r.ok === null ? r.error : `OnCalendar=${calendar.on_calendar[i]}: systemd-analyze refuses it: ${r.error}`;
      return { ticks: hourlyTicks(from), calendar: { ...calendar, assumed: `${why}: hourly ticks assumed` } };
    }
    ticks.push(...r.times);
  }
  return { ticks: [...new Set(ticks.map(Number))].sort((a, b) => a - b).map((t) => new Date(t)), calendar };
}

// How many of the timer's next ticks status, next and the page list.
export const NEXT_TICKS = 6;

// Pure: the first `n` ticks at or after `from`, as ISO times (the ticks come sorted).
export function nextTicks(ticks: Date[], from: Date, n = NEXT_TICKS): string[] {
  return ticks.filter((t) => t.getTime() >= from.getTime()).slice(0, n).map((t) => t.toISOString());
}

// One line for the terminal: where the ticks come from.
export function calendarLine(c: TickCalendar): string {
  const what = c.source === 'timer' ? `${c.file}: OnCalendar=${c.on_calendar.join(', ')}` : `OnCalendar=hourly, the default: no timer at ${c.file}`;
  return c.assumed ? `${what}; ${c.assumed}` : what;
}
