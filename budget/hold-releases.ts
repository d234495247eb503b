// When the operator lifted each agent's hold (`nightshift hold release`): the ledger rows that ended
// before it neither hold the agent nor start its failure streak again. Kept beside the ledger in
// state_dir as one small file, replaced whole (written aside, then renamed), so a crash leaves the
// old file or the new one.
import fs from 'node:fs';
import path from 'node:path';

// agent -> ISO time of its last release.
export type Releases = Record<string, string>;

export const releasesFile = (stateDir: string) => path.join(stateDir, 'hold-releases.json');

// The releases recorded; none when the file is missing. A damaged file is said, not ignored.
export function readReleases(stateDir: string): Releases {
  let text: string;
  try {
    text = fs.readFileSync(releasesFile(stateDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  const parsed = JSON.parse(text) as unknown;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${releasesFile(stateDir)}: Expected an object of agent: time, got ${text.slice(0, 80)}`);
  return Object.fromEntries(Object.entries(parsed as Record<string, unknown>).filter(([, v]) => typeof v === 'string' && !Number.isNaN(Date.parse(v as string)))) as Releases;
}

// Records `at` as the release of each agent; returns what the file now holds.
export function recordReleases(stateDir: string, agents: string[], at: Date): Releases {
  return writeReleases(stateDir, { ...readReleases(stateDir), ...Object.fromEntries(agents.map((a) => [a, at.toISOString()])) });
}

// Pure: the releases of `other` (the fleet's) later than this host's own.
export function newerReleases(own: Releases, other: Releases): Releases {
  return Object.fromEntries(Object.entries(other).filter(([a, t]) => !own[a] || Date.parse(t) > Date.parse(own[a])));
}

// Another host's releases, recorded as this host's own where they are later (so the ledger's rows
// before them hold nothing here either, for dispatch, the backoff's next streak and doctor alike).
export function adoptReleases(stateDir: string, other: Releases): Releases {
  const own = readReleases(stateDir);
  const newer = newerReleases(own, other);
  if (Object.keys(newer).length) writeReleases(stateDir, { ...own, ...newer });
  return newer;
}

function writeReleases(stateDir: string, next: Releases): Releases {
  fs.mkdirSync(stateDir, { recursive: true });
  const file = releasesFile(stateDir);
  const aside = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(aside, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o644 });
  fs.renameSync(aside, file);
  return next;
}

// Pure: the rows (newest first) that ended after the release; all of them without one.
export function sinceRelease<T extends { started_at: string; ended_at: string | null }>(rows: T[], releasedAt: string | undefined): T[] {
  if (!releasedAt) return rows;
  const at = Date.parse(releasedAt);
  return rows.filter((r) => Date.parse(r.ended_at ?? r.started_at) > at);
}

// Pure: each agent's rows since its release.
export function afterReleases<T extends { started_at: string; ended_at: string | null }>(byAgent: Record<string, T[]>, releases: Releases): Record<string, T[]> {
  return Object.fromEntries(Object.entries(byAgent).map(([agent, rows]) => [agent, sinceRelease(rows, releases[agent])]));
}
