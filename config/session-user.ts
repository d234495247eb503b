// Who a walled session runs as. bwrap's --cap-drop ALL leaves uid 0 a uid 0: run by a root
// supervisor, the session's owner checks pass on root's own files (/etc/shadow, a 0600 key), and
// under the units bwrap as root cannot make its namespaces at all (no CAP_SYS_ADMIN). So a root
// supervisor starts the wall as `session_user`, an unprivileged system user of nightshift's own
// (bwrap then makes a user namespace, as for any other user); a supervisor that is not root runs
// the session as itself, as before.
//
// What that user may write: the vault and hooks.extra_dirs (by their group, the user's own: see
// `vaultFix`) and its own HOME; the session's folder is made its own, the endpoints' sockets in it
// too (0600: the session and root, no one else). bwrap runs as that user before the wall is up, so
// every folder it binds must be reachable by it: `reachProblems` says which is not, and how to fix it.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './schema.js';
import { passwdEntry, useraddCommand } from '../core/passwd.js';
import { runAsOwner, userName } from '../core/file-access.js';

export type SessionUser = { name: string; uid: number; gid: number };

export const DEFAULT_SESSION_USER = 'nightshift-session';

export type SessionUserChoice = { user: SessionUser | null; problem: string | null };

// The user a walled session runs as (null: the supervisor's own), or why none can be had.
// `uid`: the supervisor's (a seam for tests); `passwd`: where users are read.
export function sessionUserFor(config: Pick<Config, 'sandbox' | 'session_user' | 'file'>, o: { uid?: number; passwd?: string } = {}): SessionUserChoice {
  const uid = o.uid ?? process.getuid?.() ?? -1;
  if (uid !== 0 || config.sandbox !== 'bwrap') return { user: null, problem: null };
  const name = config.session_user;
  const entry = passwdEntry(name, o.passwd);
  if (!entry) return { user: null, problem: `the supervisor runs as root and its sessions run as session_user \`${name}\`, which does not exist: run \`${useraddCommand(name)}\` (or \`nightshift systemd install\` as root makes it), or name another in ${config.file}` };
  if (entry.uid === 0 || entry.gid === 0) return { user: null, problem: `session_user \`${name}\` has uid ${entry.uid} and gid ${entry.gid}: a session must never run as root or with root's group; make an unprivileged user: \`${useraddCommand(DEFAULT_SESSION_USER)}\`` };
  return { user: entry, problem: null };
}

// Pure over a stat: whether `u` (its own gid only: the spawn clears every other group) has `bits`
// (4 read, 2 write, 1 search) on it.
export function allows(st: Pick<fs.Stats, 'uid' | 'gid' | 'mode'>, u: SessionUser, bits: number): boolean {
  const cls = st.uid === u.uid ? (st.mode >> 6) & 7 : st.gid === u.gid ? (st.mode >> 3) & 7 : st.mode & 7;
  return (cls & bits) === bits;
}

