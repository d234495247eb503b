// Day and hour conditions of dispatch rules: `mon`, `mon-fri`, `[mon, wed]`; `10`, `14-21`,
// `[9, 14-16]`. Parsed to sorted lists of numbers (days 0 = sun .. 6 = sat, hours 0-23).
export const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

function ranges(input: unknown, parseOne: (s: string) => number | null, min: number, max: number, wrap: boolean): number[] | string {
  const items = Array.isArray(input) ? input : [input];
  const out = new Set<number>();
  for (const item of items) {
    const text = String(item).trim().toLowerCase();
    const parts = text.split('-');
    if (parts.length > 2 || !text) return `Expected a value or a range like \`a-b\`, got \`${String(item)}\``;
    const a = parseOne(parts[0]);
    const b = parts.length === 2 ? parseOne(parts[1]) : a;
    if (a === null || b === null || a < min || a > max || b < min || b > max) return `Expected values in ${min}..${max} (or names), got \`${String(item)}\``;
    if (a <= b) for (let i = a; i <= b; i++) out.add(i);
    else if (wrap) {
      for (let i = a; i <= max; i++) out.add(i);
      for (let i = min; i <= b; i++) out.add(i);
    } else return `Expected a rising range, got \`${String(item)}\``;
  }
  return [...out].sort((x, y) => x - y);
}

// Days; `fri-mon` wraps over the weekend. Returns the error text when invalid.
export function parseDays(input: unknown): number[] | string {
  return ranges(input, (s) => {
    const i = DAY_NAMES.indexOf(s.slice(0, 3) as (typeof DAY_NAMES)[number]);
    return i === -1 || !DAY_NAMES.some((d) => s === d || s.startsWith(d)) ? null : i;
  }, 0, 6, true);
}

export function parseHours(input: unknown): number[] | string {
  return ranges(input, (s) => (/^\d{1,2}$/.test(s) ? Number(s) : null), 0, 23, false);
}
