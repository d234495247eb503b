// The seccomp filter bwrap installs on the session just before it runs the CLI (`--seccomp FD`):
// every process in the wall has one uid and PID namespace, so without it a tool can take the
// supervisor's stream-json channel from bwrap's pid 1 (`pidfd_getfd`), or attach to the CLI and
// write its result for it (`ptrace`), and the ledger records what the session wrote. The program is
// classic BPF (an array of struct sock_filter), generated here, pure; bwrap itself runs unfiltered,
// so its own mounts and namespaces are made before the filter applies.
// What it does not close (measured, test/sessions/wall/seccomp.test.ts): /proc/<pid>/mem is an
// open() and a pwrite(), which no filter can tell from any other, and the kernel lets a process
// of the same uid write a dumpable process's memory that way (bwrap's pid 1, the bridge and the CLI
// are all three). The shell prefix's Landlock domain closes that (./landlock.ts).

export class SeccompError extends Error {
  override name = 'SeccompError';
}

// One BPF instruction: struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }.
export type SockFilter = { code: number; jt: number; jf: number; k: number };

// Classic BPF opcodes and seccomp's return values (linux/filter.h, linux/seccomp.h).
export const BPF = {
  LD_W_ABS: 0x20,
  JEQ_K: 0x15,
  JGE_K: 0x35,
  JSET_K: 0x45,
  RET_K: 0x06,
} as const;
export const RET = {
  KILL_PROCESS: 0x80000000,
  ERRNO: 0x00050000,
  ALLOW: 0x7fff0000,
} as const;
export const EPERM = 1;
export const ENOSYS = 38;

// Offsets into struct seccomp_data { int nr; u32 arch; u64 instruction_pointer; u64 args[6]; }.
export const DATA = { nr: 0, arch: 4, arg0Low: 16 } as const;

// The namespace flags of clone(2) (CSIGNAL's byte excluded: CLONE_NEWTIME shares it there).
export const CLONE_NEW_NAMESPACES = 0x00020000 /* NEWNS */ | 0x02000000 /* NEWCGROUP */ | 0x04000000 /* NEWUTS */
  | 0x08000000 /* NEWIPC */ | 0x10000000 /* NEWUSER */ | 0x20000000 /* NEWPID */ | 0x40000000 /* NEWNET */;

// Calls refused with EPERM, each with why; everything not named here is allowed.
export const BLOCKED: Readonly<Record<string, string>> = {
  ptrace: 'attach to the CLI or bwrap\'s pid 1 (gdb -p): read or write their memory and descriptors',
  process_vm_readv: 'read another process\'s memory without attaching (the proxy token, the stream)',
  process_vm_writev: 'write another process\'s memory without attaching',
  pidfd_getfd: 'copy another process\'s descriptor: bwrap\'s pid 1 holds the supervisor\'s stream',
  kcmp: 'compare descriptors across processes: finds which of another\'s fds is the stream',
  process_madvise: 'act on another process\'s memory through a pidfd',
  perf_event_open: 'profile other processes of the uid (their registers, memory samples); kernel attack surface',
  userfaultfd: 'stall the kernel mid-copy at will: a staple of kernel exploits, no use to a session',
  bpf: 'load programs into the kernel; kernel attack surface',
  keyctl: 'the uid\'s keyrings are shared with the supervisor\'s own processes',
  add_key: 'plant a key in the uid\'s keyrings',
  request_key: 'ask the kernel (and its upcall helpers) for a key of the uid',
  kexec_load: 'replace the running kernel',
  kexec_file_load: 'replace the running kernel',
  open_by_handle_at: 'open a file by handle, past the mounts that hide it (the "shocker" escape)',
  init_module: 'load a kernel module',
  finit_module: 'load a kernel module',
  delete_module: 'unload a kernel module',
  mount: 'remount what bwrap made read-only or hidden (given a namespace of its own)',
  umount2: 'unmount what hides the supervisor\'s files (given a namespace of its own)',
  pivot_root: 'swap the root bwrap set up',
  unshare: 'a new user namespace gives back every capability --cap-drop took, in it',
  setns: 'enter another namespace through a descriptor of it',
  open_tree: 'the new mount API: mount',
  move_mount: 'the new mount API: mount',
  fsopen: 'the new mount API: mount',
  fsconfig: 'the new mount API: mount',
  fsmount: 'the new mount API: mount',
  fspick: 'the new mount API: remount',
  mount_setattr: 'the new mount API: remount read-write',
};

// Why clone and clone3 are treated apart: clone with a namespace flag is `unshare` by another
// name (EPERM); clone3 passes its flags in memory a filter cannot read, so it answers ENOSYS and
// libc falls back to clone, whose flags are checked.
export const CLONE_NOTE = 'clone with a CLONE_NEW* flag: EPERM (as unshare); clone3: ENOSYS (libc falls back to clone)';

type Table = { audit: number; x32: boolean; nr: Record<string, number> };

