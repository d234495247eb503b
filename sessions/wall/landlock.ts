// The wall between a session's tools and the processes that hold the supervisor's stream. Every
// process in the wall has one uid, and bwrap's pid 1, the network bridge and the CLI are dumpable:
// a tool could open /proc/<pid>/mem of any of them (an open() and a pwrite(), which no seccomp
// filter can tell from any other) and make it write a forged result on the stream. The CLI runs
// each Bash command through CLAUDE_CODE_SHELL_PREFIX (probed, 2.1.197: `'<prefix>' '<command>'`
// under its shell); this prefix puts the command in a Landlock domain of its own before it runs, and
// the kernel refuses a process in a domain ptrace access (/proc/<pid>/mem, /proc/<pid>/fd,
// ptrace, pidfd_getfd) to any process outside it (Landlock's ptrace scoping, every ABI).
// The domain also keeps the API socket's folder (WALL_API.dir, a tmpfs under the wall's read-only
// /run) the bridge's alone: it handles the rights that make, remove or move a name (make a socket, a
// file, a link, a folder; remove; refer) and grants them beneath every folder at the top of `/` and
// of `/run` but that one, so a tool can neither plant a listener there nor rename one over the
// bridge's socket (the man in the middle of e2e/wall-redteam). Reading, writing and truncating files
// stay as the wall has them; ABI 6 and later also scope abstract unix sockets.
// The prefix is the same domain compiled (landlock-prefix.c, built by deploy/landlock-prefix.mjs;
// ~0.5 ms a command) where the build had a C compiler, else the perl script (~2 ms): perl, like
// the bridge, is Essential on Debian (perl-base).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WALL_API } from './bridge.js';

// Exit code and stderr line by which the prefix says it could not enter a domain (the command
// never ran: fail closed).
export const PREFIX_FAILED_CODE = 126;
export const PREFIX_FAILED_RE = /nightshift-wall: (.*)/;

// syscall numbers: landlock_create_ruleset 444, landlock_add_rule 445, landlock_restrict_self 446
// on both machines (asm-generic); prctl differs, and is filled in for the machine the supervisor
// runs on. PR_SET_NO_NEW_PRIVS is 38 (bwrap's --seccomp has set it already; set again so the prefix
// holds alone). O_PATH is 0x200000 on both. No module is loaded: POSIX alone costs ~20 ms a
// command. The ruleset fd is O_CLOEXEC: the command does not inherit it.
const PRCTL: Readonly<Record<string, number>> = { x64: 157, arm64: 167 };
// LANDLOCK_ACCESS_FS_REMOVE_DIR .. MAKE_SYM (ABI 1) and REFER (ABI 2): the rights over names.
const NAME_RIGHTS = 0x1ff0;
const REFER = 0x2000;
const script = (prctl: number, apiDir: string) => String.raw`
use strict;
sub fail { print STDERR "nightshift-wall: $_[0]\n"; exit 126 }
my $abi = syscall(444, 0, 0, 1);
$abi >= 1 or fail("Landlock is not available here (errno " . ($! + 0) . ": $!): a tool could write the memory of the processes that hold the supervisor's stream");
my $fs = ${NAME_RIGHTS};
$fs |= ${REFER} if $abi >= 2;
my $ruleset = $abi >= 6 ? syscall(444, my $a6 = pack('QQQ', $fs, 0, 1), 24, 0) : syscall(444, my $a1 = pack('Q', $fs), 8, 0);
$ruleset >= 0 or fail("landlock_create_ruleset: $!");
# Names may change beneath every real folder at the top of / and of its parent but the API's.
my ($api, $apiParent) = ('${apiDir}', '${path.dirname(apiDir)}');
for my $top ('/', $apiParent) {
  opendir(my $d, $top) or fail("opendir $top: $!");
  for my $e (readdir $d) {
    next if $e eq '.' || $e eq '..';
    my $p = $top eq '/' ? "/$e" : "$top/$e";
    next if $p eq $api || $p eq $apiParent || -l $p || !-d _;
    sysopen(my $h, $p, 0x200000) or next;
    syscall(445, $ruleset, 1, my $rule = pack('Ql', $fs, fileno $h), 0) == 0 or fail("landlock_add_rule $p: $!");
  }
}
syscall(${prctl}, 38, 1, 0, 0, 0) == 0 or fail("PR_SET_NO_NEW_PRIVS: $!");
syscall(446, $ruleset, 0) == 0 or fail("landlock_restrict_self: $!");
@ARGV or fail('no command');
exec { '/bin/bash' } 'bash', '-c', @ARGV;
fail("exec /bin/bash: $!");
`;

