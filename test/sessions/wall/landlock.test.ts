// The shell prefix's Landlock domain (sessions/wall/landlock.ts), run for real, both as the perl
// script and compiled (landlock-prefix.c): a command in it cannot open its parent's /proc/<pid>/mem
// or reopen its descriptors, where the same command run without the prefix can (the control); what
// it runs still works, its own children included. The API folder's names: e2e/wall-redteam.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { compiledPrefix, elfFor, inDomain, PREFIX_FAILED_CODE, PREFIX_FAILED_RE, prefixBody, prefixScript, usablePrefix, writeShellPrefix } from '../../../sessions/wall/landlock.js';
import { WALL_API } from '../../../sessions/wall/bridge.js';
import { findPerl } from '../../../sessions/run/reaper.js';
import { tempDir } from '../../helpers.js';

const perl = findPerl();
const abi = perl ? Number(spawnSync(perl, ['-e', 'print syscall(444, 0, 0, 1)'], { encoding: 'utf8' }).stdout) : -1;
const SKIP = !perl ? 'no perl' : abi < 1 ? 'no Landlock in this kernel' : false;

// The parent (this test's child shell) holds a pipe as fd 9; the command tries its memory and it.
const PROBE = String.raw`
p=$PPID
{ exec 3<>/proc/$p/mem && echo mem:open; } 2>/dev/null || echo mem:refused
{ exec 4>/proc/$p/fd/9 && echo fd:open; } 2>/dev/null || echo fd:refused
sleep 0.2 & c=$!; { exec 5</proc/$c/mem && echo child-mem:open; } 2>/dev/null || echo child-mem:refused; wait
echo done`;

// Both ways the prefix is made. Under CI the build must have compiled it: its proof never skips.
const compiled = compiledPrefix();
const VARIANTS = [
  { name: 'the perl script', compiled: null },
  { name: 'compiled', compiled },
] as const;

function run(withPrefix: boolean, dir: string, variant: { compiled: string | null } = VARIANTS[0]): string {
  const prefix = writeShellPrefix(dir, perl!, variant);
  // As the CLI does it: its shell runs `'<prefix>' '<command>'`.
  const cmd = withPrefix ? `exec 9>${path.join(dir, 'held')}; '${prefix}' "$0"; true` : 'exec 9>' + path.join(dir, 'held') + '; /bin/bash -c "$0"; true';
  return spawnSync('/bin/bash', ['-c', cmd, PROBE], { encoding: 'utf8' }).stdout;
}

// Runs argv under a seccomp filter that refuses landlock_create_ruleset with EPERM (a unit's
// SystemCallFilter= without it), as the probe meets it.
const NO_LANDLOCK_PY = String.raw`
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
ins = lambda code, jt, jf, k: struct.pack('HBBI', code, jt, jf, k)
prog = ins(0x20, 0, 0, 0) + ins(0x15, 0, 1, 444) + ins(0x06, 0, 0, 0x00050000 | 1) + ins(0x06, 0, 0, 0x7fff0000)
buf = ctypes.create_string_buffer(prog, len(prog))
class Fprog(ctypes.Structure): _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
f = Fprog(4, ctypes.addressof(buf))
assert libc.prctl(38, 1, 0, 0, 0) == 0 and libc.prctl(22, 2, ctypes.byref(f), 0, 0) == 0, ctypes.get_errno()
os.execv(sys.argv[1], sys.argv[1:])`;