// Syscall numbers by machine (x86_64: asm/unistd_64.h; aarch64: asm-generic/unistd.h).
export const ARCHES: Readonly<Record<string, Table>> = {
  x64: {
    audit: 0xc000003e,
    x32: true,
    nr: {
      ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, pidfd_getfd: 438, kcmp: 312, process_madvise: 440,
      perf_event_open: 298, userfaultfd: 323, bpf: 321, keyctl: 250, add_key: 248, request_key: 249, kexec_load: 246,
      kexec_file_load: 320, open_by_handle_at: 304, init_module: 175, finit_module: 313, delete_module: 176, mount: 165,
      umount2: 166, pivot_root: 155, unshare: 272, setns: 308, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431,
      fsmount: 432, fspick: 433, mount_setattr: 442, clone: 56, clone3: 435,
    },
  },
  arm64: {
    audit: 0xc00000b7,
    x32: false,
    nr: {
      ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, pidfd_getfd: 438, kcmp: 272, process_madvise: 440,
      perf_event_open: 241, userfaultfd: 282, bpf: 280, keyctl: 219, add_key: 217, request_key: 218, kexec_load: 104,
      kexec_file_load: 294, open_by_handle_at: 265, init_module: 105, finit_module: 273, delete_module: 106, mount: 40,
      umount2: 39, pivot_root: 41, unshare: 97, setns: 268, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431,
      fsmount: 432, fspick: 433, mount_setattr: 442, clone: 220, clone3: 435,
    },
  },
};

// x32 calls on x86_64 carry this bit in nr: the same calls under other numbers, refused whole.
export const X32_SYSCALL_BIT = 0x40000000;

// The numbers of one machine (node's process.arch names), or a refusal naming it: a session is
// never run unfiltered because its machine is unknown here.
export function seccompTable(arch: string): Table {
  const t = ARCHES[arch];
  if (!t) throw new SeccompError(`no seccomp filter for this machine (${arch}): nightshift knows the syscall numbers of ${Object.keys(ARCHES).join(', ')} only, and will not run a session unfiltered`);
  return t;
}

type Op = { code: number; k: number; jt?: string; jf?: string };

// Pure: the filter for one machine as instructions. A call from another ABI (an arch other than
// the one the table is for) kills the process: its numbers mean other calls.
export function seccompFilter(arch: string = process.arch): SockFilter[] {
  const t = seccompTable(arch);
  const ops: Array<Op | { label: string }> = [
    { code: BPF.LD_W_ABS, k: DATA.arch },
    { code: BPF.JEQ_K, k: t.audit, jt: 'native', jf: 'kill' },
    { label: 'native' },
    { code: BPF.LD_W_ABS, k: DATA.nr },
  ];
  if (t.x32) ops.push({ code: BPF.JGE_K, k: X32_SYSCALL_BIT, jt: 'deny' });
  for (const name of Object.keys(BLOCKED)) ops.push({ code: BPF.JEQ_K, k: t.nr[name], jt: 'deny' });
  ops.push(
    { code: BPF.JEQ_K, k: t.nr.clone3, jt: 'enosys' },
    { code: BPF.JEQ_K, k: t.nr.clone, jf: 'allow' },
    { code: BPF.LD_W_ABS, k: DATA.arg0Low },
    { code: BPF.JSET_K, k: CLONE_NEW_NAMESPACES, jt: 'deny', jf: 'allow' },
    { label: 'allow' }, { code: BPF.RET_K, k: RET.ALLOW },
    { label: 'deny' }, { code: BPF.RET_K, k: RET.ERRNO | EPERM },
    { label: 'enosys' }, { code: BPF.RET_K, k: RET.ERRNO | ENOSYS },
    { label: 'kill' }, { code: BPF.RET_K, k: RET.KILL_PROCESS },
  );
  const at = new Map<string, number>();
  const code: Op[] = [];
  for (const o of ops) {
    if ('label' in o) at.set(o.label, code.length);
    else code.push(o);
  }
  // A jump is relative to the next instruction, forward only, at most 255 ahead.
  const rel = (from: number, label: string | undefined) => {
    if (label === undefined) return 0;
    const d = at.get(label)! - from - 1;
    if (d < 0 || d > 255) throw new SeccompError(`seccomp filter: the jump to ${label} is ${d} instructions, out of range`);
    return d;
  };
  return code.map((o, i) => ({ code: o.code, jt: rel(i, o.jt), jf: rel(i, o.jf), k: o.k >>> 0 }));
}

// Pure: the program as bwrap reads it from its fd, in this machine's byte order (little-endian on
// both machines above).
export function seccompProgram(arch: string = process.arch): Buffer {
  const f = seccompFilter(arch);
  const b = Buffer.alloc(f.length * 8);
  f.forEach((ins, i) => {
    b.writeUInt16LE(ins.code, i * 8);
    b.writeUInt8(ins.jt, i * 8 + 2);
    b.writeUInt8(ins.jf, i * 8 + 3);
    b.writeUInt32LE(ins.k, i * 8 + 4);
  });
  return b;
}