const octal = (m: number) => `0${(m & 0o7777).toString(8)}`;
// A path as a shell word, for the commands the fixes name.
const sh = (p: string) => (/^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`);

// The first folder above `p` that `u` cannot pass through, or null. Folders that do not exist yet
// are skipped (root makes them).
export function blockedAbove(p: string, u: SessionUser): { dir: string; st: fs.Stats } | null {
  const parts = path.resolve(p).split('/').filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const dir = `/${parts.slice(0, i).join('/')}`;
    const st = fs.statSync(dir, { throwIfNoEntry: false });
    if (!st) return null;
    if (!allows(st, u, 1)) return { dir, st };
  }
  return null;
}

// What the wall need not hide from the session user: a folder or file above which it cannot pass
// (bwrap, started as that user, could not reach it to mount over it either).
export const outOfReach = (p: string, u: SessionUser) => blockedAbove(p, u) !== null;

// The commands that give the session user's group the vault (or an extra dir) to write, once:
// new folders keep the group (setgid), and nightshift's own git writes with group write kept.
export const vaultFix = (dir: string, u: SessionUser) =>
  `chgrp -R ${u.name} ${sh(dir)} && chmod -R g+rwX ${sh(dir)} && find ${sh(dir)} -type d -exec chmod g+s {} +`;

// Whose the site is when it is not root's: state_dir's owner, else the vault's (the session user,
// which a vault may be given to, is not an owner). Null: root's site, or none made yet.
export function siteOwner(config: Pick<Config, 'vault' | 'state_dir'>, u: SessionUser | null): { what: string; path: string; name: string; uid: number } | null {
  for (const [what, p] of [['state_dir', config.state_dir], ['the vault', config.vault]]) {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (st && st.uid !== 0 && st.uid !== u?.uid) return { what, path: p, name: userName(st.uid) ?? String(st.uid), uid: st.uid };
  }
  return null;
}

// Root in another user's site: nightshift runs as that owner (its sessions then run as them, no
// session_user), never a chgrp of their vault by root.
export const foreignSite = (o: NonNullable<ReturnType<typeof siteOwner>>) =>
  `${o.what} ${o.path} is owned by ${o.name} (uid ${o.uid}), not root: ${runAsOwner(o.name, true)}`;

// What keeps the session user from the wall's folders: the vault and extra dirs it must write,
// the state dir its own folder lies in (nightshift opens state_dir itself), the CLI it must run.
// One line each, with the fix; empty when all is well.
export function reachProblems(config: Pick<Config, 'vault' | 'state_dir' | 'hooks'>, u: SessionUser, cli: string | null): string[] {
  // Only root's sessions run as session_user: in a site of another user's, the fix is to run as them.
  const owner = siteOwner(config, u);
  if (owner) return [foreignSite(owner)];
  const out: string[] = [];
  const through = (what: string, p: string) => {
    const b = blockedAbove(p, u);
    if (b) out.push(`${what} ${p} lies in ${b.dir} (mode ${octal(b.st.mode)}, uid ${b.st.uid}, gid ${b.st.gid}), which session_user ${u.name} cannot pass through: \`chmod o+x ${sh(b.dir)}\`, or move it`);
    return !b;
  };
  for (const [what, dir] of [['the vault', config.vault], ...config.hooks.extra_dirs.map((d) => ['hooks.extra_dirs', d])] as Array<[string, string]>) {
    const st = fs.statSync(dir, { throwIfNoEntry: false });
    if (!st) continue;
    if (through(what, dir) && !allows(st, u, 3)) out.push(`${what} ${dir} (mode ${octal(st.mode)}, uid ${st.uid}, gid ${st.gid}) is not writable by session_user ${u.name}: \`${vaultFix(dir, u)}\``);
  }
  through('state_dir', config.state_dir);
  if (cli && through('the CLI', cli)) {
    const st = fs.statSync(cli, { throwIfNoEntry: false });
    if (st && !allows(st, u, 1)) out.push(`the CLI ${cli} (mode ${octal(st.mode)}) cannot be run by session_user ${u.name}: \`chmod o+rx ${sh(cli)}\`, or install it where every user can run it`);
  }
  return out;
}

// state_dir and its sessions folder let the session user through, and no other user: their group
// becomes the session user's, with search only (0710: never a listing). What else lies in
// state_dir keeps root's group, so passing through opens nothing of it; inside the wall state_dir
// is hidden anyway. bwrap, started as that user, binds the session's folder from there.
export function openSessionsDir(stateDir: string, sessions: string, u: SessionUser): void {
  fs.mkdirSync(sessions, { recursive: true });
  for (const d of [stateDir, sessions]) {
    const st = fs.statSync(d);
    if (allows(st, u, 1)) continue;
    if (st.gid !== u.gid) fs.chownSync(d, st.uid, u.gid);
    fs.chmodSync(d, (st.mode & 0o7777) | 0o010);
  }
}

// The mode bits of state_dir the session user's group may have (search), when that is its group.
export const sessionGroupBits = (st: Pick<fs.Stats, 'gid'>, u: SessionUser | null) => (u && st.gid === u.gid ? 0o010 : 0);

// The session's folder, everything in it (HOME, settings, state, the endpoints' sockets), given
// to the session user: the wall binds it read-only, but for HOME.
export function giveToSession(dir: string, u: SessionUser): void {
  fs.chownSync(dir, u.uid, u.gid);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) giveToSession(p, u);
    else fs.lchownSync(p, u.uid, u.gid);
  }
}
