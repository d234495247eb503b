// Pure: a subscription's usage windows, as the API reports them on every reply to an OAuth
// credential, and whether unattended sessions must wait for one to reset. The header set is the
// one the CLI 2.1.197 reads (its binary: `anthropic-ratelimit-unified-${w}-utilization` and
// `-reset` for 5h, 7d, 7d_oi and overage; utilization a fraction, reset in epoch seconds). An API
// key gets none of these, and nothing changes but the display.

export const WINDOW_NAMES = ['5h', '7d', '7d_oi', 'overage'] as const;
// resets_at: ISO time (null: not said); seen_at: when a reply last carried it.
export type UsageWindow = { name: string; utilization: number; resets_at: string | null; seen_at: string };

const num = (v: string | undefined | null) => (v === undefined || v === null || v.trim() === '' ? NaN : Number(v));

// The windows a reply's headers carry; `get` reads one header (lower-case name).
export function windowsFrom(get: (name: string) => string | undefined, at: Date): UsageWindow[] {
  const out: UsageWindow[] = [];
  for (const w of WINDOW_NAMES) {
    const u = num(get(`anthropic-ratelimit-unified-${w}-utilization`));
    if (!Number.isFinite(u) || u < 0) continue;
    const r = num(get(`anthropic-ratelimit-unified-${w}-reset`));
    // Seconds, as the CLI reads them; a value that can only be milliseconds is taken as such.
    const resets = Number.isFinite(r) && r > 0 ? new Date(r < 1e12 ? r * 1000 : r).toISOString() : null;
    out.push({ name: w, utilization: u, resets_at: resets, seen_at: at.toISOString() });
  }
  return out;
}

export type WindowHold = { window: string; until: string | null; reason: string };

// Past `limit` (budget.max_window_utilization) in a window that has not reset yet: no start. The
// overage window is the operator's extra spend, not the allotment's share, so it does not hold.
export function windowHold(windows: UsageWindow[], limit: number, now: Date): WindowHold | null {
  for (const w of windows) {
    if (w.name === 'overage' || w.utilization < limit) continue;
    if (w.resets_at && Date.parse(w.resets_at) <= now.getTime()) continue;
    const pct = (x: number) => `${Math.round(x * 100)}%`;
    return {
      window: w.name,
      until: w.resets_at,
      reason: `budget.max_window_utilization: the ${w.name} usage window is at ${pct(w.utilization)} (unattended sessions may use ${pct(limit)})${w.resets_at ? `; it resets at ${w.resets_at}` : ''}`,
    };
  }
  return null;
}

// One line per window for people: `5h  85% used, resets 2026-12-01T23:00:00.000Z`.
export function windowLines(windows: UsageWindow[], limit: number): string[] {
  return windows.map((w) => `${w.name.padEnd(8)}${Math.round(w.utilization * 100)}% used (limit ${Math.round(limit * 100)}%)${w.resets_at ? `, resets ${w.resets_at}` : ''}, as of ${w.seen_at}`);
}