describe('the shell prefix\'s Landlock domain', { skip: SKIP }, () => {
  for (const v of VARIANTS) {
    const skip = v.compiled === null && v.name === 'compiled' && !process.env.CI ? 'not compiled by this build (no C compiler)' : false;
    describe(v.name, { skip }, () => {
      test('a command in the domain cannot reach its parent\'s memory or descriptors; its own child it can', (t) => {
        assert.ok(v.name !== 'compiled' || v.compiled, 'the build compiled the prefix (deploy/landlock-prefix.mjs)');
        const dir = tempDir(t);
        const out = run(true, dir, v);
        assert.match(out, /mem:refused/);
        assert.match(out, /fd:refused/);
        assert.match(out, /child-mem:open/, 'within the domain, as before');
        assert.match(out, /done/);
      });
      test('a command that fails keeps its exit code, its arguments pass as bash -c\'s; no command at all fails closed', (t) => {
        const file = writeShellPrefix(tempDir(t), perl!, v);
        assert.equal(spawnSync(file, ['exit 7']).status, 7);
        assert.equal(spawnSync(file, ['echo "$0:$1"', 'zero', 'one'], { encoding: 'utf8' }).stdout, 'zero:one\n');
        const none = spawnSync(file, [], { encoding: 'utf8' });
        assert.equal(none.status, 126);
        assert.match(none.stderr, /^nightshift-wall: no command\n$/);
        assert.equal(fs.statSync(file).mode & 0o777, 0o555);
      });
    });
  }
  test('where a seccomp filter refuses Landlock, both prefixes fail closed in the same words, which the probe reads as the filter\'s', { skip: fs.existsSync('/usr/bin/python3') || process.env.CI ? false : 'no python3' }, (t) => {
    const said = VARIANTS.filter((v) => v.compiled !== null || v.name !== 'compiled').map((v) => {
      const file = writeShellPrefix(tempDir(t), perl!, v);
      // The control: without the filter the same prefix runs the command.
      const free = spawnSync(file, ['echo ran'], { encoding: 'utf8' });
      assert.equal(free.stdout, 'ran\n', v.name);
      const r = spawnSync('/usr/bin/python3', ['-c', NO_LANDLOCK_PY, file, 'echo ran'], { encoding: 'utf8' });
      assert.equal(r.stdout, '', `${v.name}: the command never ran`);
      assert.equal(r.status, PREFIX_FAILED_CODE, `${v.name}: ${r.stderr}`);
      const m = PREFIX_FAILED_RE.exec(r.stderr);
      assert.ok(m, `${v.name}: ${r.stderr}`);
      assert.match(m[1], /^Landlock is not available here \(errno 1: Operation not permitted\)/);
      assert.match(m[1], /errno 1\b/, 'the probe\'s test for a seccomp filter (sessions/wall/sandbox.ts)');
      return r.stderr;
    });
    assert.ok(said.length === 2 || (!compiled && !process.env.CI), 'the compiled one too, wherever it was built (CI builds it)');
    if (said.length === 2) assert.equal(said[1], said[0], 'the compiled prefix says what the perl script says');
  });
  test('negative control: the same command without the prefix opens both', (t) => {
    const out = run(false, tempDir(t));
    assert.match(out, /mem:open/);
    assert.match(out, /fd:open/);
  });
  test('the perl prefix is a script with the found perl as its interpreter, executable, read-only', (t) => {
    const dir = tempDir(t);
    const file = writeShellPrefix(dir, perl!, { compiled: null });
    assert.ok(fs.readFileSync(file, 'utf8').startsWith(`#!${perl}\n`));
    assert.equal(fs.statSync(file).mode & 0o777, 0o555);
    assert.ok(prefixScript('/usr/bin/perl').includes('syscall(446'));
  });
  test('each machine gets its own prctl number; an unknown one is refused by name; no module is loaded (POSIX alone costs ~20 ms a command)', () => {
    assert.match(prefixBody('x64'), /syscall\(157, 38,/);
    assert.match(prefixBody('arm64'), /syscall\(167, 38,/);
    assert.throws(() => prefixBody('riscv64'), /riscv64.*x64, arm64/);
    assert.doesNotMatch(prefixBody('x64'), /^\s*(use|require) (?!strict)/m);
  });
});

describe('the compiled prefix', () => {
  test('is taken only when it is an ELF executable for this machine', () => {
    const elf = (machine: number) => {
      const b = Buffer.alloc(64);
      b.writeUInt32BE(0x7f454c46, 0);
      b[4] = 2;
      b[5] = 1;
      b.writeUInt16LE(machine, 18);
      return b;
    };
    assert.ok(elfFor(elf(62), 'x64'));
    assert.ok(elfFor(elf(183), 'arm64'));
    assert.ok(!elfFor(elf(62), 'arm64'), 'a dist/ built on another machine');
    assert.ok(!elfFor(elf(183), 'x64'));
    assert.ok(!elfFor(Buffer.from('#!/usr/bin/perl\nuse strict;\n'), 'x64'));
    assert.ok(!elfFor(elf(62).subarray(0, 10), 'x64'));
  });
  test('is not taken where it cannot run, though it is an ELF for this machine (a tarball built where glibc is newer; a musl machine)', { skip: compiled || process.env.CI ? false : 'not compiled by this build' }, (t) => {
    assert.ok(compiled, 'the build compiled the prefix (deploy/landlock-prefix.mjs)');
    assert.ok(usablePrefix(compiled), 'the one this build made runs here');
    // The same binary, unable to run: linked dynamically, asking for a loader this machine lacks
    // (its PT_INTERP path, one byte changed); linked statically (the build's first choice), cut
    // short after its headers, so its code is not there to map.
    let elf = fs.readFileSync(compiled);
    const phoff = Number(elf.readBigUInt64LE(32));
    const [phentsize, phnum] = [elf.readUInt16LE(54), elf.readUInt16LE(56)];
    const interp = Array.from({ length: phnum }, (_, i) => phoff + i * phentsize).find((h) => elf.readUInt32LE(h) === 3);
    if (interp !== undefined) elf[Number(elf.readBigUInt64LE(interp + 8)) + 1] = 0x58; // '/lib…' -> '/Xib…'
    else elf = elf.subarray(0, phoff + phnum * phentsize + 64);
    const dir = tempDir(t);
    const other = path.join(dir, 'landlock-prefix');
    fs.writeFileSync(other, elf, { mode: 0o755 });
    assert.ok(elfFor(elf), 'by its header alone it would be taken');
    // The harm: chosen, it runs no command at all (the probe refuses every session, perl unused).
    const d = inDomain(perl ?? '/usr/bin/perl', 'echo ran', { compiled: other });
    const r = spawnSync(d.command, d.args, { encoding: 'utf8' });
    assert.notEqual(r.stdout, 'ran\n', 'the mis-built prefix runs nothing');
    assert.equal(usablePrefix(other), false);
    assert.equal(usablePrefix(writeShellPrefix(dir, '/usr/bin/perl', { compiled: null })), false, 'the perl script is no compiled prefix');
    assert.equal(usablePrefix(path.join(dir, 'absent')), false);
  });
  test('is not taken where the session\'s user could not run it (an install under a folder closed to others)', { skip: compiled || process.env.CI ? false : 'not compiled by this build' }, (t) => {
    assert.ok(compiled, 'the build compiled the prefix (deploy/landlock-prefix.mjs)');
    const open = tempDir(t);
    fs.chmodSync(open, 0o755);
    const closed = path.join(open, 'closed');
    fs.mkdirSync(closed, { mode: 0o700 });
    for (const d of [open, closed]) fs.copyFileSync(compiled, path.join(d, 'landlock-prefix'));
    for (const d of [open, closed]) fs.chmodSync(path.join(d, 'landlock-prefix'), 0o755);
    assert.ok(usablePrefix(path.join(open, 'landlock-prefix')), 'control: the same copy in an open folder is taken');
    assert.equal(usablePrefix(path.join(closed, 'landlock-prefix')), false);
    // The harm, where this runs as root: another user cannot start it (the probe as session_user).
    if (process.getuid?.() === 0) {
      const r = spawnSync(path.join(closed, 'landlock-prefix'), ['true'], { uid: 65534, gid: 65534 });
      assert.equal((r.error as NodeJS.ErrnoException | undefined)?.code, 'EACCES');
    }
  });
  test('walls the folder the bridge uses, and refuses as the perl script does', { skip: compiled || process.env.CI ? false : 'not compiled by this build' }, () => {
    assert.ok(compiled, 'the build compiled the prefix (deploy/landlock-prefix.mjs)');
    assert.ok(fs.readFileSync(compiled).includes(Buffer.from(`${WALL_API.dir}\0`)), `${WALL_API.dir} compiled in`);
    // Every refusal of the script has its words in the C source: the probe reads them the same way.
    const c = fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', '..', 'sessions', 'wall', 'landlock-prefix.c'), 'utf8');
    const script = prefixBody();
    const said = [...script.matchAll(/fail\((["'])(.*?)\1/g)].map((m) => m[2].replace(/\s*[$(].*$/, '').replace(/:$/, '').trim().split(' ')[0]);
    assert.ok(said.length >= 7, said.join(','));
    for (const w of said) assert.ok(c.includes(`"${w}`), `the C prefix says ${w} too`);
  });
});
