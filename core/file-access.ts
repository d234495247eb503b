// Permission and ownership problems on our files (memory database and its folder, ledger,
// state_dir, log_dir), told as such: who we run as, who owns the path, and the exact command that
// fixes it. A file that cannot be read because of its mode is healthy; "move it aside" is advice
// for a corrupt or foreign file only. The advice is pure; `accessFacts` probes the disk.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type Who = { name: string | null; uid: number };
export type AccessFacts = {
  // What the path is to us, e.g. "memory database", "state_dir".
  what: string;
  // The path that stops us (the file, or the folder it lives in).
  path: string;
  kind: 'file' | 'folder';
  // What we need of it and do not have.
  need: Array<'read' | 'write' | 'enter'>;
  user: Who;
  owner: Who;
  mode: number;
  // The folder to make, when `path` is the existing folder it would be made in: the fix is to
  // make that one as the user (install -d -o), never to chown a folder of the system's.
  missing?: string;
  // A folder on the way to `path` (below /) is the user's: `path` is inside their site, so a
  // chown of a root-made leftover repairs it. False: a folder of the system's (/etc/systemd/system).
  insideOurs?: boolean;
  // Who owns the folder `path` lives in (state_dir for the ledger): a root-made leftover there goes
  // back to them, not to whoever met it.
  folderOwner?: Who;
};

// Folders a site lives in, never the site itself: no advice hands one to a user.
const SYSTEM_FOLDERS = new Set(['/', '/etc', '/opt', '/srv', '/var', '/var/lib', '/var/log', '/usr', '/usr/local', '/home', '/root', '/run', '/mnt', '/media', '/tmp', '/var/tmp']);

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');
const name = (w: Who) => (w.name ? `${w.name} (uid ${w.uid})` : `uid ${w.uid}`);
// A path as one shell word, quoted only when it must be.
export const shellWord = (p: string) => (/^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`);

// Running as another user: what to run instead (the units for the owner, nightshift by hand as them).
export const runAsOwner = (owner: string, asRoot: boolean) =>
  `it belongs to ${owner}: run nightshift as them (${asRoot ? '' : 'sudo '}runuser -u ${owner} -- nightshift …), and install the units for them (nightshift systemd install --user ${owner}); a chown would take the site from ${owner}`;

// Root's leftover in another user's folder (root's status once made their ledger): back to them,
// and nightshift run as them.
const leftoverOf = (owner: string, target: string) =>
  `root made it in ${owner}'s folder: give it back (sudo chown ${owner} ${target}) and run nightshift as ${owner} (sudo runuser -u ${owner} -- nightshift …)`;

// Pure: the message for one access problem, with the fix: chmod (ours, but its mode shuts us out);
// chown to us only for a root-made leftover inside our own site; for another user's site, run as
// that user; for a folder of the system's, run as root. Never a chown of a system folder or of
// another user's site.
export function accessAdvice(f: AccessFacts, target?: string): string {
  const bits = f.need.map((n) => (n === 'read' ? 'r' : n === 'write' ? 'w' : 'x')).join('');
  // A folder of ours holds files made by the same hand (a database and its -wal, -shm): -R.
  const recursive = f.kind === 'folder' ? '-R ' : '';
  const me = f.user.name ?? String(f.user.uid);
  const ours = !!f.what || !!f.insideOurs;
  const fix = f.missing
    ? `sudo install -d -o ${me} ${shellWord(f.missing)}`
    : f.owner.uid === f.user.uid
      ? `chmod u+${bits} ${shellWord(f.path)}`
      : f.owner.uid !== 0
        ? runAsOwner(f.owner.name ?? String(f.owner.uid), f.user.uid === 0)
        : f.folderOwner && f.folderOwner.uid !== 0 && f.folderOwner.uid !== f.user.uid && !SYSTEM_FOLDERS.has(f.path)
          ? leftoverOf(f.folderOwner.name ?? String(f.folderOwner.uid), `${recursive}${shellWord(f.path)}`)
          : ours && !SYSTEM_FOLDERS.has(f.path)
          ? `sudo chown ${recursive}${me} ${shellWord(f.path)}`
          : `it is a folder of the system's, root's to write: run the command as root (sudo nightshift …), never chown it`;
  const about = target && target !== f.path ? ` (for ${target})` : '';
  return (
    `Permission denied: nightshift runs as ${name(f.user)} and cannot ${f.need.join(' or ')} the ${f.what ? `${f.what} ` : ''}${f.kind} ${f.path}${about}, ` +
    `owned by ${name(f.owner)} with mode ${octal(f.mode)}. The file is not damaged; fix the access: ${fix}`
  );
}

// The name /etc/passwd gives `uid` (null: none).
export function userName(uid: number): string | null {
  try {
    const me = os.userInfo();
    if (me.uid === uid) return me.username;
  } catch {
    // no passwd entry
  }
  try {
    const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.split(':')[2] === String(uid));
    return line ? line.split(':')[0] : null;
  } catch {
    return null;
  }
}

const can = (p: string, mode: number) => {
  try {
    fs.accessSync(p, mode);
    return true;
  } catch {
    return false;
  }
};

// Whether we may write `p` now (root may always): a look writes only what is ours to write.
export const canWrite = (p: string) => can(p, fs.constants.W_OK);

