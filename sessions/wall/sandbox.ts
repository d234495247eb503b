// The wall around a session: bubblewrap with the vault (and hooks.extra_dirs) writable, the vault's
// .git read-only, the rest of the file system read-only, the supervisor's state, logs, config, env
// file and home invisible, a private HOME and /tmp, a PID namespace that dies with its parent, and
// a seccomp filter (./seccomp.ts) that keeps the session's processes out of each other's (with
// each Bash command in a Landlock domain of its own, ./landlock.ts, set up in ./guest.ts).
// The guardrail hook tells the model why; this is what holds when the model does not listen.
import fs from 'node:fs';
import path from 'node:path';
import { runChild } from '../../core/child-process.js';
import type { Config } from '../../config/schema.js';
import { findPerl } from '../run/reaper.js';
import { inDomain, PREFIX_FAILED_RE } from './landlock.js';
import { BRIDGE_FAILED_RE, peerChecked } from './bridge.js';
import { seccompProgram } from './seccomp.js';
import { sessionUserFor } from '../../config/session-user.js';

export type SandboxMode = 'bwrap' | 'none';

export type SandboxLayout = {
  vault: string;
  // Writable beside the vault (hooks.extra_dirs).
  writable: string[];
  // Folders whose contents the session must not see: state_dir, log_dir, the operator's home.
  hidden: string[];
  // Single files replaced by an empty one: the config file, its env file, a memory db kept elsewhere.
  hiddenFiles: string[];
  // Read-only even though they lie under a hidden folder (the CLI itself, resolv.conf's target).
  readable: string[];
  // The host's paths the session sees, read-only, and nothing else of the host (wall-layout.ts
  // hostView): a link is made as the same link. Unset: the whole host read-only (`/` bound), the
  // older layout and the test-only control, where a world-connectable socket anywhere answers.
  view?: string[];
  // The session's own folder (read-only: its state and settings files) and its private HOME in it
  // (writable: the CLI's config dir lives there).
  sessionDir: string;
  home: string;
  // `private`: a network namespace of the session's own (a loopback and nothing else); the
  // supervisor's endpoints come in through the bridge (sessions/wall/bridge.ts).
  network?: 'private' | 'host';
  // The size of the private /tmp and /dev/shm, each (limits.tmp); unset: the kernel's half of RAM.
  tmpBytes?: number;
  // A small tmpfs of its own for the API's socket, under a hidden folder (/run): the bridge makes
  // the socket there; the shell prefix's domain keeps every Bash tool from making, removing or
  // renaming a name in it (sessions/wall/bridge.ts WALL_API).
  apiDir?: string | null;
  // Files the session sees in place of others, read-only (a .git/config without its credentials).
  overlays?: Array<{ source: string; target: string }>;
};

type Mount = { at: string; args: string[]; rank: number };

const sized = (bytes: number | undefined) => (bytes ? ['--size', String(bytes)] : []);
const depth = (p: string) => (p === '/' ? 0 : p.split('/').length - 1);
const within = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

export class SandboxError extends Error {
  override name = 'SandboxError';
}

// The API socket's folder holds one socket: a few pages are room enough.
const API_DIR_BYTES = 64 * 1024;

// The fd bwrap reads the seccomp program from: the first after stdin, stdout and stderr (the
// runner writes the program there, see `inputs` in sessions/run/runner.ts).
export const SECCOMP_FD = 3;

export type BwrapOptions = {
  // Where bwrap reads the compiled seccomp program (--seccomp); null only for the test-only
  // negative control, which shows what the filter keeps out.
  seccompFd: number | null;
};

