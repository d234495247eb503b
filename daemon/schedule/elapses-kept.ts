// A timer's elapses as systemd-analyze last listed them, kept in state_dir/elapses.json: `status`
// waited on a systemd-analyze process every time (~10-25 ms of its ~80), for a list that changes
// only with the spec, the host's zone and systemd itself. One ask covers the day behind and two
// horizons ahead; a request inside that window is answered from the list, any other (or another
// spec, /etc/localtime, zone data or systemd-analyze) asks systemd again. A failed ask is never kept.
import fs from 'node:fs';
import path from 'node:path';
import { writeWhole } from '../../core/file-access.js';
import { elapsesWithinAsync, MAX_ELAPSES, type CalendarCheck } from './calendar.js';

export const ELAPSES_FILE = 'elapses.json';
const HOUR = 3_600_000;

// What systemd-analyze's answer depends on beyond the spec: the host's zone (it runs without TZ,
// in /etc/localtime's zone), the zone data, and the program itself.
export function elapsesSource(pathEnv: string | undefined, stat = (p: string) => fs.statSync(p)): string {
  const id = (p: string) => {
    try {
      const s = stat(p);
      return `${s.size}:${s.mtimeMs}`;
    } catch {
      return '-';
    }
  };
  let zone = '-';
  try {
    const real = fs.realpathSync('/etc/localtime');
    zone = `${real}:${id(real)}`;
  } catch {
    // no /etc/localtime: systemd reads UTC
  }
  const analyze = (pathEnv || '/usr/bin:/bin').split(':').map((d) => path.join(d || '.', 'systemd-analyze')).find((p) => id(p) !== '-');
  // A spec may name its own zone (`... Europe/Berlin`): the zone data as a whole, by its one file.
  return JSON.stringify([zone, id('/usr/share/zoneinfo/tzdata.zi'), analyze ?? null, analyze ? id(analyze) : null]);
}

// Every elapse of `spec` in [from, until), as systemd listed them (ms since the epoch).
export type KeptElapses = { spec: string; source: string; from: number; until: number; times: number[] };

// Pure: the kept list's answer for [from, from + horizonMs), or null when it does not cover it.
// systemd counts from the second `from` falls in, that second included (calendar.ts).
export function servedFrom(kept: KeptElapses | undefined, spec: string, source: string, from: Date, horizonMs: number): CalendarCheck | null {
  if (!kept || kept.spec !== spec || kept.source !== source || !Array.isArray(kept.times)) return null;
  const start = Math.ceil(from.getTime() / 1000) * 1000;
  const end = from.getTime() + horizonMs;
  if (start < kept.from || end > kept.until) return null;
  return { ok: true, times: kept.times.filter((t) => t >= start && t < end).map((t) => new Date(t)) };
}

function readKept(file: string): Record<string, KeptElapses> {
  try {
    const j = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (j && typeof j === 'object' && !Array.isArray(j)) return j;
  } catch {
    // none yet, or unreadable: ask systemd, and keep its answer
  }
  return {};
}

// The elapses of `spec` from `from` for `horizonMs`, from the kept list when it covers them.
export async function elapsesKept(spec: string, from: Date, horizonMs: number, pathEnv: string | undefined, stateDir: string): Promise<CalendarCheck> {
  const file = path.join(stateDir, ELAPSES_FILE);
  const source = elapsesSource(pathEnv);
  const all = readKept(file);
  const hit = servedFrom(Object.hasOwn(all, spec) ? all[spec] : undefined, spec, source, from, horizonMs);
  if (hit) return hit;
  // The day behind (where status looks for missed ticks) and two horizons ahead.
  const askFrom = new Date(Math.floor((from.getTime() - 25 * HOUR) / 1000) * 1000);
  const span = from.getTime() + 2 * horizonMs - askFrom.getTime();
  const r = await elapsesWithinAsync(spec, askFrom, span, pathEnv);
  if (r.ok !== true) return r;
  // A list cut at calendar.ts's most elapses (a timer denser than it asks for) is known only to its
  // last elapse.
  const times = r.times.map(Number);
  const until = times.length >= MAX_ELAPSES ? times[times.length - 1] : askFrom.getTime() + span;
  const entry: KeptElapses = { spec, source, from: askFrom.getTime(), until, times };
  // Read again, the other specs' lists as kept now (each spec of a timer asks at once).
  const now = readKept(file);
  now[spec] = entry;
  writeWhole(file, JSON.stringify(now), 0o644);
  return servedFrom(entry, spec, source, from, horizonMs) ?? elapsesWithinAsync(spec, from, horizonMs, pathEnv);
}
