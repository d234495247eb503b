// The calendar periods a query names ("on October 13, 2023", "in July 2023", "2023-10-13"),
// as half-open UTC intervals. Pure: recall asks it, and ranks what began outside them lower.
// A month or a day without its year names no period: which year is a guess.

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH = `(${MONTHS.map((m) => `${m.slice(0, 3)}(?:${m.slice(3)})?`).join('|')})\\.?`;
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
const YEAR = '(\\d{4})';

export type Period = { from: string; to: string };

const month = (name: string) => MONTHS.findIndex((m) => m.startsWith(name.toLowerCase().slice(0, 3)));

function day(y: number, m: number, d: number): Period | null {
  const from = new Date(Date.UTC(y, m, d));
  if (from.getUTCMonth() !== m || from.getUTCDate() !== d) return null; // 31 February
  return { from: from.toISOString(), to: new Date(Date.UTC(y, m, d + 1)).toISOString() };
}

const monthOf = (y: number, m: number): Period => ({ from: new Date(Date.UTC(y, m, 1)).toISOString(), to: new Date(Date.UTC(y, m + 1, 1)).toISOString() });

export function namedPeriods(text: string): Period[] {
  const out: Period[] = [];
  let rest = text;
  const take = (re: RegExp, f: (m: RegExpExecArray) => Period | null) => {
    rest = rest.replace(re, (...args) => {
      const p = f(args.slice(0, -2) as unknown as RegExpExecArray);
      if (p) out.push(p);
      return ' ';
    });
  };
  // Most specific first; each match is taken out so "July 2023" is not also read inside "13 July 2023".
  take(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (m) => day(+m[1], +m[2] - 1, +m[3]));
  take(new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+${YEAR}\\b`, 'gi'), (m) => day(+m[3], month(m[1]), +m[2]));
  take(new RegExp(`\\b${DAY}(?:\\s+of)?\\s+${MONTH},?\\s+${YEAR}\\b`, 'gi'), (m) => day(+m[3], month(m[2]), +m[1]));
  take(/\b(\d{4})-(\d{2})\b/g, (m) => (+m[2] >= 1 && +m[2] <= 12 ? monthOf(+m[1], +m[2] - 1) : null));
  take(new RegExp(`\\b${MONTH},?\\s+(?:of\\s+)?${YEAR}\\b`, 'gi'), (m) => monthOf(+m[2], month(m[1])));
  return out;
}

// Whether `at` (ISO-8601) falls in one of `periods`, give or take `slackDays` either side (a
// memory's time is when it was said; the day it tells of may be a day or two before).
export function within(at: string, periods: Period[], slackDays: number): boolean {
  const t = Date.parse(at);
  const slack = slackDays * 86_400_000;
  return periods.some((p) => t >= Date.parse(p.from) - slack && t < Date.parse(p.to) + slack);
}
