// Pure: the scheduled slot a fire claims across the fleet (budget/fleet-claims.ts): the start of
// the tick's hour in the budget's time zone (a zone half an hour off UTC has its own hours), so
// every host's tick in that hour names the same slot.
import { isUtc } from '../../config/day.js';

const minutes = new Map<string, Intl.DateTimeFormat>();

// The minute of the hour at `at` in `timezone`.
function localMinute(at: Date, timezone: string): number {
  if (isUtc(timezone)) return at.getUTCMinutes();
  let f = minutes.get(timezone);
  if (!f) minutes.set(timezone, (f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, minute: 'numeric' })));
  return Number(f.formatToParts(at).find((p) => p.type === 'minute')?.value ?? 0);
}

export function claimSlot(at: Date, timezone: string): Date {
  const minute = Math.floor(at.getTime() / 60_000) * 60_000;
  return new Date(minute - localMinute(at, timezone) * 60_000);
}
