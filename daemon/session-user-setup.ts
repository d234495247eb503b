// What `init` and `systemd install --user root`, run as root, do for the user a root supervisor's
// sessions run as (config/session-user.ts): make it where missing, and give a vault they
// made themselves to its group. A vault that was there before is the operator's: it is named with
// the command that fixes it, never changed. Not run as root, they only say what to run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { passwdEntry, useraddCommand } from '../core/passwd.js';
import { reachProblems, type SessionUser } from '../config/session-user.js';

type Site = Pick<Config, 'session_user' | 'vault' | 'state_dir' | 'hooks'>;

// The session user, made with useradd when missing and `make` (as root); lines made and warnings.
export function ensureSessionUser(c: Pick<Config, 'session_user'>, o: { make: boolean; pathEnv?: string; passwd?: string }): { user: SessionUser | null; made: string[]; warnings: string[] } {
  const name = c.session_user;
  const found = passwdEntry(name, o.passwd);
  if (found) return { user: found, made: [], warnings: [] };
  if (!o.make || process.getuid?.() !== 0) {
    return { user: null, made: [], warnings: [`warning: a root supervisor runs its sessions as session_user ${name}, which does not exist: run \`${useraddCommand(name)}\` as root`] };
  }
  const r = spawnSync('sh', ['-c', useraddCommand(name)], { encoding: 'utf8', env: { PATH: o.pathEnv || '/usr/sbin:/usr/bin:/sbin:/bin' }, timeout: 30_000 });
  const user = passwdEntry(name, o.passwd);
  if (r.status !== 0 || !user) return { user: null, made: [], warnings: [`warning: \`${useraddCommand(name)}\` failed: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}; run it as root`] };
  return { user, made: [`made user ${name} (uid ${user.uid}, gid ${user.gid}): root's sessions run as it`], warnings: [] };
}

// A tree nightshift just made, given to `gid` to write: group write on everything, setgid folders
// (what is made in them later keeps the group). Links are left as they are.
export function shareWithGroup(dir: string, gid: number): void {
  const st = fs.lstatSync(dir);
  if (st.isSymbolicLink()) return;
  fs.lchownSync(dir, st.uid, gid);
  const dirBits = st.isDirectory() ? 0o2070 : st.mode & 0o100 ? 0o070 : 0o060;
  fs.chmodSync(dir, (st.mode & 0o7777) | dirBits);
  if (st.isDirectory()) for (const e of fs.readdirSync(dir)) shareWithGroup(path.join(dir, e), gid);
}

// Warnings for what keeps the session user from its work (the vault, extra dirs, state_dir's
// folders above), each with its fix.
export function sessionUserWarnings(c: Site, user: SessionUser): string[] {
  return reachProblems(c, user, null).map((p) => `warning: ${p}`);
}
