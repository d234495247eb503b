// The fires as the screens read them (`fires`, `status`): a site that has none yet has no file
// (nothing is made by a look), and a fire a dead supervisor left open is settled `crashed` first
// where the file is ours to write.
import fs from 'node:fs';
import { canWrite } from '../../core/file-access.js';
import { isAlive } from '../../core/process-tree.js';
import { Fires, firesFile, type FireRow } from '../../budget/fires.js';
import type { Config } from '../../config/schema.js';
import { tickGaps, type TickGaps } from '../schedule/tick-gaps.js';
import type { TickCalendar } from '../schedule/timer-ticks.js';

export function readFires(config: Config, f: { since?: Date; agent?: string; limit?: number }, now: Date): FireRow[] {
  const file = firesFile(config);
  if (!fs.existsSync(file)) return [];
  // Read-only; a dead supervisor's fire is settled only by a user who may write the file.
  let fires = Fires.look(file);
  try {
    if (fires.dead(isAlive).length && canWrite(file)) {
      fires.close();
      fires = Fires.open(file);
      fires.settleDead(isAlive, now);
    }
    return fires.list({ since: f.since?.toISOString(), agent: f.agent, limit: f.limit });
  } finally {
    fires.close();
  }
}

// The traces of these sessions' fires (show, the status page); none where there is no fires file.
export function sessionTraces(config: Config, sessions: string[]): Map<string, string> {
  const file = firesFile(config);
  if (!sessions.length || !fs.existsSync(file)) return new Map();
  const fires = Fires.look(file);
  try {
    return fires.traces(sessions);
  } finally {
    fires.close();
  }
}

// How far back status looks for ticks the timer left without a fire.
export const GAP_WINDOW_MS = 24 * 3_600_000;

export type TimerGaps = TickGaps & { from: Date; calendar: string[] };

// Where the gaps of the installed timer are looked for from: since it was installed (its file's
// time), at most `windowMs` (a day) back; null when no timer is installed (the daemon's schedule or
// hand ticks: nothing is expected) or its times cannot be had.
export function gapsFrom(now: Date, calendar: TickCalendar, windowMs = GAP_WINDOW_MS): Date | null {
  if (calendar.source !== 'timer' || calendar.assumed) return null;
  try {
    return new Date(Math.max(now.getTime() - windowMs, fs.statSync(calendar.file).mtimeMs));
  } catch {
    return null;
  }
}

// The gaps since gapsFrom. `past` gives the timer's elapses from an instant (timer-ticks.ts).
export function timerGaps(fires: FireRow[], now: Date, calendar: TickCalendar, past: (from: Date) => Date[], windowMs = GAP_WINDOW_MS): TimerGaps | null {
  const from = gapsFrom(now, calendar, windowMs);
  if (!from) return null;
  const expected = past(from).filter((t) => t.getTime() <= now.getTime());
  // A crashed fire's end is not known: it covers its own start only. An open one runs now.
  const ticks = fires.filter((x) => x.kind === 'tick').map((x) => ({ at: new Date(x.at), ended_at: x.action === 'crashed' ? new Date(x.at) : x.ended_at ? new Date(x.ended_at) : null }));
  return { ...tickGaps(expected, ticks, now), from, calendar: calendar.on_calendar };
}
