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
