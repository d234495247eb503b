// Pure: the timer's expected ticks that left no fire. An expected tick counts as fired when a tick's
// fire began between it and the next expected tick (a Persistent= catch-up or the randomized delay
// comes late, never early), or when a fire was still running at it (systemd starts no second
// tick while one runs). Ticks within the grace of `now` are not yet expected.
export type FireSpan = { at: Date; ended_at: Date | null };

export type TickGaps = {
  // Expected ticks with no fire, oldest first.
  missed: Date[];
  // How many expected ticks were looked at.
  expected: number;
  // The last fire's start (null: none in the window), and the expected ticks since it that left none.
  last_fire: Date | null;
  since_last: number;
};

// The timer's RandomizedDelaySec=120 and AccuracySec=1min, and the start itself.
export const TICK_GRACE_MS = 5 * 60_000;
// A clock a little ahead of systemd's still counts the fire as that tick's.
const EARLY_MS = 60_000;

export function tickGaps(expected: Date[], fires: FireSpan[], now: Date, graceMs = TICK_GRACE_MS): TickGaps {
  const due = [...expected].filter((t) => t.getTime() <= now.getTime() - graceMs).sort((a, b) => a.getTime() - b.getTime());
  const spans = fires.map((f) => ({ from: f.at.getTime(), to: (f.ended_at ?? now).getTime() }));
  const missed = due.filter((t, i) => {
    const start = t.getTime() - EARLY_MS;
    const end = i + 1 < due.length ? due[i + 1].getTime() : Number.POSITIVE_INFINITY;
    return !spans.some((s) => (s.from >= start && s.from < end) || (s.from <= t.getTime() && s.to >= t.getTime()));
  });
  const last = fires.reduce<Date | null>((m, f) => (!m || f.at > m ? f.at : m), null);
  return { missed, expected: due.length, last_fire: last, since_last: missed.filter((t) => !last || t > last).length };
}
