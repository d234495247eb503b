// The vault's git configuration is the operator's, not the session's. Inside the sandbox the
// vault's .git is read-only; this second layer (it also holds with `sandbox: none`) puts back any
// config a session changed before nightshift's own git reads it, so a planted filter, fsmonitor,
// pager, sshCommand or include never runs in the supervisor.
import fs from 'node:fs';
import path from 'node:path';

// The files through which git configuration can run a command or point elsewhere.
const WATCHED = ['config', 'config.worktree', 'commondir'];

export type GitConfigGuard = { restore(): string[] };

// Snapshots the watched files of the vault's git dir (and `.git` itself, when it is a file).
export function guardGitConfig(vault: string): GitConfigGuard {
  const dotGit = path.join(vault, '.git');
  const files = fs.existsSync(dotGit) && fs.statSync(dotGit).isDirectory() ? WATCHED.map((f) => path.join(dotGit, f)) : [dotGit];
  const saved = new Map(files.map((f) => [f, fs.existsSync(f) && !fs.lstatSync(f).isDirectory() ? fs.readFileSync(f) : null]));
  return {
    // Puts every watched file back as it was; returns the ones that had changed.
    restore() {
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
