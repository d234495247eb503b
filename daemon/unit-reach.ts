// Whether the units can run what their ExecStart= names, and write the site, as their own user
// under their own sandbox: checked by `systemd install` (which refuses, writing nothing) and by
// `doctor --prefix`. Once, nightshift installed under /var/tmp passed every check, then every tick
// and its alarm failed with "Cannot find module": PrivateTmp= hides /tmp and /var/tmp. The
// decisions are pure over plain facts; `pathFacts` and `unitUser` read the disk.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { shellWord } from '../core/file-access.js';
import { foundIn, ROOT } from './systemd.js';

// What the units' sandbox hides (every unit has PrivateTmp=yes: a /tmp and /var/tmp of its own).
// ProtectSystem=strict and ProtectHome=read-only leave paths readable and executable.
export const HIDDEN_BY_UNITS: Array<{ dir: string; by: string }> = [
  { dir: '/tmp', by: 'PrivateTmp=' },
  { dir: '/var/tmp', by: 'PrivateTmp=' },
];

export type Node = { path: string; uid: number; gid: number; mode: number };
// One path an ExecStart= names. `chain`: every folder from / down to the real file, then the file
// (null: the path does not exist).
export type PathFacts = { what: string; path: string; real: string | null; need: 'run' | 'read'; chain: Node[] };
export type UnitUser = { name: string; uid: number; gid: number; groups: number[] };

const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
export const hiddenBy = (p: string) => HIDDEN_BY_UNITS.find((h) => under(path.resolve(p), h.dir)) ?? null;

// The permission bits that apply to `u` for a node: owner's, group's or other's.
function bits(n: Node, u: UnitUser): number {
  if (n.uid === u.uid) return (n.mode >> 6) & 7;
  if (n.gid === u.gid || u.groups.includes(n.gid)) return (n.mode >> 3) & 7;
  return n.mode & 7;
}

// Pure: one line per path the units could not use, with why and the fix.
export function reachProblems(paths: PathFacts[], u: UnitUser): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const hide = hiddenBy(p.path) ?? (p.real ? hiddenBy(p.real) : null);
    if (hide) {
      const at = p.real && p.real !== p.path ? `${p.path} (${p.real})` : p.path;
      out.push(`${p.what} ${at} is under ${hide.dir}, which the units' ${hide.by} hides from them (each unit gets an empty ${hide.dir} of its own), so they could not start it: install it elsewhere, e.g. under /opt or /usr/local`);
      continue;
    }
    if (!p.real) {
      out.push(`${p.what} ${p.path} does not exist: the units could not start it`);
      continue;
    }
    if (u.uid === 0) {
      const file = p.chain.at(-1)!;
      if (p.need === 'run' && !(file.mode & 0o111)) out.push(`${p.what} ${p.real} has no run bit (mode ${(file.mode & 0o7777).toString(8).padStart(4, '0')}): chmod +x ${shellWord(p.real)}`);
      continue;
    }
    const shut = p.chain.slice(0, -1).find((d) => !(bits(d, u) & 1));
    if (shut) {
      out.push(`${p.what} ${p.real}: the units' user ${u.name} cannot enter the folder ${shut.path} (owned by uid ${shut.uid}, mode ${(shut.mode & 0o7777).toString(8).padStart(4, '0')}), so they could not start it: install it where ${u.name} can reach it (e.g. under /opt or /usr/local), or open the folder to others (chmod o+x ${shellWord(shut.path)})`);
      continue;
    }
    const file = p.chain.at(-1)!;
    const b = bits(file, u);
    const need = p.need === 'run' ? 1 : 4;
    if (!(b & need)) out.push(`${p.what} ${p.real}: the units' user ${u.name} cannot ${p.need} it (owned by uid ${file.uid}, mode ${(file.mode & 0o7777).toString(8).padStart(4, '0')}): chmod o+${p.need === 'run' ? 'rx' : 'r'} ${shellWord(p.real)}, or install it where ${u.name} may ${p.need} it`);
  }
  return out;
}

// The facts for one path, from the disk.
export function pathFacts(what: string, p: string, need: PathFacts['need']): PathFacts {
  let real: string | null;
  try {
    real = fs.realpathSync(p);
  } catch {
    return { what, path: p, real: null, need, chain: [] };
  }
  const parts = real.split('/').filter(Boolean);
  const chain: Node[] = [];
  for (let i = 0; i <= parts.length; i++) {
    const at = `/${parts.slice(0, i).join('/')}`;
    const st = fs.statSync(at);
    chain.push({ path: at, uid: st.uid, gid: st.gid, mode: st.mode });
  }
  return { what, path: p, real, need, chain };
}