// Pure: bwrap's arguments for a layout, mounts ordered so that a deeper path always lands on top
// of a shallower one (a vault inside a hidden home is bound back; a state dir inside the vault is
// hidden again). Hidden folders become empty read-only tmpfs; hidden files an empty read-only file.
export function bwrapArgs(l: SandboxLayout, command: string, args: string[], o: BwrapOptions = { seccompFd: SECCOMP_FD }): string[] {
  const vault = path.resolve(l.vault);
  const wanted = [...new Set(l.hidden.map((p) => path.resolve(p)))].filter((p) => p !== '/');
  const writable = [vault, ...l.writable.map((p) => path.resolve(p))];
  for (const h of wanted) {
    if (writable.includes(h)) throw new SandboxError(`Cannot hide \`${h}\` from the session: it is ${h === vault ? 'the vault' : 'in hooks.extra_dirs'}`);
  }
  // A folder that does not exist has nothing to hide, and bwrap cannot make its mount point on the
  // read-only root ("Can't mkdir /nonexistent": a system user's home).
  const view = l.view ? [...new Set(l.view.map((p) => path.resolve(p)))] : null;
  const readable = [...new Set(l.readable.map((p) => path.resolve(p)))].filter((r) => fs.existsSync(r) && !view?.includes(r));
  // With a view, only what is bound in sight needs hiding: the rest of the host is not there.
  const inSight = (p: string) => !view || [...view, ...readable, ...writable, path.resolve(l.sessionDir), path.resolve(l.home)].some((v) => within(p, v));
  const hidden = wanted.filter((h) => fs.existsSync(h) && inSight(h));
  const inHidden = (p: string) => hidden.some((h) => within(p, h));
  const mounts: Mount[] = [];
  // Rank breaks ties at one depth: the view first, then hide, then what is bound back on top.
  const add = (at: string, rank: number, args: string[]) => mounts.push({ at, rank, args });
  for (const v of view ?? []) {
    const st = fs.lstatSync(v, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) add(v, -1, ['--symlink', fs.readlinkSync(v), v]);
    else if (st) add(v, -1, ['--ro-bind', v, v]);
  }
  for (const h of hidden) add(h, 0, ['--tmpfs', h]);
  for (const f of new Set(l.hiddenFiles.map((p) => path.resolve(p)))) {
    if (!inHidden(f) && inSight(f) && fs.existsSync(f) && !fs.statSync(f).isDirectory()) add(f, 1, ['--ro-bind', '/dev/null', f]);
  }
  for (const r of readable) if (view || inHidden(r)) add(r, 2, ['--ro-bind', r, r]);
  // An extra dir that does not exist yet cannot be bound (bwrap would refuse to start at all).
  for (const w of new Set(writable)) if (w === vault || fs.existsSync(w)) add(w, 3, ['--bind', w, w]);
  // nightshift's own git reads the vault's .git: a session must not plant config, hooks or refs.
  // An extra dir's .git too: the operator's own git runs there (a planted hook would run in it).
  for (const w of new Set(writable)) {
    const dotGit = path.join(w, '.git');
    if (fs.existsSync(dotGit)) add(dotGit, 4, ['--ro-bind', dotGit, dotGit]);
  }
  // The supervisor writes the next session's state into <vault>/.nightshift: a session must not
  // plant a link there for it to write through (a real folder only; a link is not followed).
  const dotNightshift = path.join(vault, '.nightshift');
  if (fs.lstatSync(dotNightshift, { throwIfNoEntry: false })?.isDirectory()) add(dotNightshift, 4, ['--ro-bind', dotNightshift, dotNightshift]);
  for (const o of l.overlays ?? []) add(path.resolve(o.target), 5, ['--ro-bind', path.resolve(o.source), path.resolve(o.target)]);
  add(path.resolve(l.sessionDir), 5, ['--ro-bind', path.resolve(l.sessionDir), path.resolve(l.sessionDir)]);
  add(path.resolve(l.home), 6, ['--bind', path.resolve(l.home), path.resolve(l.home)]);
  // Its parent is hidden and made read-only last, non-recursively: this tmpfs stays writable.
  if (l.apiDir) add(path.resolve(l.apiDir), 7, ['--size', String(API_DIR_BYTES), '--perms', '0700', '--tmpfs', path.resolve(l.apiDir)]);
  mounts.sort((a, b) => depth(a.at) - depth(b.at) || a.rank - b.rank);
  // A hidden folder is made read-only last: the mounts above needed their mount points in it.
  const readOnlyAfter = hidden.flatMap((h) => ['--remount-ro', h]);
  return [
    // No view: the whole host read-only. A view: bwrap's own tmpfs as `/`, read-only at the end.
    ...(view ? [] : ['--ro-bind', '/', '/']),
    '--dev', '/dev',
    // A sized /dev/shm, and /dev itself read-only at the end: each would otherwise take files up
    // to half the host's RAM.
    ...sized(l.tmpBytes), '--tmpfs', '/dev/shm',
    '--proc', '/proc',
    // Run as root, the session would still be uid 0 (sysctls are checked by uid, not capability):
    // the kernel's settings stay read-only (kernel.core_pattern would run a program on the host).
    '--ro-bind', '/proc/sys', '/proc/sys',
    '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger',
    ...sized(l.tmpBytes), '--tmpfs', '/tmp',
    ...mounts.flatMap((m) => m.args),
    ...readOnlyAfter,
    ...(view ? ['--remount-ro', '/'] : []),
    '--remount-ro', '/dev',
    '--unshare-pid',
    // The user and IPC namespaces come with it; the network too, unless the caller keeps the host's.
    ...(l.network === 'private' ? ['--unshare-net'] : []),
    '--unshare-ipc',
    '--unshare-uts',
    '--die-with-parent',
    '--new-session',
    // bwrap started by root leaves the session root's capabilities: with CAP_SYS_ADMIN a bind
    // mount remounted read-write undoes the whole wall. None, whoever starts it.
    '--cap-drop', 'ALL',
    // Installed just before bwrap runs the CLI: bwrap's own setup is not filtered, the session is.
    ...(o.seccompFd === null ? [] : ['--seccomp', String(o.seccompFd)]),
    '--chdir', vault,
    '--',
    command,
    ...args,
  ];
}

