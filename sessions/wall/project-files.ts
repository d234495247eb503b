// The CLI's project files in the vault (.claude/, CLAUDE.md, CLAUDE.local.md, .mcp.json) are what
// a session can write to steer the next one. nightshift never loads them (unless the operator opts
// in), and a session that changes them is reported: the operator should know someone tried.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const TOP = ['CLAUDE.md', 'CLAUDE.local.md', '.mcp.json', '.claude'];
// A folder planted with a million files is not walked for ever.
const MAX_ENTRIES = 2000;

export type ProjectFiles = Map<string, string>;

// Each project file's content hash (a link is recorded by its target, never followed).
export function snapshotProjectFiles(vault: string): ProjectFiles {
  const out: ProjectFiles = new Map();
  const visit = (rel: string) => {
    if (out.size >= MAX_ENTRIES) return;
    const p = path.join(vault, rel);
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isSymbolicLink()) out.set(rel, `link:${fs.readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(rel, 'dir');
      let names: string[] = [];
      try {
        names = fs.readdirSync(p).sort();
      } catch {
        out.set(rel, 'unreadable');
      }
      for (const n of names) visit(`${rel}/${n}`);
    } else if (st.isFile()) {
      try {
        out.set(rel, createHash('sha256').update(fs.readFileSync(p)).digest('hex'));
      } catch {
        out.set(rel, 'unreadable');
      }
    } else out.set(rel, 'special');
  };
  for (const t of TOP) visit(t);
  return out;
}

// Pure: the project files made, changed or removed between two snapshots, sorted.
export function changedProjectFiles(before: ProjectFiles, after: ProjectFiles): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => before.get(n) !== after.get(n)).sort();
}
