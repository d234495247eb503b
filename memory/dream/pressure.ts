import { counted } from '../../core/words.js';
// Pure: is the memory under enough pressure that an idle tick should dream? Either many
// observations since the last dream, or a long time since it (with anything new to digest).
// `first_since_at`: when the oldest observation not yet dreamed over was made; the clock of a
// store that never dreamed starts there (not at the epoch: one observation is no reason to dream).
export type Pressure = { observations_since: number; last_dream_at: string | null; first_since_at?: string | null };
export type PressureLimits = { after: number; everyMs: number };

// The reason to dream now, or null.
export function dreamReason(p: Pressure, now: Date, limits: PressureLimits): string | null {
  if (p.observations_since <= 0) return null;
  if (p.observations_since >= limits.after) return `${counted(p.observations_since, 'observation')} since the last dream (memory.dream_after ${limits.after})`;
  const from = p.last_dream_at ?? p.first_since_at ?? null;
  if (!from) return null;
  const since = now.getTime() - Date.parse(from);
  if (since < limits.everyMs) return null;
  const every = `memory.dream_every ${Math.round(limits.everyMs / 3_600_000)}h`;
  return p.last_dream_at
    ? `last dream ${Math.floor(since / 3_600_000)}h ago (${every}), ${counted(p.observations_since, 'observation')} since`
    : `never dreamed; the oldest of ${counted(p.observations_since, 'observation')} is ${Math.floor(since / 3_600_000)}h old (${every})`;
}