// Folders the wall puts one of its own over: a CLI whose real path lies there is not found inside
// (bwrap: "execvp ...: No such file or directory"). Null: it is visible.
export function hiddenByWall(real: string): string | null {
  const over = ['/tmp', '/dev/shm'].find((d) => within(real, d));
  return over ? `the CLI ${real} lies under ${over}, which the wall replaces with the session's own: the session could not start it (install it elsewhere, e.g. npm i -g, or under /opt)` : null;
}

// The absolute, symlink-free path of a command (a bare name is looked up on PATH), or null.
export function resolveCommand(command: string, envPath: string): string | null {
  const candidates = command.includes('/') ? [command] : envPath.split(':').filter(Boolean).map((d) => path.join(d, command));
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      return fs.realpathSync(c);
    } catch {
      // not here
    }
  }
  return null;
}

// What bwrap's own error most likely means, measured under the shipped systemd units (see the
// comment in deploy/systemd/nightshift.service); a generic hint for anything else.
export function bwrapHint(error: string): string {
  if (/No permissions to create new namespace|Creating new namespace failed/i.test(error)) {
    return 'user namespaces are forbidden here: the unit\'s RestrictNamespaces= must allow user mnt pid ipc uts net, and /proc/sys/user/max_user_namespaces must not be 0';
  }
  if (/NETLINK_ROUTE/.test(error)) return 'bwrap brings the session\'s own loopback up through netlink: the unit\'s RestrictAddressFamilies= must allow AF_NETLINK';
  if (/overflow[ug]id/.test(error)) return '/proc/sys is hidden: the unit must not set ProcSubset=pid';
  if (/Can't mount proc/i.test(error)) {
    return 'the kernel refuses a fresh /proc while something is mounted over this one: the unit must not set ProtectKernelTunables=, ProtectKernelLogs= or ProtectHostname=';
  }
  if (/make \/ slave|pivot_root|unmount old root/i.test(error)) return 'mount calls are filtered: the unit\'s SystemCallFilter= must allow mount umount2 pivot_root';
  if (/seccomp/i.test(error)) return 'the kernel refused the session\'s seccomp filter: it needs CONFIG_SECCOMP_FILTER, and a unit\'s own SystemCallFilter= must allow seccomp and prctl';
  return 'user namespaces disabled? check /proc/sys/user/max_user_namespaces, or the unit\'s hardening';
}

