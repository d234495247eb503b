import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { bwrapArgs, SandboxError, type SandboxLayout } from '../../../sessions/wall/sandbox.js';
import { tempDir } from '../../helpers.js';

// The mount operations of an argument list, in order: [flag, target].
function mounts(args: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < args.indexOf('--'); i++) {
    if (['--bind', '--ro-bind'].includes(args[i])) out.push([args[i], args[(i += 2)]]);
    else if (['--tmpfs', '--remount-ro'].includes(args[i])) out.push([args[i], args[++i]]);
  }
  return out;
}
const at = (m: Array<[string, string]>, flag: string, target: string) => m.findIndex(([f, t]) => f === flag && t === target);

function site(t: Parameters<typeof tempDir>[0]): { dir: string; layout: SandboxLayout } {
  const dir = tempDir(t);
  for (const d of ['home/vault/.git', 'home/state', 'logs', 'session/home']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.writeFileSync(path.join(dir, 'home', 'nightshift.yaml'), 'x');
  return {
    dir,
    layout: {
      vault: path.join(dir, 'home', 'vault'), writable: [], hidden: [path.join(dir, 'home'), path.join(dir, 'home', 'state'), path.join(dir, 'logs')],
      hiddenFiles: [path.join(dir, 'home', 'nightshift.yaml'), path.join(dir, 'missing.env')], readable: [], sessionDir: path.join(dir, 'session'), home: path.join(dir, 'session', 'home'),
    },
  };
}

describe('the sandbox\'s mounts', () => {
  test('a vault inside a hidden home is bound back on top of it, and its .git read-only on top of that', (t) => {
    const { dir, layout } = site(t);
    const m = mounts(bwrapArgs(layout, '/bin/claude', ['-p', 'hi']));
    const home = path.join(dir, 'home');
    assert.ok(at(m, '--tmpfs', home) < at(m, '--bind', layout.vault), 'hidden first, then the vault');
    assert.ok(at(m, '--bind', layout.vault) < at(m, '--ro-bind', path.join(layout.vault, '.git')));
    assert.ok(at(m, '--ro-bind', layout.sessionDir) < at(m, '--bind', layout.home), 'the session folder read-only, its HOME writable');
    // Made read-only only after everything inside was mounted.
    assert.ok(at(m, '--remount-ro', home) > at(m, '--ro-bind', path.join(layout.vault, '.git')));
  });

  test('an extra dir\'s .git is read-only on top of the writable extra dir (a hook planted there would run in the operator\'s git)', (t) => {
    const { dir, layout } = site(t);
    const extra = path.join(dir, 'notes');
    fs.mkdirSync(path.join(extra, '.git'), { recursive: true });
    const m = mounts(bwrapArgs({ ...layout, writable: [extra] }, '/bin/claude', []));
    assert.ok(at(m, '--bind', extra) < at(m, '--ro-bind', path.join(extra, '.git')));
    // Control: an extra dir without one gets no such mount.
    fs.rmSync(path.join(extra, '.git'), { recursive: true });
    assert.equal(mounts(bwrapArgs({ ...layout, writable: [extra] }, '/bin/claude', [])).some((x) => x.includes(path.join(extra, '.git'))), false);
  });

  test('the private /tmp and /dev/shm are sized, and /dev is read-only once mounted', (t) => {
    const { layout } = site(t);
    const args = bwrapArgs({ ...layout, tmpBytes: 8 * 1024 * 1024 }, '/bin/claude', []);
    const sizedBefore = (target: string) => args.findIndex((a, i) => a === '--size' && args[i + 1] === String(8 * 1024 * 1024) && args[i + 2] === '--tmpfs' && args[i + 3] === target);
    assert.ok(sizedBefore('/tmp') >= 0 && sizedBefore('/dev/shm') >= 0, args.join(' '));
    assert.ok(args.indexOf('--remount-ro') >= 0 && args.lastIndexOf('/dev') > args.indexOf('/dev/shm'));
    // Control: without a size, no --size (the kernel's default, half the RAM).
    assert.equal(bwrapArgs(layout, '/bin/claude', []).includes('--size'), false);
  });

  test('a state dir inside the vault is hidden again after the vault is bound', (t) => {
    const { dir, layout } = site(t);
    const state = path.join(layout.vault, 'state');
    fs.mkdirSync(state);
    const m = mounts(bwrapArgs({ ...layout, hidden: [state, path.join(dir, 'logs')] }, '/bin/claude', []));
    assert.ok(at(m, '--bind', layout.vault) < at(m, '--tmpfs', state));
  });

  test('a hidden file is covered by an empty read-only one; a missing one is skipped', (t) => {
    const { dir, layout } = site(t);
    const args = bwrapArgs({ ...layout, hidden: [path.join(dir, 'logs')] }, '/bin/claude', []);
    const i = args.indexOf(path.join(dir, 'home', 'nightshift.yaml'));
    assert.deepEqual(args.slice(i - 2, i + 1), ['--ro-bind', '/dev/null', path.join(dir, 'home', 'nightshift.yaml')]);
    assert.ok(!args.includes(path.join(dir, 'missing.env')));
  });

  test('the command runs last, in the vault, in its own PID namespace, dying with its parent', (t) => {
    const { layout } = site(t);
    const args = bwrapArgs(layout, '/bin/claude', ['-p', 'hi']);
    assert.deepEqual(args.slice(args.indexOf('--')), ['--', '/bin/claude', '-p', 'hi']);
    for (const flag of ['--unshare-pid', '--die-with-parent', '--new-session']) assert.ok(args.includes(flag), flag);
    assert.equal(args[args.indexOf('--chdir') + 1], layout.vault);
    assert.deepEqual(args.slice(0, 3), ['--ro-bind', '/', '/'], 'the rest of the system read-only');
  });

  test('hiding the vault or an extra dir is refused, not silently undone', (t) => {
    const { layout } = site(t);
    assert.throws(() => bwrapArgs({ ...layout, hidden: [layout.vault] }, '/bin/claude', []), SandboxError);
    assert.throws(() => bwrapArgs({ ...layout, writable: [layout.hidden[2]] }, '/bin/claude', []), /hooks\.extra_dirs/);
  });
});

test('a hidden folder that does not exist is left out (a system user\'s home: /nonexistent)', (t) => {
  const dir = tempDir(t);
  for (const d of ['vault', 'state', 'session/home']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const gone = path.join(dir, 'nonexistent');
  const args = bwrapArgs({
    vault: path.join(dir, 'vault'), writable: [], hidden: [path.join(dir, 'state'), gone], hiddenFiles: [], readable: [],
    sessionDir: path.join(dir, 'session'), home: path.join(dir, 'session', 'home'),
  }, 'claude', ['-p']);
  const tmpfs = args.flatMap((a, i) => (a === '--tmpfs' ? [args[i + 1]] : []));
  assert.deepEqual(tmpfs, ['/dev/shm', '/tmp', path.join(dir, 'state')]);
  assert.ok(!args.includes(gone), args.join(' '));
});
