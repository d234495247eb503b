// Durations in config are written `90s`, `10m`, `1h`, `500ms` (or a bare number of seconds).
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

// Returns milliseconds, or null when the text is not a duration.
export function parseDuration(input: unknown): number | null {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? input * 1000 : null;
  if (typeof input !== 'string') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(input);
  if (!m) return null;
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 's']);
}

// The inverse, for printing.
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
