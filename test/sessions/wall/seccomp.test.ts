// The session's seccomp filter: the program run through a classic-BPF interpreter for a table of
// calls on both machines, then the real thing under bwrap, with the same tool outside the filter as
// the control (it takes the supervisor's stream).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { writeInputs } from '../../../core/child-process.js';
import { bwrapArgs, SECCOMP_FD } from '../../../sessions/wall/sandbox.js';
import {
  ARCHES, BLOCKED, BPF, CLONE_NEW_NAMESPACES, DATA, ENOSYS, EPERM, RET, SeccompError, X32_SYSCALL_BIT, seccompFilter, seccompProgram, type SockFilter,
} from '../../../sessions/wall/seccomp.js';
import { writeShellPrefix } from '../../../sessions/wall/landlock.js';
import { findPerl } from '../../../sessions/run/reaper.js';
import { NEEDS_BWRAP } from '../../helpers.js';

const perl = findPerl();
import { THIEF_PY } from '../../stream-thief.js';

// A classic-BPF interpreter of the few instructions a seccomp filter uses, strict about the rest:
// an unknown opcode, a load outside seccomp_data, a jump past the end or falling off it throws.
function run(prog: SockFilter[], d: { nr: number; arch: number; args?: number[] }): number {
  const word = (off: number) => {
    if (off === DATA.nr) return d.nr >>> 0;
    if (off === DATA.arch) return d.arch >>> 0;
    if (off >= 16 && off < 64 && off % 4 === 0) {
      const a = d.args?.[Math.floor((off - 16) / 8)] ?? 0;
      return off % 8 === 0 ? a >>> 0 : 0;
    }
    throw new Error(`load at ${off}: outside what this test models`);
  };
  let acc = 0;
  for (let pc = 0, steps = 0; steps < 1000; steps++) {
    if (pc >= prog.length) throw new Error(`fell off the program at ${pc}`);
    const { code, jt, jf, k } = prog[pc];
    const jump = (c: boolean) => (pc += 1 + (c ? jt : jf));
    switch (code) {
      case BPF.LD_W_ABS: acc = word(k); pc++; break;
      case BPF.JEQ_K: jump(acc === k); break;
      case BPF.JGE_K: jump(acc >= k); break;
      case BPF.JSET_K: jump((acc & k) !== 0); break;
      case BPF.RET_K: return k;
      default: throw new Error(`opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('no return within 1000 steps');
}

const ALLOWED: Record<string, Record<string, number>> = {
  x64: { read: 0, write: 1, openat: 257, execve: 59, kill: 62, pidfd_open: 434, wait4: 61, prctl: 157, socket: 41, io_uring_setup: 425 },
  arm64: { read: 63, write: 64, openat: 56, execve: 221, kill: 129, pidfd_open: 434, wait4: 260, prctl: 167, socket: 198, io_uring_setup: 425 },
};
// The doors of issue 25 by literal number, apart from the module's own table: a call dropped from
// BLOCKED fails here too.
const REQUIRED: Record<string, Record<string, number>> = {
  x64: { ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, pidfd_getfd: 438, kcmp: 312, unshare: 272, mount: 165 },
  arm64: { ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, pidfd_getfd: 438, kcmp: 272, unshare: 97, mount: 40 },
};
const OTHER_ARCH: Record<string, number> = { x64: 0xc00000b7, arm64: 0xc000003e };
const AUDIT_I386 = 0x40000003;
const CLONE_THREAD_FLAGS = 0x3d0f00; // what pthread_create passes (VM FS FILES SIGHAND THREAD SYSVSEM SETTLS PARENT_SETTID CHILD_CLEARTID)

describe('the seccomp program', () => {
  for (const arch of Object.keys(ARCHES)) {
    const prog = seccompFilter(arch);
    const t = ARCHES[arch];
    const call = (nr: number, args?: number[]) => run(prog, { nr, arch: t.audit, args });
    test(`${arch}: every blocked call answers EPERM, everything else is allowed`, () => {
      for (const [name, nr] of Object.entries(REQUIRED[arch])) assert.equal(call(nr), RET.ERRNO | EPERM, `${name} (${nr})`);
      for (const name of Object.keys(BLOCKED)) assert.equal(call(t.nr[name]), RET.ERRNO | EPERM, name);
      for (const [name, nr] of Object.entries(ALLOWED[arch])) assert.equal(call(nr), RET.ALLOW, name);
      // Every number the filter does not name, up to the highest in use, passes.
      const named = new Set(Object.values(t.nr));
      for (let nr = 0; nr < 460; nr++) if (!named.has(nr)) assert.equal(call(nr), RET.ALLOW, `nr ${nr}`);
    });
    test(`${arch}: clone with a namespace flag is refused like unshare, a thread or a fork is not; clone3 is ENOSYS`, () => {
      assert.equal(call(t.nr.clone, [CLONE_THREAD_FLAGS]), RET.ALLOW, 'pthread_create');
      assert.equal(call(t.nr.clone, [0x01200011]), RET.ALLOW, 'fork: CHILD_SETTID|CHILD_CLEARTID|SIGCHLD');
      assert.equal(call(t.nr.clone, [0x4111]), RET.ALLOW, 'vfork: VM|VFORK|SIGCHLD');
      for (let bit = 0; bit < 32; bit++) {
        const flag = (1 << bit) >>> 0;
        if (CLONE_NEW_NAMESPACES & flag) assert.equal(call(t.nr.clone, [flag | 0x11]), RET.ERRNO | EPERM, `flag 0x${flag.toString(16)}`);
      }
      assert.equal(call(t.nr.clone, [0x10000000 | 0x11]), RET.ERRNO | EPERM, 'CLONE_NEWUSER');
      assert.equal(call(t.nr.clone3), RET.ERRNO | ENOSYS);
    });
    test(`${arch}: a call from another ABI kills the process, whatever its number`, () => {
      for (const a of [OTHER_ARCH[arch], AUDIT_I386, 0]) {
        for (const nr of [0, 1, t.nr.ptrace, t.nr.pidfd_getfd]) assert.equal(run(prog, { nr, arch: a }), RET.KILL_PROCESS, `arch 0x${a.toString(16)} nr ${nr}`);
      }
    });
  }
  test('x64: the x32 ABI (nr with bit 30) is refused whole, its ptrace included', () => {
    const prog = seccompFilter('x64');
    for (const nr of [0, 1, 101, 521, 545]) assert.equal(run(prog, { nr: X32_SYSCALL_BIT + nr, arch: ARCHES.x64.audit }), RET.ERRNO | EPERM, `x32 ${nr}`);
    assert.equal(run(seccompFilter('arm64'), { nr: X32_SYSCALL_BIT + 1, arch: ARCHES.arm64.audit }), RET.ALLOW, 'arm64 has no x32: an unknown number is the kernel\'s ENOSYS');
  });
  test('a machine without a table is refused by name, never filtered with another\'s numbers', () => {
    assert.throws(() => seccompFilter('riscv64'), (e: Error) => e instanceof SeccompError && /riscv64/.test(e.message) && /x64, arm64/.test(e.message) && /unfiltered/.test(e.message));
    assert.throws(() => seccompProgram('ia32'), SeccompError);
  });
  test('every blocked call has a number on every machine, and one line saying why', () => {
    for (const [name, why] of Object.entries(BLOCKED)) {
      assert.ok(why.length > 10 && !why.includes('\n'), name);
      for (const arch of Object.keys(ARCHES)) assert.equal(typeof ARCHES[arch].nr[name], 'number', `${arch} ${name}`);
    }
  });
  test('the numbers match the kernel headers, where they are installed', (t) => {
    const headers: Record<string, [string, RegExp]> = {
      x64: ['/usr/include/x86_64-linux-gnu/asm/unistd_64.h', /^#define\s+__NR_(\w+)\s+(\d+)$/],
      arm64: ['/usr/include/asm-generic/unistd.h', /^#define\s+__NR(?:3264)?_(\w+)\s+(\d+)$/],
    };
    let checked = 0;
    for (const [arch, [file, re]] of Object.entries(headers)) {
      if (!fs.existsSync(file)) continue;
      const nr = new Map<string, number>();
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        const m = re.exec(line.trim());
        if (m) nr.set(m[1], Number(m[2]));
      }
      for (const [name, n] of Object.entries(ARCHES[arch].nr)) assert.equal(n, nr.get(name), `${arch} ${name} (${file})`);
      checked++;
    }
    if (!checked) t.skip('no kernel headers here (linux-libc-dev)');
  });
  test('the program bwrap reads: 8 bytes an instruction, little-endian, the same instructions', () => {
    const f = seccompFilter('x64');
    const b = seccompProgram('x64');
    assert.equal(b.length, f.length * 8);
    assert.ok(f.length < 4096, 'BPF_MAXINSNS');
    f.forEach((ins, i) => assert.deepEqual({ code: b.readUInt16LE(i * 8), jt: b[i * 8 + 2], jf: b[i * 8 + 3], k: b.readUInt32LE(i * 8 + 4) }, ins));
  });
  test('bwrapArgs passes --seccomp FD to bwrap before the command, and nothing when the control asks for none', () => {
    const layout = { vault: '/var/tmp', writable: [], hidden: [], hiddenFiles: [], readable: [], sessionDir: '/var/tmp', home: '/var/tmp' };
    const args = bwrapArgs(layout, '/bin/claude', ['--seccomp', 'x']);
    const i = args.indexOf('--seccomp');
    assert.deepEqual(args.slice(i, i + 2), ['--seccomp', String(SECCOMP_FD)]);
    assert.ok(i < args.indexOf('--'));
    assert.ok(!bwrapArgs(layout, '/bin/claude', [], { seccompFd: null }).slice(0, -1).includes('--seccomp'));
  });
});

// ---------------------------------------------------------------------------------------------

type Doors = Record<'pidfd_getfd' | 'kcmp' | 'ptrace' | 'process_vm_readv' | 'proc_mem' | 'proc_fd' | 'unshare_user', string>;

// The thief in the session's own wall (a site under /var/tmp: the wall's /tmp is private).
async function thief(t: TestContext, filtered: boolean): Promise<Doors> {
  const dir = fs.mkdtempSync('/var/tmp/nightshift-seccomp-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const d of ['vault', 'state', 'session/home']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const layout = { vault: path.join(dir, 'vault'), writable: [], hidden: [path.join(dir, 'state'), '/run'], hiddenFiles: [], readable: [], sessionDir: path.join(dir, 'session'), home: path.join(dir, 'session', 'home') };
  const args = bwrapArgs(layout, '/usr/bin/python3', ['-c', THIEF_PY, 'probe'], { seccompFd: filtered ? SECCOMP_FD : null });
  const inputs = filtered ? [seccompProgram()] : [];
  const child = spawn('bwrap', args, { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe', ...inputs.map(() => 'pipe' as const)] });
  writeInputs(child, inputs);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, `the thief ran (${filtered ? 'filtered' : 'control'}): ${err}`);
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

// A sibling that holds a marker in its heap, and a tool that rewrites it through /proc/<pid>/mem:
// an open() and pwrite(), no ptrace-family call, so no seccomp filter can refuse it.
// It says it is ready by a file (argv[1]) and holds the marker until the tools are done (argv[2]).
const VICTIM_PY = String.raw`
import os, sys, time
s = bytearray(b'NIGHTSHIFT-COST-' + b'0.0360')
open(sys.argv[1], 'w').close()
while not os.path.exists(sys.argv[2]): time.sleep(0.02)
print('holds', s.decode(), flush=True)
`;
const MEM_PY = String.raw`
import os, re, sys
pid, hit = int(sys.argv[1]), 0
try:
  f = os.open('/proc/%d/mem' % pid, os.O_RDWR)
except OSError as e:
  print('mem refused', e.errno); sys.exit(0)
for line in open('/proc/%d/maps' % pid):
  m = re.match(r'([0-9a-f]+)-([0-9a-f]+) rw', line)
  if not m: continue
  a, b = int(m[1], 16), int(m[2], 16)
  try: data = os.pread(f, b - a, a)
  except OSError: continue
  i = data.find(b'NIGHTSHIFT-COST-0.0360')
  while i >= 0:
    os.pwrite(f, b'NIGHTSHIFT-COST-0.0001', a + i); hit += 1
    i = data.find(b'NIGHTSHIFT-COST-0.0360', i + 1)
print('rewrote', hit)
`;

describe('the filter under bwrap', { skip: NEEDS_BWRAP || (fs.existsSync('/usr/bin/python3') ? false : 'no /usr/bin/python3') }, () => {
  test('a tool cannot take bwrap\'s pid 1\'s stdout (pidfd_getfd), attach to it (ptrace), read its memory (process_vm_readv) or make a user namespace', async (t) => {
    const d = await thief(t, true);
    console.error(`doors with the filter: ${JSON.stringify(d)}`);
    assert.equal(d.pidfd_getfd, 'EPERM');
    assert.equal(d.kcmp, 'EPERM');
    assert.equal(d.ptrace, 'EPERM');
    assert.equal(d.process_vm_readv, 'EPERM');
    assert.equal(d.unshare_user, 'EPERM');
    // The stream is a socket: it cannot be reopened by its /proc path either.
    assert.equal(d.proc_fd, 'ENXIO');
  });
  test('measured, not closed by the filter: a tool rewrites a sibling\'s memory through /proc/<pid>/mem (same uid, dumpable); through the shell prefix\'s Landlock domain it cannot open it', async (t) => {
    const dir = fs.mkdtempSync('/var/tmp/nightshift-seccomp-');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.mkdirSync(path.join(dir, 'home'));
    const layout = { vault: dir, writable: [], hidden: [], hiddenFiles: [], readable: [], sessionDir: path.join(dir, 'home'), home: path.join(dir, 'home') };
    // The same tool once more through the session's shell prefix (sessions/wall/landlock.ts): in a
    // Landlock domain of its own it cannot open the sibling's memory at all.
    const prefix = perl ? writeShellPrefix(dir, perl) : '/bin/false';
    fs.writeFileSync(path.join(dir, 'mem.py'), MEM_PY);
    const sh = `/usr/bin/python3 -c "$1" ${dir}/ready ${dir}/done & v=$!; while [ ! -e ${dir}/ready ]; do sleep 0.02; done; /usr/bin/python3 -c "$2" $v; grep '^Seccomp:' /proc/self/status; echo "domain: $('${prefix}' "/usr/bin/python3 ${dir}/mem.py $v")"; touch ${dir}/done; wait`;
    const child = spawn('bwrap', bwrapArgs(layout, '/bin/sh', ['-c', sh, 'sh', VICTIM_PY, MEM_PY]), { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    writeInputs(child, [seccompProgram()]);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await new Promise((resolve) => child.on('close', resolve));
    assert.match(out, /Seccomp:\s+2/, `the tools ran filtered: ${out}`);
    assert.match(out, /holds NIGHTSHIFT-COST-/, out);
    // Host-dependent (Yama's ptrace_scope 2 or 3 refuses it): measured and reported, not asserted.
    const rewritten = /holds NIGHTSHIFT-COST-0\.0001/.test(out);
    t.diagnostic(`/proc/<pid>/mem under the filter: ${rewritten ? 'OPEN: the sibling\'s memory was rewritten' : 'closed here'} (${out.replace(/\n/g, ' | ')})`);
    if (perl) assert.match(out, /domain: mem refused 13/, 'through the shell prefix the open is refused (EACCES)');
  });
  test('negative control: the same tool in the same wall without the filter gets the stream, attaches and reads', async (t) => {
    const d = await thief(t, false);
    console.error(`doors without the filter: ${JSON.stringify(d)}`);
    assert.match(d.pidfd_getfd, /^ok socket:\[\d+\]$/, 'it holds the supervisor\'s stream');
    assert.equal(d.kcmp, 'ok');
    assert.equal(d.ptrace, 'ok');
    assert.match(d.process_vm_readv, /^ok /);
  });
});
