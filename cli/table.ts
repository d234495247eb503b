// Aligned columns for the terminal: each column as wide as its widest cell.
export function table(rows: string[][], right: number[] = []): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 && !right.includes(i) ? c : right.includes(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd())
    .join('\n');
}

// Seconds, minutes, hours: `45s`, `3m 05s`, `1h 02m`.
export function shortDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '-';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

// `2026-12-01 10:04` in the given zone.
export function localStamp(iso: string, timezone: string): string {
  const f = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const p = Object.fromEntries(f.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}

// The one time form of the screens: local time in budget.timezone with its zone's label,
// `2026-12-01 10:04 CET` (the ISO instant stays in --json).
export function zoneStamp(iso: string, timezone: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const zone = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'short' }).formatToParts(at).find((x) => x.type === 'timeZoneName')?.value ?? timezone;
  return `${localStamp(iso, timezone)} ${zone}`;
}
