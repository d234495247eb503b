// The vault's git configuration is the operator's, not the session's. Inside the sandbox the
// vault's .git is read-only; this second layer (it also holds with `sandbox: none`) puts back any
// config a session changed before nightshift's own git reads it, so a planted filter, fsmonitor,
// pager, sshCommand or include never runs in the supervisor.
import fs from 'node:fs';
import path from 'node:path';

// The files through which git configuration can run a command or point elsewhere.
const WATCHED = ['config', 'config.worktree', 'commondir'];

export type GitConfigGuard = {
  restore(): string[];
  // The vault's .git is no longer the folder (or file) it was: nothing may be written through it.
  replaced(): boolean;
};

// Snapshots the watched files of the vault's git dir (and `.git` itself, when it is a file).
export function guardGitConfig(vault: string): GitConfigGuard {
  const dotGit = path.join(vault, '.git');
  const files = fs.existsSync(dotGit) && fs.lstatSync(dotGit).isDirectory() ? WATCHED.map((f) => path.join(dotGit, f)) : [dotGit];
  const id = (() => {
    try {
      const st = fs.lstatSync(dotGit);
      return `${st.dev}:${st.ino}:${st.isSymbolicLink()}`;
    } catch {
      return null;
    }
  })();
  const isDir = files[0] !== dotGit;
  // Only a .git folder can be swapped for something else; a .git file is simply put back.
  const replaced = () => {
    if (!isDir) return false;
    try {
      const st = fs.lstatSync(dotGit);
      return `${st.dev}:${st.ino}:${st.isSymbolicLink()}` !== id;
    } catch {
      return id !== null;
    }
  };
  const saved = new Map(files.map((f) => [f, fs.existsSync(f) && !fs.lstatSync(f).isDirectory() ? fs.readFileSync(f) : null]));
  return {
    replaced,
    // Puts every watched file back as it was; returns the ones that had changed. A replaced .git
    // folder is left alone (writing through it could land anywhere a symlink points).
    restore() {
      if (replaced()) return ['.git'];
      const changed: string[] = [];
      for (const [f, before] of saved) {
        const now = fs.existsSync(f) || isLink(f) ? (fs.lstatSync(f).isFile() ? fs.readFileSync(f) : 'not a file') : null;
        if (before === null && now === null) continue;
        if (before !== null && Buffer.isBuffer(now) && before.equals(now)) continue;
        changed.push(path.relative(vault, f));
        fs.rmSync(f, { recursive: true, force: true });
        if (before !== null) fs.writeFileSync(f, before);
      }
      return changed;
    },
  };
}

function isLink(f: string): boolean {
  try {
    return fs.lstatSync(f).isSymbolicLink();
  } catch {
    return false;
  }
}

// A vault that was not a git work tree when the session began holds no repository nightshift
// trusts: a `.git` found there afterwards (made, or repaired, by the session) could carry a filter
// that runs in the next start's `git add`. It is moved out of the vault, into `quarantine`, never
// deleted; the path it went to is returned (null: there was none). Only ever renamed: a copy would
// read the FIFO or follow the link a session put there. With `quarantine` on another file system,
// it goes to `<vault>/.nightshift/quarantine/<id>/git` (a name git never opens as a repository);
// what cannot be renamed at all throws, and the caller keeps every git of ours off.
export function quarantineGitDir(vault: string, quarantine: string, id: string): string | null {
  const dotGit = path.join(vault, '.git');
  try {
    fs.lstatSync(dotGit);
  } catch {
    return null;
  }
  fs.mkdirSync(quarantine, { recursive: true, mode: 0o700 });
  const to = path.join(quarantine, '.git');
  try {
    fs.renameSync(dotGit, to);
    return to;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const local = path.join(vault, '.nightshift', 'quarantine', id);
  for (const d of [path.join(vault, '.nightshift'), path.dirname(local), local]) {
    const st = fs.lstatSync(d, { throwIfNoEntry: false });
    if (!st) fs.mkdirSync(d, { mode: 0o700 });
    else if (!st.isDirectory()) throw new Error(`${d} is not a folder (a link or a file a session put there): .git left in place`);
  }
  fs.renameSync(dotGit, path.join(local, 'git'));
  return path.join(local, 'git');
}

// Set when a session's .git could not be moved aside: until the operator removes this file, no
// start runs git in the vault.
export const untrustedGitMarker = (stateDir: string) => path.join(stateDir, 'vault-git-untrusted');
