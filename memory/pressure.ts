// Pure: is the memory under enough pressure that an idle tick should dream? Either many
// observations since the last dream, or a long time since it (with anything new to digest).
export type Pressure = { observations_since: number; last_dream_at: string | null };
export type PressureLimits = { after: number; everyMs: number };

// The reason to dream now, or null.
export function dreamReason(p: Pressure, now: Date, limits: PressureLimits): string | null {
  if (p.observations_since <= 0) return null;
  if (p.observations_since >= limits.after) return `${p.observations_since} observations since the last dream (memory.dream_after ${limits.after})`;
  if (!p.last_dream_at) return `never dreamed, ${p.observations_since} observation(s) to digest`;
  const since = now.getTime() - Date.parse(p.last_dream_at);
  if (since >= limits.everyMs) return `last dream ${Math.floor(since / 3_600_000)}h ago (memory.dream_every ${Math.round(limits.everyMs / 3_600_000)}h), ${p.observations_since} observation(s) since`;
  return null;
}