// Pure: the prefix's perl for a machine (node's process.arch names), or a refusal naming it.
export function prefixBody(arch: string = process.arch): string {
  const prctl = PRCTL[arch];
  if (prctl === undefined) throw new Error(`no Landlock prefix for this machine (${arch}): nightshift knows the syscall numbers of ${Object.keys(PRCTL).join(', ')} only`);
  return script(prctl, WALL_API.dir);
}

// The prefix as a file (the CLI takes one executable path, no arguments: a space and a dash in the
// value would be split off as a flag).
export function prefixScript(perl: string, arch: string = process.arch): string {
  return `#!${perl}\n${prefixBody(arch).trimStart()}`;
}

// ELF e_machine of the machines nightshift knows (node's process.arch names).
const ELF_MACHINE: Readonly<Record<string, number>> = { x64: 62, arm64: 183 };

// Pure: whether a file's first bytes are an ELF executable for this machine (a dist/ copied from
// another machine keeps its prefix, which would not run here).
export function elfFor(head: Buffer, arch: string = process.arch): boolean {
  return head.length >= 20 && head.readUInt32BE(0) === 0x7f454c46 && head[4] === 2 && head[5] === 1 && head.readUInt16LE(18) === ELF_MACHINE[arch];
}

// Whether a built prefix runs on this machine: an ELF for it (a dist/ copied from another machine
// keeps its prefix) whose loader and C library it has. One built where glibc is newer (the build
// host of a tarball) or for glibc where the machine has musl is an ELF for this machine all the same,
// and would refuse every session at the probe instead of leaving it the perl script. Run with no
// command, it enters a domain and refuses in its own words (~2 ms, once a process).
export function usablePrefix(file: string): boolean {
  try {
    const fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(20);
    try {
      fs.readSync(fd, head, 0, 20, 0);
    } finally {
      fs.closeSync(fd);
    }
    if (!elfFor(head)) return false;
  } catch {
    return false; // not built here
  }
  // The probe runs it where it lies, as the session's user (a root supervisor's session_user):
  // an install that user cannot reach would refuse every session there (EACCES).
  if (!openToAll(file)) return false;
  const r = spawnSync(file, [], { encoding: 'utf8', env: {}, stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
  return r.status === PREFIX_FAILED_CODE && /^nightshift-wall: /.test(r.stderr ?? '');
}

// Whether any user may execute the file: it and every folder above it give others x.
function openToAll(file: string): boolean {
  try {
    for (let p = path.resolve(file); ; p = path.dirname(p)) {
      if ((fs.statSync(p).mode & 0o001) === 0) return false;
      if (p === path.dirname(p)) return true;
    }
  } catch {
    return false;
  }
}

// The compiled prefix of this build, or null (the perl script then). Looked for beside this module
// (dist/sessions/wall/) and, from the bundle (dist/bundle/), in the same folder; never one the
// wall's own /tmp hides. Asked once a process: the probe and the session use the same one.
let compiled: string | null | undefined;
export function compiledPrefix(): string | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  for (const rel of ['./landlock-prefix', '../sessions/wall/landlock-prefix']) {
    const file = fileURLToPath(new URL(rel, import.meta.url));
    if (/^\/(tmp|dev\/shm)\//.test(file)) continue;
    if (usablePrefix(file)) return (compiled = file);
  }
  return compiled;
}

export type PrefixChoice = { compiled?: string | null };

// The command line that runs `command` in a fresh domain, for a probe (no file of the session's).
export function inDomain(perl: string, command: string, o: PrefixChoice = {}): { command: string; args: string[] } {
  const bin = o.compiled === undefined ? compiledPrefix() : o.compiled;
  if (bin) return { command: bin, args: [command] };
  return { command: perl, args: ['-e', prefixBody(), command] };
}

// Writes the prefix into the session's own folder (read-only in the wall) and returns its path.
// `compiled: null`: the perl script whatever was built (the bench's and the tests' comparison).
export function writeShellPrefix(dir: string, perl: string, o: PrefixChoice = {}): string {
  const file = path.join(dir, 'shell-prefix');
  if (file.includes(' -')) throw new Error(`the session folder ${dir} has \` -\` in its path: the CLI would split CLAUDE_CODE_SHELL_PREFIX there (choose another state_dir)`);
  const bin = o.compiled === undefined ? compiledPrefix() : o.compiled;
  if (bin) {
    fs.rmSync(file, { force: true });
    fs.copyFileSync(bin, file);
    fs.chmodSync(file, 0o555);
  } else fs.writeFileSync(file, prefixScript(perl), { mode: 0o555 });
  return file;
}
