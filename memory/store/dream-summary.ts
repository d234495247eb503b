// Pure: the last dream's metrics row as what an operator reads (memory stats, the status page).
import type { LastDream } from '../types.js';

type Phase = { ok?: boolean; [count: string]: unknown };

export function dreamSummary(row: { started_at: string; duration_ms: number; metrics: string }): LastDream {
  let phases: Record<string, Phase> = {};
  try {
    phases = (JSON.parse(row.metrics) as { phases?: Record<string, Phase> }).phases ?? {};
  } catch {
    // A row that is not JSON reads as no phase having run.
  }
  const count = (phase: string, key: string): number | null => {
    const p = phases[phase];
    return p?.ok && typeof p[key] === 'number' ? (p[key] as number) : null;
  };
  const sum = (...xs: Array<number | null>) => (xs.every((x) => x === null) ? null : xs.reduce<number>((n, x) => n + (x ?? 0), 0));
  return {
    at: row.started_at,
    duration_ms: row.duration_ms,
    observations: count('cluster', 'observations'),
    clusters: count('cluster', 'clusters'),
    abstractions: count('abstract', 'abstractions'),
    superseded: count('updates', 'superseded'),
    // Candidates both ways: a changed value the updates phase could not date, and a contradiction found.
    contradictions: sum(count('updates', 'candidates'), count('contradictions', 'candidates')),
    linked: count('links', 'linked'),
    faded: count('fade', 'faded'),
    failed_phases: Object.entries(phases).filter(([, p]) => p && p.ok === false).map(([name]) => name),
  };
}