// The probe a configured sandbox needs before a session is charged, started as soon as a session
// is chosen so that it runs beside the loading of the session machinery; null when it may run.
// Run as the session's own user where it has one (a root supervisor): that is who starts bwrap.
// A user that cannot be had is checkSandbox's to report; the probe then runs as the supervisor.
// `asSessionUser` false: the test-only control, as root.
export function sandboxProbe(config: Pick<Config, 'sandbox' | 'session_user' | 'file'>, env: NodeJS.ProcessEnv, asSessionUser = true): Promise<string | null> {
  if (config.sandbox !== 'bwrap') return Promise.resolve(null);
  return bwrapProblem('bwrap', env.PATH ?? '', asSessionUser ? sessionUserFor(config).user : null);
}

// The user and group a process is started as; null: the supervisor's own.
export type RunAs = { uid: number; gid: number };

// Why bwrap cannot run a sandbox here, or null when it can: a real, tiny sandbox is started, with
// the namespaces and the seccomp filter a session's sandbox asks for, and runs `true` through the
// shell prefix's Landlock domain after the network bridge's API peer check (a machine
// nightshift has no filter for, a kernel that refuses it or has no Landlock, a perl that cannot
// check a socket's peer, fails here, before anything is charged). So does a machine without perl
// (it passed here, and the session was refused only once charged: sessions/wall/guest.ts).
export const NO_PERL = '`perl` is not on PATH (the wall\'s network bridge and the shell prefix run in it; Debian: perl-base)';
export async function bwrapProblem(bwrap = 'bwrap', envPath = process.env.PATH ?? '', as: RunAs | null = null): Promise<string | null> {
  const bin = resolveCommand(bwrap, envPath);
  if (!bin) return `\`${bwrap}\` not found on PATH (Debian: apt-get install bubblewrap)`;
  let program: Buffer;
  try {
    program = seccompProgram();
  } catch (err) {
    return (err as Error).message;
  }
  const perl = findPerl(envPath);
  if (!perl) return NO_PERL;
  const domain = inDomain(perl, 'true');
  const run = peerChecked(perl, domain.command, domain.args);
  const r = await runChild(bin, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys', '--tmpfs', '/tmp', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--cap-drop', 'ALL', '--seccomp', String(SECCOMP_FD), '--', run.command, ...run.args], {
    timeoutMs: 10_000, env: { PATH: envPath }, inputs: [program], cwd: '/', ...(as ? { uid: as.uid, gid: as.gid } : {}),
  });
  if (r.exitCode === 0) return null;
  if (as && r.error?.code === 'EPERM') {
    return `bwrap cannot be started as the session's user (uid ${as.uid}): ${r.error.message} (a root supervisor hands each session to session_user: it must keep CAP_SETUID and CAP_SETGID, as the units \`nightshift systemd install --user root\` renders do)`;
  }
  const bridge = BRIDGE_FAILED_RE.exec(r.stderr ?? '');
  if (bridge) return `the wall's network bridge cannot run here: ${bridge[1]} (only the CLI may reach the API, and the bridge checks each connection's peer with SO_PEERCRED)`;
  const wall = PREFIX_FAILED_RE.exec(r.stderr ?? '');
  // EPERM is a seccomp filter refusing the calls (a unit's SystemCallFilter=); else the kernel lacks it.
  if (wall) return `the session's Landlock domain cannot be made here: ${wall[1]} (${/errno 1\b/.test(wall[1]) ? "a seccomp filter refuses it: the unit's SystemCallFilter= must allow landlock_create_ruleset landlock_add_rule landlock_restrict_self, as the units nightshift renders do" : "Landlock needs CONFIG_SECURITY_LANDLOCK and `landlock` in the kernel's lsm= list"})`;
  const why = (r.stderr || r.error?.message || (r.signal ? `killed by ${r.signal}` : '')).trim().split('\n').slice(-1)[0];
  return `bwrap cannot create a sandbox here: ${why || `exit ${r.exitCode}`} (${bwrapHint(why)})`;
}
