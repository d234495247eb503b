// What "a day" means: the calendar date in budget.timezone.
const formats = new Map<string, Intl.DateTimeFormat>();

export function dayOf(at: Date, timezone: string): string {
  let f = formats.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formats.set(timezone, f);
  }
  return f.format(at); // en-CA formats as YYYY-MM-DD
}