// The first path on the way to `target` that shuts us out: an ancestor we cannot enter, the folder
// we cannot write (new files, SQLite's -wal and -shm), or the file we cannot read or write.
// Null when nothing does (root passes every permission check).
export function accessFacts(target: string, what: string, opts: { folder?: boolean } = {}): AccessFacts | null {
  const abs = path.resolve(target);
  const uid = process.getuid?.() ?? -1;
  const user: Who = { name: userName(uid), uid };
  const facts = (p: string, need: AccessFacts['need']): AccessFacts => {
    const st = fs.statSync(p);
    const up = fs.statSync(path.dirname(p)).uid;
    return { what, path: p, kind: st.isDirectory() ? 'folder' : 'file', need, user, owner: { name: userName(st.uid), uid: st.uid }, mode: st.mode, insideOurs: insideOurs(p), folderOwner: { name: userName(up), uid: up } };
  };
  const chain: string[] = [];
  for (let d = path.dirname(abs); ; d = path.dirname(d)) {
    chain.unshift(d);
    if (d === path.dirname(d)) break;
  }
  const insideOurs = (p: string) => chain.some((d) => d !== '/' && (p === d || p.startsWith(`${d}/`)) && p !== d && ownedBy(d, uid));
  for (const d of chain) if (fs.existsSync(d) && !can(d, fs.constants.X_OK)) return facts(d, ['enter']);
  // The nearest folder that exists is where the target (or its missing folders) would be made.
  let parent = path.dirname(abs);
  while (!fs.existsSync(parent) && parent !== path.dirname(parent)) parent = path.dirname(parent);
  // The folder to make in it: the target (a folder) or the target's folder (a file).
  const toMake = opts.folder ? abs : path.dirname(abs);
  if (!fs.existsSync(abs)) return can(parent, fs.constants.W_OK) ? null : { ...facts(parent, ['write']), ...(toMake !== parent && !fs.existsSync(toMake) ? { missing: toMake } : {}) };
  const isDir = fs.statSync(abs).isDirectory();
  // A database file needs its folder writable too (its journal lives beside it); the folder is
  // named first, since a chown -R of it fixes the file as well.
  if (!isDir && !opts.folder && !can(path.dirname(abs), fs.constants.W_OK)) return facts(path.dirname(abs), ['write']);
  const need: AccessFacts['need'] = [];
  if (!can(abs, fs.constants.R_OK)) need.push('read');
  if (!can(abs, fs.constants.W_OK)) need.push('write');
  if (isDir && !can(abs, fs.constants.X_OK)) need.push('enter');
  return need.length ? facts(abs, need) : null;
}

// The advice for `target` when an access problem explains a failure, else null.
export function accessProblem(target: string, what: string, opts: { folder?: boolean } = {}): string | null {
  try {
    const f = accessFacts(target, what, opts);
    return f ? accessAdvice(f, path.resolve(target)) : null;
  } catch {
    return null;
  }
}

const ownedBy = (p: string, uid: number) => {
  try {
    return fs.statSync(p).uid === uid;
  } catch {
    return false;
  }
};

// Pure: root refused a change to another user's file (EPERM: the units for root keep no
// CAP_FOWNER), as when a site made for a service user is run by units for root.
export function foreignOwnerAdvice(p: string, owner: Who): string {
  return `Permission denied: nightshift runs as root and may not change ${p}, owned by ${name(owner)}: ${runAsOwner(owner.name ?? String(owner.uid), true)}`;
}

// An errno error (EACCES, EPERM) from fs on one of our paths: the advice, else null.
export function errnoAccessProblem(err: unknown, what: string): string | null {
  const e = err as NodeJS.ErrnoException;
  if (!e || (e.code !== 'EACCES' && e.code !== 'EPERM') || typeof e.path !== 'string') return null;
  const advice = accessProblem(e.path, what);
  if (advice || process.getuid?.() !== 0) return advice;
  try {
    const uid = fs.statSync(e.path).uid;
    return uid === 0 ? null : foreignOwnerAdvice(e.path, { name: userName(uid), uid });
  } catch {
    return null;
  }
}

// Root writing into a folder another user owns (the service user's log_dir, when the operator runs
// `nightshift run` as root): what it makes there is given to that folder's owner, so the units,
// running as that user, can still append to today's log. Best effort: a failure changes nothing.
export function giveToFolderOwner(p: string, fd?: number): void {
  if (process.getuid?.() !== 0) return;
  try {
    const dir = fs.statSync(path.dirname(p));
    if (dir.uid === 0) return;
    if (fd === undefined) fs.chownSync(p, dir.uid, dir.gid);
    else fs.fchownSync(fd, dir.uid, dir.gid);
  } catch {
    // the file stays root's; doctor's access check names it
  }
}

// Whole or not at all: written beside `file`, given to the folder's owner, renamed over it, so a
// reader never sees half. False when it could not be (no folder, no right to write it): for a
// file that is only ever a saving, never the record.
export function writeWhole(file: string, text: string, mode: number): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, text, { mode });
    giveToFolderOwner(tmp);
    fs.renameSync(tmp, file);
    return true;
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // nothing was left
    }
    return false;
  }
}
