// The shell prefix's Landlock domain (sessions/wall/landlock.ts), run for real: a command in it
// cannot open its parent's /proc/<pid>/mem or reopen its descriptors, where the same command run
// without the prefix can (the control); what it runs still works, its own children included.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { prefixBody, prefixScript, writeShellPrefix } from '../../../sessions/wall/landlock.js';
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

function run(withPrefix: boolean, dir: string): string {
  const prefix = writeShellPrefix(dir, perl!);
  // As the CLI does it: its shell runs `'<prefix>' '<command>'`.
  const cmd = withPrefix ? `exec 9>${path.join(dir, 'held')}; '${prefix}' "$0"; true` : 'exec 9>' + path.join(dir, 'held') + '; /bin/bash -c "$0"; true';
  return spawnSync('/bin/bash', ['-c', cmd, PROBE], { encoding: 'utf8' }).stdout;
}

describe('the shell prefix\'s Landlock domain', { skip: SKIP }, () => {
  test('a command in the domain cannot reach its parent\'s memory or descriptors; its own child it can', (t) => {
    const dir = tempDir(t);
    const out = run(true, dir);
    assert.match(out, /mem:refused/);
    assert.match(out, /fd:refused/);
    assert.match(out, /child-mem:open/, 'within the domain, as before');
    assert.match(out, /done/);
  });
  test('negative control: the same command without the prefix opens both', (t) => {
    const out = run(false, tempDir(t));
    assert.match(out, /mem:open/);
    assert.match(out, /fd:open/);
  });
  test('the prefix is a perl script with the found perl as its interpreter, executable, read-only', (t) => {
    const dir = tempDir(t);
    const file = writeShellPrefix(dir, perl!);
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
  test('a command that fails keeps its exit code; no command at all fails closed', (t) => {
    const file = writeShellPrefix(tempDir(t), perl!);
    assert.equal(spawnSync(file, ['exit 7']).status, 7);
    const none = spawnSync(file, [], { encoding: 'utf8' });
    assert.equal(none.status, 126);
    assert.match(none.stderr, /nightshift-wall: no command/);
  });
});
