// Lines nightshift adds to the vault's `.git/info/exclude` (never the operator's .gitignore): its
// own folder, and files left out of a commit for their size. Written only in a repository
// nightshift trusts, and never through a link: a session's `.git/info/exclude` ->
// `../nightshift.yaml` would have the supervisor append to its own config.
import fs from 'node:fs';
import path from 'node:path';
import { untrustedGitMarker } from './git-guard.js';

// nightshift's own folder in the vault (the session state, a quarantine): never tracked.
export const OWN_DIR = '.nightshift';
export const OWN_EXCLUDE = `/${OWN_DIR}/`;
// The heading above the files left out for their size; the operator removes a line to commit one.
export const LEFT_OUT_HEADING = '# nightshift: left out of commits, over limits.commit_file (remove the line and git add -f to commit one)';

// Pure: a gitignore line that matches exactly this path from the top (every special character
// escaped); null when a path cannot be written as one (a newline in its name).
export function literalPattern(rel: string): string | null {
  if (/[\n\r]/.test(rel) || !rel) return null;
  let p = rel.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
  p = p.replace(/ +$/, (s) => s.replace(/ /g, '\\ '));
  return `/${p}`;
}

// Pure: the paths the lines under LEFT_OUT_HEADING name (unescaped), for the state and doctor.
export function leftOutPaths(text: string): string[] {
  const lines = text.split('\n');
  const out: string[] = [];
  let inside = false;
  for (const l of lines) {
    if (l === LEFT_OUT_HEADING) inside = true;
    else if (inside && l.startsWith('/')) out.push(l.slice(1).replace(/\\(.)/g, '$1'));
    else if (inside) inside = false;
  }
  return out;
}

// The vault's .git when nightshift trusts it: a real folder, and no session left one that could
// not be moved aside (the untrusted marker). null otherwise.
export function trustedGitDir(vault: string, stateDir: string): string | null {
  if (fs.existsSync(untrustedGitMarker(stateDir))) return null;
  const dotGit = path.join(vault, '.git');
  return fs.lstatSync(dotGit, { throwIfNoEntry: false })?.isDirectory() ? dotGit : null;
}

// Adds each of `lines` not there yet to .git/info/exclude, under `heading`. false: no trusted
// repository (nothing written); throws when the file or its folder is a link, or not a plain file
// of its own (a hard link to another file). No git runs for it.
export function addExcludes(vault: string, stateDir: string, heading: string, lines: string[]): boolean {
  const dotGit = trustedGitDir(vault, stateDir);
  if (!dotGit) return false;
  const info = path.join(dotGit, 'info');
  const st = fs.lstatSync(info, { throwIfNoEntry: false });
  if (!st) fs.mkdirSync(info);
  else if (!st.isDirectory()) throw new Error(`${info} is not a folder (a link or a file): not written through`);
  if (fs.realpathSync(info) !== path.join(fs.realpathSync(dotGit), 'info')) throw new Error(`${info} leads outside the vault's .git: not written through`);
  const file = path.join(info, 'exclude');
  const { O_RDWR, O_CREAT, O_APPEND, O_NOFOLLOW } = fs.constants;
  let fd: number;
  try {
    fd = fs.openSync(file, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`${file} is a link: not written through`);
    throw err;
  }
  try {
    const fst = fs.fstatSync(fd);
    if (!fst.isFile()) throw new Error(`${file} is not a regular file: not written to`);
    if (fst.nlink !== 1) throw new Error(`${file} has ${fst.nlink} names (a hard link): not written to`);
    const text = fs.readFileSync(fd, 'utf8');
    const have = new Set(text.split('\n').map((l) => l.trim()));
    const missing = [...new Set(lines)].filter((l) => !have.has(l) && !(l === OWN_EXCLUDE && have.has(`${OWN_DIR}/`)));
    if (!missing.length) return true;
    // The heading goes above every batch: what reads the file back takes the lines under it.
    fs.writeSync(fd, `${text && !text.endsWith('\n') ? '\n' : ''}${[heading, ...missing].join('\n')}\n`);
    return true;
  } finally {
    fs.closeSync(fd);
  }
}

// The exclude file's text in a trusted repository ('' when there is none, or it is not a plain file).
export function readExcludes(vault: string, stateDir: string): string {
  const dotGit = trustedGitDir(vault, stateDir);
  if (!dotGit) return '';
  const file = path.join(dotGit, 'info', 'exclude');
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  return st?.isFile() && st.size < 4 * 1024 * 1024 ? fs.readFileSync(file, 'utf8') : '';
}
