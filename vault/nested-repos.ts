// A repository a session made inside the vault (`tools/cache/.git`, a folder or a `gitdir:` file)
// is input, never a repository nightshift's git may enter: `git status` recursing into it runs
// the filter its own config names, outside the wall. Each one is moved aside, by rename only (a
// copy would read a FIFO or follow a link), before any git of ours runs in the vault.
import fs from 'node:fs';
import path from 'node:path';

export type NestedMove = { from: string; to: string };
export type NestedSweep = { moved: NestedMove[]; failed: Array<{ path: string; error: string }> };

// Every `.git` below the vault's top (its own `.git` excluded), links never followed, as paths
// relative to the vault. A folder that cannot be read is reported as found: what cannot be looked
// into cannot be trusted either.
export function findNestedGit(vault: string): { found: string[]; unreadable: string[] } {
  const found: string[] = [];
  const unreadable: string[] = [];
  const walk = (rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(vault, rel), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') unreadable.push(rel);
      return;
    }
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === '.git') {
        if (rel) found.push(child);
      } else if (e.isDirectory()) walk(child);
    }
  };
  walk('');
  return { found, unreadable };
}

// Where the nested repositories of one session go: inside the vault's own `.git` (read-only in
// the wall, never read by git as a repository, and on the vault's file system, so a rename
// suffices), else under `fallback`.
export function nestedQuarantine(vault: string, fallback: string, sessionId: string): string {
  const dotGit = path.join(vault, '.git');
  const st = fs.lstatSync(dotGit, { throwIfNoEntry: false });
  return st?.isDirectory() ? path.join(dotGit, 'nightshift-quarantine', sessionId) : path.join(fallback, sessionId);
}

// Moves every nested `.git` into `into`, keeping its path in the name (`tools%2Fcache%2F.git`).
// What cannot be renamed is reported, never copied.
export function sweepNestedGit(vault: string, into: string): NestedSweep {
  const { found, unreadable } = findNestedGit(vault);
  const out: NestedSweep = { moved: [], failed: unreadable.map((p) => ({ path: p || '.', error: 'cannot be read' })) };
  for (const rel of found) {
    const to = path.join(into, encodeURIComponent(rel));
    try {
      fs.mkdirSync(into, { recursive: true, mode: 0o700 });
      if (fs.lstatSync(to, { throwIfNoEntry: false })) throw new Error(`${to} already exists`);
      fs.renameSync(path.join(vault, rel), to);
      out.moved.push({ from: rel, to });
    } catch (err) {
      out.failed.push({ path: rel, error: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
    }
  }
  return out;
}
