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

// One session's change to the project files, as the supervisor recorded it once the session was
// over: the names, and the first bytes of each file as it now is (data for the next state to
// quote, never to load). Kept in state_dir, which no session sees.
export type ProjectFileChange = { session: string; agent: string; at: string; files: string[]; loaded: boolean; excerpts: Array<{ file: string; text: string }> };

const LOG = 'project-files.jsonl';
const KEEP = 20;
const EXCERPT_BYTES = 400;
const EXCERPT_FILES = 4;

// The first bytes of a regular file in the vault, never through a link (O_NOFOLLOW, and a link
// planted higher up is refused by the realpath check); null for anything else.
function excerpt(vault: string, rel: string): string | null {
  const p = path.join(vault, rel);
  let fd: number | null = null;
  try {
    if (fs.realpathSync(path.dirname(p)) !== path.join(fs.realpathSync(vault), path.dirname(rel))) return null;
    fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    if (!fs.fstatSync(fd).isFile()) return null;
    const b = Buffer.alloc(EXCERPT_BYTES);
    const n = fs.readSync(fd, b, 0, EXCERPT_BYTES, 0);
    return b.subarray(0, n).toString('utf8');
  } catch {
    return null;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

// Appends a session's change (the last KEEP are kept); the excerpts are redacted before written.
export function recordProjectFileChange(stateDir: string, vault: string, c: Omit<ProjectFileChange, 'excerpts'>, redact: (t: string) => string): void {
  const excerpts = c.files.flatMap((file) => {
    const text = excerpt(vault, file);
    return text === null ? [] : [{ file, text: redact(text) }];
  }).slice(0, EXCERPT_FILES);
  const all = [...readProjectFileChanges(stateDir), { ...c, excerpts }].slice(-KEEP);
  const file = path.join(stateDir, LOG);
  fs.writeFileSync(`${file}.tmp`, all.map((x) => JSON.stringify(x)).join('\n') + '\n', { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}

// The recorded changes, oldest first; a line that does not parse is skipped.
export function readProjectFileChanges(stateDir: string): ProjectFileChange[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(stateDir, LOG), 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((l) => {
    try {
      const x = JSON.parse(l);
      return x && typeof x.session === 'string' && Array.isArray(x.files) ? [x as ProjectFileChange] : [];
    } catch {
      return [];
    }
  });
}
