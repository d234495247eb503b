// systemd's calendar expressions (the timer's OnCalendar=), checked and expanded by
// `systemd-analyze calendar` where it is installed: nightshift never parses them itself.
import { execFile, spawnSync } from 'node:child_process';

export type CalendarCheck = { ok: true; times: Date[] } | { ok: false; error: string } | { ok: null; error: string };

// Pure: the elapse times in `systemd-analyze calendar --iterations=N` output, in UTC. systemd
// reads a calendar in the host's zone (PID 1's /etc/localtime), so it runs in that zone, not
// TZ=UTC; away from UTC each elapse has a "(in UTC):" line after it, which is the one taken.
export function parseElapses(stdout: string): Date[] {
  const out: Date[] = [];
  for (const m of stdout.matchAll(/(?:Next elapse|Iter\. #\d+|\(in UTC\)): \w{3} (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) (\S+)/g)) {
    if (m[3] === 'UTC') out.push(new Date(`${m[1]}T${m[2]}Z`));
  }
  return out;
}

// ok: true with the next elapses (a week of an hourly timer; after `base` when given, that instant
// included); false: systemd refuses it; null: systemd-analyze is not here (or too old for
// --base-time), nothing could be checked.
export function checkCalendar(spec: string, pathEnv: string | undefined, iterations = 400, base?: Date): CalendarCheck {
  return calendarAnswer(spawnSync('systemd-analyze', calendarArgs(spec, iterations, base), { encoding: 'utf8', env: { PATH: pathEnv || '/usr/bin:/bin' }, timeout: 10_000 }), pathEnv);
}

// The same, without blocking: status starts it before its config loads (cli/commands/status.ts).
export function checkCalendarAsync(spec: string, pathEnv: string | undefined, iterations = 400, base?: Date): Promise<CalendarCheck> {
  return new Promise((resolve) => {
    execFile('systemd-analyze', calendarArgs(spec, iterations, base), { encoding: 'utf8', env: { PATH: pathEnv || '/usr/bin:/bin' }, timeout: 10_000 }, (error, stdout, stderr) => {
      // execFile's error is a spawn failure (ENOENT, ...) or a non-zero exit, which carries `code`.
      const spawnFailed = error && typeof (error as NodeJS.ErrnoException).code === 'string';
      const status = !error ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve(calendarAnswer({ error: spawnFailed ? error : undefined, status, stdout, stderr }, pathEnv));
    });
  });
}

// systemd-analyze counts from strictly after --base-time, to the second.
const calendarArgs = (spec: string, iterations: number, base?: Date) => ['calendar', `--iterations=${iterations}`, ...(base ? [`--base-time=@${Math.ceil(base.getTime() / 1000) - 1}`] : []), spec];

function calendarAnswer(r: { error?: Error; status: number | null; stdout: string; stderr: string }, pathEnv: string | undefined): CalendarCheck {
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    return { ok: null, error: code === 'ENOENT' ? `systemd-analyze is not on PATH (${pathEnv || '/usr/bin:/bin'})` : `systemd-analyze: ${code ?? r.error.message}` };
  }
  const said = (r.stderr || r.stdout).trim().split('\n')[0] || `exit ${r.status}`;
  if (r.status !== 0) return /unrecognized option|invalid option|unknown option/i.test(said) ? { ok: null, error: `systemd-analyze: ${said}` } : { ok: false, error: said };
  return { ok: true, times: parseElapses(r.stdout) };
}

// The elapses of `spec` from `from` to `from + horizonMs`: a first short list, then as many more as
// its density says the horizon needs (at most MAX, a minutely timer's 8 days; a denser one is known
// only that far).
const FIRST = 200;
const MAX = 12_000;
export const MAX_ELAPSES = MAX;
export function elapsesWithin(spec: string, from: Date, horizonMs: number, pathEnv: string | undefined): CalendarCheck {
  const end = from.getTime() + horizonMs;
  let r = checkCalendar(spec, pathEnv, FIRST, from);
  const more = moreNeeded(r, from, end);
  if (more) r = checkCalendar(spec, pathEnv, more, from);
  return within(r, end);
}

export async function elapsesWithinAsync(spec: string, from: Date, horizonMs: number, pathEnv: string | undefined): Promise<CalendarCheck> {
  const end = from.getTime() + horizonMs;
  let r = await checkCalendarAsync(spec, pathEnv, FIRST, from);
  const more = moreNeeded(r, from, end);
  if (more) r = await checkCalendarAsync(spec, pathEnv, more, from);
  return within(r, end);
}

// How many elapses a second ask needs to reach `end` (0: the first list reached it, or failed).
function moreNeeded(r: CalendarCheck, from: Date, end: number): number {
  if (r.ok !== true || r.times.length < FIRST) return 0;
  const last = r.times[r.times.length - 1].getTime();
  return last < end ? Math.min(MAX, Math.ceil((FIRST * (end - from.getTime())) / Math.max(1, last - from.getTime())) + 10) : 0;
}

const within = (r: CalendarCheck, end: number): CalendarCheck => (r.ok === true ? { ok: true, times: r.times.filter((t) => t.getTime() < end) } : r);
