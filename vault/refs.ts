// What the vault's .git says about its branch and commits, read as files, so that `status` (what
// an operator types most) starts no git process for the common answer. The vault is the session's:
// links, odd sizes and names git would refuse read as null, and git is asked instead.
import fs from 'node:fs';
import path from 'node:path';

// A ref name as git allows it, narrowed: no `..`, no leading dot or slash, plain characters.
const REF = /^(?![./])(?!.*\.\.)(?!.*\/\/)[\w./-]+(?<![./])$/;
const SHA = /^([0-9a-f]{40}|[0-9a-f]{64})$/;

function smallFile(file: string, max: number): string | null {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && st.size <= max ? fs.readFileSync(file, 'utf8') : null;
  } catch {
    return null;
  }
}

// The branch `.git/HEAD` names; null for anything else (a detached HEAD, a .git file, a link).
export function headBranch(vault: string): string | null {
  const m = /^ref: refs\/heads\/(\S+)\n?$/.exec(smallFile(path.join(vault, '.git', 'HEAD'), 1024) ?? '');
  return m && REF.test(m[1]) ? m[1] : null;
}

// The commit a full ref name points at, loose or packed; null when it cannot be read plainly.
export function refSha(vault: string, ref: string): string | null {
  if (!REF.test(ref)) return null;
  const loose = smallFile(path.join(vault, '.git', ref), 128);
  if (loose !== null) return SHA.test(loose.trim()) ? loose.trim() : null;
  for (const line of (smallFile(path.join(vault, '.git', 'packed-refs'), 4 * 1024 * 1024) ?? '').split('\n')) {
    const [sha, name] = line.split(' ');
    if (name === ref && SHA.test(sha)) return sha;
  }
  return null;
}

// Whether a ref may lie under one of `prefixes` (like `refs/heads/nightshift/`): false only when
// the refs, read as files, surely hold none there, loose or packed; null when they cannot be read
// plainly (a .git file, the reftable format, an odd prefix), where git must be asked.
export function anyRefUnder(vault: string, prefixes: string[]): boolean | null {
  const dir = path.join(vault, '.git');
  try {
    if (!fs.lstatSync(dir).isDirectory() || fs.existsSync(path.join(dir, 'reftable'))) return null;
  } catch {
    return null;
  }
  for (const prefix of prefixes) {
    if (!prefix.endsWith('/') || !REF.test(prefix.slice(0, -1))) return null;
    try {
      const st = fs.lstatSync(path.join(dir, prefix));
      // A folder left empty holds no ref; anything else may.
      if (!st.isDirectory() || fs.readdirSync(path.join(dir, prefix)).length) return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR') return null;
    }
  }
  if (!fs.existsSync(path.join(dir, 'packed-refs'))) return false;
  const packed = smallFile(path.join(dir, 'packed-refs'), 4 * 1024 * 1024);
  if (packed === null) return null;
  return packed.split('\n').some((line) => prefixes.some((p) => line.split(' ')[1]?.startsWith(p)));
}
