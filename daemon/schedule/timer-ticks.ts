// When the ticks really come: the installed nightshift.timer's OnCalendar= (else the default
// hourly `systemd install` writes), expanded by systemd-analyze. The forecast's edge: it gets the
// times as data (./forecast.ts). Where systemd-analyze cannot say, hourly is assumed, and said.
import path from 'node:path';
import { installedTimer, UNIT_DIR } from '../systemd.js';
import { elapsesWithin } from './calendar.js';
import { HORIZON_MS, hourlyTicks } from './forecast.js';

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
  const file = path.join(path.resolve(unitDir ?? UNIT_DIR), 'nightshift.timer');
  const timer = installedTimer(file);
  const calendar: TickCalendar = timer?.specs.length ? { on_calendar: timer.specs, source: 'timer', file, assumed: null } : { on_calendar: ['hourly'], source: 'default', file, assumed: null };
  const ticks: Date[] = [];
  for (const spec of calendar.on_calendar) {
    const r = elapsesWithin(spec, from, HORIZON_MS, pathEnv);
    if (r.ok !== true) {
      const why = r.ok === null ? r.error : `OnCalendar=${spec}: systemd-analyze refuses it: ${r.error}`;
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