// The units' user from /etc/passwd and /etc/group (its primary group and the groups naming it).
export function unitUser(name: string, files = { passwd: '/etc/passwd', group: '/etc/group' }): UnitUser | null {
  const read = (f: string) => {
    try {
      return fs.readFileSync(f, 'utf8').split('\n');
    } catch {
      return [];
    }
  };
  const line = read(files.passwd).find((l) => l.split(':')[0] === name);
  if (!line) return name === 'root' ? { name, uid: 0, gid: 0, groups: [] } : null;
  const [, , uid, gid] = line.split(':');
  const groups = read(files.group)
    .map((l) => l.split(':'))
    .filter((g) => g.length >= 4 && g[3].split(',').includes(name))
    .map((g) => Number(g[2]));
  return { name, uid: Number(uid), gid: Number(gid), groups };
}

export type SiteFolder = { what: string; path: string; owner: { uid: number; name: string | null } };

// Folders a real site's own folder may sit in, never to be handed to a service user.
const SYSTEM_FOLDERS = new Set(['/', '/etc', '/opt', '/srv', '/var', '/var/lib', '/var/log', '/usr', '/usr/local', '/home', '/root', '/run', '/mnt', '/media']);

// Pure: the site's folders that do not belong to the units' user, each with its owner and the fix.
// The config folder may also be root's (the units only read it). Never a chown of a folder of
// another user's (it takes their site from them) or of a system folder: the fix is to install the
// units for the owner, or to run nightshift as the owner.
export function ownershipProblems(folders: SiteFolder[], u: UnitUser): string[] {
  const out: string[] = [];
  for (const f of folders) {
    if (f.owner.uid === u.uid) continue;
    if (f.what === 'the config folder' && f.owner.uid === 0) continue;
    const owner = f.owner.name ?? `uid ${f.owner.uid}`;
    const runAs = f.owner.name ?? String(f.owner.uid);
    const head = `${f.what} ${f.path} belongs to ${owner}, not to ${u.name}, the user the units run as (they would fail writing there)`;
    if (f.owner.uid === 0 && !SYSTEM_FOLDERS.has(path.resolve(f.path))) {
      out.push(`${head}: give the site's folder to ${u.name} (chown -R ${u.name}: ${shellWord(f.path)}), or install the units for root (--user root)`);
    } else if (f.owner.uid === 0) {
      out.push(`${head}: it is a folder of the system's, never to be given away: point the config at a folder of the site's own (e.g. /var/lib/nightshift/${path.basename(f.path) || 'state'})`);
    } else {
      out.push(`${head}: install the units for its owner (nightshift systemd install --user ${runAs}), and run nightshift by hand as them (runuser -u ${runAs} -- nightshift …)`);
    }
  }
  return out;
}

// The paths the units' ExecStart= names (node, nightshift's bin, the CLI as the units' PATH finds
// it) and the site's folders, checked as `user` under the units' sandbox. One line per problem.
export function unitReach(config: Config, user: string, node: string, installPath: string, bin = path.join(ROOT, 'dist', 'cli', 'bin.js')): string[] {
  const u = unitUser(user);
  const cli = foundIn(config.claude.command, installPath);
  const paths = [
    pathFacts('node', node, 'run'),
    pathFacts('nightshift', bin, 'read'),
    ...(cli ? [pathFacts('claude.command', config.claude.command.includes('/') ? config.claude.command : path.join(cli, config.claude.command), 'run')] : []),
  ];
  const out = reachProblems(paths, u ?? { name: user, uid: -1, gid: -1, groups: [] }).filter((p) => u || / hides from them /.test(p));
  if (!u) return out;
  const folders = ([['the config folder', config.dir], ['state_dir', config.state_dir], ['log_dir', config.log_dir], ['vault', config.vault]] as const)
    .filter(([, p]) => fs.existsSync(p))
    .map(([what, p]) => {
      const uid = fs.statSync(p).uid;
      return { what, path: path.resolve(p), owner: { uid, name: nameOfUid(uid) } };
    });
  return [...out, ...ownershipProblems(folders, u)];
}

function nameOfUid(uid: number): string | null {
  try {
    return fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.split(':')[2] === String(uid))?.split(':')[0] ?? null;
  } catch {
    return null;
  }
}
