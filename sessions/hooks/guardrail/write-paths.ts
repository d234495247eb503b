// Where a write may land: inside the vault (never its .git) or a configured extra dir, by its text
// and again by its real path, so a symlink on the way cannot carry it out. A path nightshift cannot
// resolve (`~`, a variable, a relative path after a `cd` it could not follow) counts as outside.
import fs from 'node:fs';
import path from 'node:path';
import type { GuardRoots } from './verdict.js';

// Whether `abs` is `root` or below it.
export const inside = (abs: string, root: string) => {
  const rel = path.relative(path.resolve(root), abs);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

// Why a write to `p` is not allowed, or null. Relative paths resolve against `cwd` (null: unknown).
export function outside(p: string, cwd: string | null, roots: GuardRoots): string | null {
  if (p.includes('~')) return 'a path with `~` (outside the vault)';
  if (/[$`]/.test(p)) return 'a path nightshift cannot resolve (a variable or a substitution)';
  if (!path.isAbsolute(p) && cwd === null) return 'a relative path after a `cd` nightshift cannot follow';
  const abs = path.resolve(cwd ?? '/', p);
  const vault = path.resolve(roots.vault);
  const why = (at: string, v: string, extra: string[]) => {
    if (inside(at, v)) return inside(at, path.join(v, '.git')) ? "inside the vault's .git (git is nightshift's to run)" : null;
    if (extra.some((d) => inside(at, d))) return null;
    return `outside the vault (${vault}) and the allowed dirs`;
  };
  const byText = why(abs, vault, roots.extraDirs.map((d) => path.resolve(d)));
  if (byText) return byText;
  // By text it is inside; a symlink on the way may still lead out (vault/etclink -> /etc).
  const real = realOf(abs);
  return real === abs ? null : why(real, realOf(vault), roots.extraDirs.map((d) => realOf(path.resolve(d))));
}

// The real path of `p`: its deepest existing ancestor resolved, the rest appended.
function realOf(p: string): string {
  let head = p;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(head), ...rest.reverse());
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return p;
      rest.push(path.basename(head));
      head = parent;
    }
  }
}
