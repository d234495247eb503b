// Free space on the disks nightshift writes: the vault's, state_dir's (ledger, memory, outbox) and
// log_dir's. Below limits.disk_free no session starts, a running one is ended `disk_full`, and
// doctor fails. The verdicts are pure over statfs facts; the facts are read at the edge.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './schema.js';
import { formatSize } from './size.js';

// `files`, `filesFree`: the disk's inodes (0 where the file system does not count them, btrfs).
export type DiskFact = { what: string; path: string; dev: number; free: number; total: number; files?: number; filesFree?: number };

// A disk with bytes to spare but no inodes refuses every new file as one out of bytes does (many
// small files a session made): below this many free, it counts as full, whenever limits.disk_free
// is on.
export const MIN_FREE_FILES = 1024;
const filesLow = (f: { files?: number; filesFree?: number }) => (f.files ?? 0) > 0 && (f.filesFree ?? Infinity) < MIN_FREE_FILES;

// The nearest folder that exists: a state_dir not made yet lies on its parent's disk.
function existing(p: string): string {
  let d = path.resolve(p);
  while (!fs.existsSync(d) && d !== path.dirname(d)) d = path.dirname(d);
  return d;
}

// statfs of each folder, as the unprivileged see it (bavail: root's reserve is not ours to count).
export function diskFacts(c: Pick<Config, 'vault' | 'state_dir' | 'log_dir'>): DiskFact[] {
  const out: DiskFact[] = [];
  for (const [what, p] of [['vault', c.vault], ['state_dir', c.state_dir], ['log_dir', c.log_dir]] as const) {
    try {
      const at = existing(p);
      const s = fs.statfsSync(at);
      out.push({ what, path: p, dev: fs.statSync(at).dev, free: s.bavail * s.bsize, total: s.blocks * s.bsize, files: s.files, filesFree: s.ffree });
    } catch {
      // unreadable: the access checks say why
    }
  }
  return out;
}

export type LowDisk = { what: string[]; path: string; free: number; total: number; files?: number; filesFree?: number };

// Pure: the disks below `min` free, one entry per disk (the folders on it named together). A
// `min` of 0 turns the check off.
export function lowDisks(facts: DiskFact[], min: number): LowDisk[] {
  if (min <= 0) return [];
  const byDev = new Map<number, LowDisk>();
  for (const f of facts) {
    if (f.free >= min && !filesLow(f)) continue;
    const d = byDev.get(f.dev);
    if (d) d.what.push(f.what);
    else byDev.set(f.dev, { what: [f.what], path: f.path, free: f.free, total: f.total, ...(filesLow(f) ? { files: f.files, filesFree: f.filesFree } : {}) });
  }
  return [...byDev.values()];
}

// Pure: one line that says which disk, how full, and the limit.
export function diskFullReason(low: LowDisk[], min: number): string {
  return low.map((d) => d.free < min
    ? `the disk of ${d.what.join(', ')} (${d.path}) has ${formatSize(d.free)} free of ${formatSize(d.total)}, below limits.disk_free (${formatSize(min)})`
    : `the disk of ${d.what.join(', ')} (${d.path}) has ${d.filesFree} of ${d.files} files (inodes) free, below the ${MIN_FREE_FILES} nightshift keeps free`).join('; ');
}

// Why no session may start or go on for lack of room (limits.disk_free), or null.
export function diskProblem(c: Pick<Config, 'vault' | 'state_dir' | 'log_dir' | 'limits'>): string | null {
  const low = lowDisks(diskFacts(c), c.limits.disk_free);
  return low.length ? diskFullReason(low, c.limits.disk_free) : null;
}

// Whether an error is a full disk's: ENOSPC from the kernel, SQLITE_FULL from the ledger or store.
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e && (e.code === 'ENOSPC' || e.code === 'SQLITE_FULL' || e.code === 'EDQUOT')) return true;
  return /ENOSPC|EDQUOT|no space left on device|database or disk is full/i.test(String(e?.message ?? err ?? ''));
}
