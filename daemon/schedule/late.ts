// Pure: whether a run started late, so its report can say so. The daemon knows the slot its cron
// fired for; a systemd timer does not pass its slot on, but a Persistent= catch-up is the timer
// firing within minutes of boot (TRIGGER_UNIT names the timer), which is what is read there.
export type LateFacts = { slot: Date | null; startedAt: Date; uptimeMs: number | null; byTimer: boolean };

// Past the slot by more than this is late (the timer's own randomized delay is 2 minutes).
export const LATE_AFTER_MS = 10 * 60_000;
const CATCH_UP_MS = 5 * 60_000;

export function lateness(f: LateFacts): string | null {
  if (f.slot) {
    const by = f.startedAt.getTime() - f.slot.getTime();
    return by > LATE_AFTER_MS ? `late: started ${Math.round(by / 60_000)} min after its ${f.slot.toISOString().replace(/\.\d+Z$/, 'Z')} slot` : null;
  }
  if (f.byTimer && f.uptimeMs !== null && f.uptimeMs < CATCH_UP_MS) return `late: the timer caught up a run missed while the host was down (up ${Math.round(f.uptimeMs / 1000)}s)`;
  return null;
}

// The facts from this process's surroundings (the I/O edge).
export function uptimeMs(read: () => string): number | null {
  try {
    const s = Number(read().split(' ')[0]);
    return Number.isFinite(s) ? s * 1000 : null;
  } catch {
    return null;
  }
}
