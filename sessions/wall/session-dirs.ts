// Each session's private folder under state_dir/sessions (its HOME, settings and tokens), and the
// sweep every start does of the ones an interrupted supervisor left. Light on purpose: a tick
// with nothing due sweeps too.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logs/logger.js';
import { noun } from '../../core/words.js';

export const sessionsDir = (config: Pick<Config, 'state_dir'>) => path.join(config.state_dir, 'sessions');

// Leftovers of sessions a killed supervisor could not clean up (their settings name tokens that
// died with it, and the cgroups they were bounded by): removed by every start that holds the run
// lock, a session or not. The count.
// `keep`: the sessions other supervisors run now (sessions.max_concurrent), whose folders stay.
export function sweepSessionDirs(config: Pick<Config, 'state_dir'>, log?: Pick<Logger, 'warn'>, keep: ReadonlySet<string> = new Set()): number {
  const root = sessionsDir(config);
  const old = (fs.existsSync(root) ? fs.readdirSync(root) : []).filter((o) => !keep.has(o));
  const cells: string[] = [];
  const stuck: string[] = [];
  for (const o of old) {
    const r = removeCells(path.join(root, o), o);
    cells.push(...r.removed);
    stuck.push(...r.stuck);
    fs.rmSync(path.join(root, o), { recursive: true, force: true });
  }
  if (old.length) log?.warn({ event: 'session_dirs_swept', dirs: old, cells }, `removed ${old.length} session ${noun(old.length, 'folder')} an interrupted supervisor left in ${root}${cells.length ? ` and ${cells.length} of their ${noun(cells.length, 'cgroup')}` : ''}`);
  if (stuck.length) log?.warn({ event: 'session_cgroups_left', cells: stuck }, `could not remove ${noun(stuck.length, 'cgroup')} of an interrupted session: ${stuck.join('; ')} (rmdir each once nothing is left in it)`);
  return old.length;
}

// Where a session's folder records the cgroups made for it (sessions/wall/cgroup.ts).
export const CELLS_FILE = 'cells.json';

// The cgroups a leftover folder names, removed (rmdir: an empty one only; reconcile has ended what
// ran in them). Only a cgroup named for that session, under /sys/fs/cgroup, is touched.
function removeCells(folder: string, sessionId: string): { removed: string[]; stuck: string[] } {
  const out = { removed: [] as string[], stuck: [] as string[] };
  let listed: unknown;
  try {
    listed = JSON.parse(fs.readFileSync(path.join(folder, CELLS_FILE), 'utf8'));
  } catch {
    return out; // none made, or the folder predates the record
  }
  if (!Array.isArray(listed)) return out;
  for (const d of listed) {
    if (typeof d !== 'string' || path.basename(d) !== `nightshift-${sessionId}` || !path.resolve(d).startsWith('/sys/fs/cgroup/')) continue;
    try {
      fs.rmdirSync(d);
      out.removed.push(d);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') out.stuck.push(`${d} (${code})`);
    }
  }
  return out;
}
