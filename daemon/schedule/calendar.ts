// systemd's calendar expressions (the timer's OnCalendar=), checked and expanded by
// `systemd-analyze calendar` where it is installed: nightshift never parses them itself.
import { spawnSync } from 'node:child_process';

export type CalendarCheck = { ok: true; times: Date[] } | { ok: false; error: string } | { ok: null; error: string };

// Pure: the elapse times in `systemd-analyze calendar --iterations=N` output (run with TZ=UTC, so
// every time is printed in UTC).
export function parseElapses(stdout: string): Date[] {
  const out: Date[] = [];
  for (const m of stdout.matchAll(/(?:Next elapse|Iter\. #\d+): \w{3} (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) UTC/g)) out.push(new Date(`${m[1]}T${m[2]}Z`));
  return out;
}

// ok: true with the next elapses (a week of an hourly timer); false: systemd refuses it;
// null: systemd-analyze is not here, nothing could be checked.
export function checkCalendar(spec: string, pathEnv: string | undefined, iterations = 400): CalendarCheck {
  const r = spawnSync('systemd-analyze', ['calendar', `--iterations=${iterations}`, spec], { encoding: 'utf8', env: { PATH: pathEnv || '/usr/bin:/bin', TZ: 'UTC' }, timeout: 10_000 });
  if (r.error) return { ok: null, error: `systemd-analyze: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message}` };
  if (r.status !== 0) return { ok: false, error: (r.stderr || r.stdout).trim().split('\n')[0] || `exit ${r.status}` };
  return { ok: true, times: parseElapses(r.stdout) };
}
