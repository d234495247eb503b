// Pure: did the API refuse the session for a rate limit, an overload or a usage limit, and until
// when does that hold? The CLI says so three ways: the result's `api_error_status` (429 rate limit,
// 529 overloaded), its usage-limit text ("You've hit your session limit · resets 3pm (UTC)", or
// the older "Claude AI usage limit reached|<epoch seconds>"), and a `rate_limit_event` whose
// `rate_limit_info` has `status: "rejected"` and `resetsAt` (epoch seconds).
import type { ResultMessage } from './types.js';

export type RateLimitInfo = { status?: string; resetsAt?: number; rateLimitType?: string };

const LIMIT_STATUS = new Set([429, 529]);
// The CLI's own phrases for a subscription's limit (read from its bundle, 2.1.x).
const USAGE_TEXT = /usage limit reached|you've hit your [\w' -]*limit|you've reached your [\w' -]*limit|out of usage credits/i;

// Whether this result is the API refusing us (the session did not fail on its own).
export function isRateLimited(r: ResultMessage | null, info: RateLimitInfo | null = null): boolean {
  if (info?.status === 'rejected') return true;
  if (!r?.is_error) return false;
  if (typeof r.api_error_status === 'number' && LIMIT_STATUS.has(r.api_error_status)) return true;
  return USAGE_TEXT.test(`${r.result ?? ''} ${(r.errors ?? []).join(' ')}`);
}

// When the limit lifts, if the answer says: the event's resetsAt, else the text's epoch, else the
// text's "resets 3pm (Europe/Berlin)" / "resets Dec 3, 5:30pm (UTC)". Null when nothing says.
export function resetTime(r: ResultMessage | null, info: RateLimitInfo | null, now: Date): Date | null {
  if (typeof info?.resetsAt === 'number' && info.resetsAt > 0) return new Date(info.resetsAt * 1000);
  const text = `${r?.result ?? ''} ${(r?.errors ?? []).join(' ')}`;
  const epoch = /usage limit reached\|(\d{9,11})/i.exec(text);
  if (epoch) return new Date(Number(epoch[1]) * 1000);
  const m = /resets (?:([A-Z][a-z]{2}) (\d{1,2}), )?(\d{1,2})(?::(\d{2}))?\s*([ap]m)(?: \(([^)]+)\))?/i.exec(text);
  if (!m) return null;
  const [, mon, day, h, min, ampm, tz] = m;
  const hour = (Number(h) % 12) + (ampm.toLowerCase() === 'pm' ? 12 : 0);
  return nextWallTime(now, tz ?? 'UTC', hour, Number(min ?? 0), mon && day ? { month: MONTHS.indexOf(mon.toLowerCase()), day: Number(day) } : null);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

// The first instant after `now` whose wall clock in `timezone` reads hour:minute (on month/day
// when given). An unknown zone is read as UTC.
function nextWallTime(now: Date, timezone: string, hour: number, minute: number, date: { month: number; day: number } | null): Date | null {
  let tz = timezone;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    tz = 'UTC';
  }
  const local = wall(now, tz);
  // Wall time read as UTC, then shifted by the zone's offset at that instant.
  const candidates = date
    ? [0, 1].map((y) => Date.UTC(local.year + y, date.month, date.day, hour, minute))
    : [0, 1].map((d) => Date.UTC(local.year, local.month, local.day + d, hour, minute));
  for (const base of candidates) {
    const guess = new Date(base);
    const at = new Date(base - (wallUtc(wall(guess, tz)) - guess.getTime()));
    if (at.getTime() > now.getTime()) return at;
  }
  return null;
}

function wall(at: Date, tz: string) {
  const f = new Intl.DateTimeFormat('en-US', { timeZone: tz, year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', hourCycle: 'h23' });
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  return { year: Number(p.year), month: Number(p.month) - 1, day: Number(p.day), hour: Number(p.hour) % 24, minute: Number(p.minute) };
}

const wallUtc = (w: ReturnType<typeof wall>) => Date.UTC(w.year, w.month, w.day, w.hour, w.minute);
