// After a forget, the places that still quote the forgotten text: the audit rows about the
// deleted memories, and the session-state copies written beside transcripts and into the vault.
// The rewriting is pure; the file and table edges are thin.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';

export const FORGOTTEN = '[forgotten]';

// Keys of an audit row about a memory that carry its words.
const TEXT_KEYS = new Set(['text', 'note', 'resolution', 'source', 'reason', 'tags']);

// Pure: `value` with each string that holds a forgotten text replaced, and, when `aboutForgotten`,
// every text-bearing key's value too.
export function redactValue(value: unknown, isForgotten: (s: string) => boolean, aboutForgotten: boolean, key = ''): unknown {
  if (typeof value === 'string') return (aboutForgotten && TEXT_KEYS.has(key)) || isForgotten(value) ? FORGOTTEN : value;
  if (Array.isArray(value)) return aboutForgotten && TEXT_KEYS.has(key) ? FORGOTTEN : value.map((v) => redactValue(v, isForgotten, aboutForgotten, key));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, isForgotten, aboutForgotten, k)]));
  return value;
}

// Pure: a session-state text with every line that names a deleted memory (`#12`) or quotes a
// forgotten text replaced. Returns null when nothing changed.
export function redactStateText(text: string, ids: ReadonlySet<number>, isForgotten: (line: string) => boolean): string | null {
  let changed = false;
  const out = text.split('\n').map((line) => {
    const named = [...line.matchAll(/#(\d+)\b/g)].some((m) => ids.has(Number(m[1])));
    if (!named && !isForgotten(line)) return line;
    changed = true;
    const indent = /^\s*(?:[-*]\s)?/.exec(line)![0];
    return `${indent}${FORGOTTEN}`;
  });
  return changed ? out.join('\n') : null;
}

/**
 * Inside the forget's transaction: audit rows about `ids` (target `memory:N`, or a list naming
 * them) lose their text-bearing values, and any row quoting a forgotten text loses that string.
 * The log is append-only by trigger; the triggers are lifted for this one rewrite and put back as
 * they were. Returns how many rows were rewritten.
 */
export function redactAudit(db: Database.Database, ids: number[], texts: string[]): number {
  const idSet = new Set(ids);
  const about = (target: string | null) => {
    const m = /^memor(?:y|ies):([\d,]+)$/.exec(target ?? '');
    return !!m && m[1]!.split(',').some((x) => idSet.has(Number(x)));
  };
  const quoted = texts.filter((t) => t.trim().length >= 3);
  const isForgotten = (s: string) => quoted.some((t) => s.includes(t));
  const rows = db.prepare('SELECT id, target, before, after FROM audit').all() as Array<{ id: number; target: string | null; before: string | null; after: string | null }>;
  const changes: Array<{ id: number; before: string | null; after: string | null }> = [];
  for (const r of rows) {
    const a = about(r.target);
    if (!a && !quoted.some((t) => (r.before ?? '').includes(JSON.stringify(t).slice(1, -1)) || (r.after ?? '').includes(JSON.stringify(t).slice(1, -1)))) continue;
    const redo = (j: string | null) => (j === null ? null : JSON.stringify(redactValue(JSON.parse(j), isForgotten, a)));
    const before = redo(r.before);
    const after = redo(r.after);
    if (before !== r.before || after !== r.after) changes.push({ id: r.id, before, after });
  }
  if (!changes.length) return 0;
  const triggers = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit'").all() as Array<{ name: string; sql: string }>;
  for (const t of triggers) db.exec(`DROP TRIGGER "${t.name.replace(/"/g, '""')}"`);
  try {
    const set = db.prepare('UPDATE audit SET before = ?, after = ? WHERE id = ?');
    for (const c of changes) set.run(c.before, c.after, c.id);
  } finally {
    for (const t of triggers) db.exec(t.sql);
  }
  return changes.length;
}

/** The session-state copies a forget rewrites: beside each transcript, and the vault's current one. */
export function stateCopies(logDir: string, vault: string): string[] {
  const dir = path.join(logDir, 'transcripts');
  const beside = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.state.md')).map((f) => path.join(dir, f)) : [];
  return [...beside, path.join(vault, '.nightshift', 'session-state.md')].filter((f) => fs.existsSync(f) && fs.lstatSync(f).isFile());
}

/** Rewrites each file that quotes a forgotten memory (temp file and rename); returns those rewritten. */
export function redactStateFiles(files: string[], ids: ReadonlySet<number>, isForgotten: (line: string) => boolean): string[] {
  const done: string[] = [];
  for (const f of files) {
    const next = redactStateText(fs.readFileSync(f, 'utf8'), ids, isForgotten);
    if (next === null) continue;
    const tmp = `${f}.${process.pid}.redact`;
    fs.writeFileSync(tmp, next, { mode: fs.statSync(f).mode & 0o777 });
    fs.renameSync(tmp, f);
    done.push(f);
  }
  return done;
}
