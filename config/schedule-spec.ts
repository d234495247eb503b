// Day and hour conditions of dispatch rules, as a list or one string with commas: `mon`,
// `"mon,wed"`, `mon-fri`, `[mon, wed]`, `monday`; `10`, `"9,14-16"`, `[9, 14-16]`. Parsed to
// sorted lists of numbers. Days as numbers use cron's range, 0-6 with 0 = sun (7 is refused, so
// one number means one day); hours are 0-23. Anything else is refused with the valid values.
export const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const FULL_DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

const DAYS_EXPECTED = `Expected days as names (${DAY_NAMES.join(', ')}, or in full: monday ...) or numbers 0-6 (0 = sun), one or a range like mon-fri`;
const HOURS_EXPECTED = 'Expected hours as numbers 0-23, one or a rising range like 14-21';

// The items of a list or of a comma-separated string, each trimmed.
function items(input: unknown): unknown[] {
  const list = Array.isArray(input) ? input : [input];
  return list.flatMap((x) => (typeof x === 'string' ? x.split(',').map((s) => s.trim()) : [x]));
}

function ranges(input: unknown, parseOne: (s: string) => number | null, expected: string, wrap: boolean, max: number): number[] | string {
  const out = new Set<number>();
  const all = items(input);
  if (!all.length || (Array.isArray(input) && !input.length)) return `${expected}, got an empty list (leave the field out for every one)`;
  for (const item of all) {
    if (typeof item !== 'string' && typeof item !== 'number') return `${expected}, got \`${JSON.stringify(item)}\``;
    const text = String(item).trim().toLowerCase();
    const parts = text.split('-').map((s) => s.trim());
    const a = parts.length <= 2 && text ? parseOne(parts[0]) : null;
    const b = parts.length === 2 ? parseOne(parts[1]) : a;
    if (a === null || b === null) return `${expected}, got \`${String(item)}\``;
    if (a <= b) for (let i = a; i <= b; i++) out.add(i);
    else if (wrap) {
      for (let i = a; i <= max; i++) out.add(i);
      for (let i = 0; i <= b; i++) out.add(i);
    } else return `${expected}, got \`${String(item)}\` (not rising)`;
  }
  return [...out].sort((x, y) => x - y);
}

const number = (s: string, max: number) => (/^\d{1,2}$/.test(s) && Number(s) <= max ? Number(s) : null);

// Days; `fri-mon` wraps over the weekend. Returns the error text when invalid.
export function parseDays(input: unknown): number[] | string {
  return ranges(input, (s) => {
    const short = DAY_NAMES.indexOf(s as (typeof DAY_NAMES)[number]);
    if (short !== -1) return short;
    const full = FULL_DAYS.indexOf(s);
    return full !== -1 ? full : number(s, 6);
  }, DAYS_EXPECTED, true, 6);
}

export function parseHours(input: unknown): number[] | string {
  return ranges(input, (s) => number(s, 23), HOURS_EXPECTED, false, 23);
}
