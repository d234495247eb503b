import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { bwrapArgs, SandboxError, type SandboxLayout } from '../../../sessions/wall/sandbox.js';
import { describeView, ETC_VIEW, hostView, installRoot, SYSTEM_VIEW } from '../../../sessions/wall/wall-layout.js';
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

// The host's view (issue 37): no `/` bound, each view path bound read-only (a link made as the same
// link), `/` read-only at the end, and only what is in sight hidden.
describe('the host\'s view', () => {
  test('with a view, `/` is bwrap\'s own tmpfs, each view path is bound read-only or made as its link, and `/` is read-only last', (t) => {
    const { dir, layout } = site(t);
    const sys = path.join(dir, 'sys');
    fs.mkdirSync(path.join(sys, 'usr'), { recursive: true });
    fs.symlinkSync('usr', path.join(sys, 'bin'));
    const view = [path.join(sys, 'usr'), path.join(sys, 'bin'), path.join(sys, 'missing')];
    const args = bwrapArgs({ ...layout, view }, '/bin/claude', []);
    const head = args.slice(0, args.indexOf('--'));
    assert.ok(!head.join(' ').includes('--ro-bind / /'), 'the host\'s / is not bound');
    const m = mounts(args);
    assert.ok(at(m, '--ro-bind', path.join(sys, 'usr')) >= 0);
    const link = head.indexOf('--symlink');
    assert.deepEqual(head.slice(link, link + 3), ['--symlink', 'usr', path.join(sys, 'bin')]);
    assert.ok(!head.includes(path.join(sys, 'missing')), 'a missing view path is left out');
    assert.deepEqual(m.filter(([f]) => f === '--remount-ro').map(([, x]) => x).slice(-2), ['/', '/dev'], '`/` read-only after every mount, then /dev');
    // The control: no view keeps the whole host, read-only.
    assert.deepEqual(bwrapArgs(layout, '/bin/claude', []).slice(0, 3), ['--ro-bind', '/', '/']);
    assert.ok(!bwrapArgs(layout, '/bin/claude', []).includes('--symlink'));
  });

  test('with a view, what lies out of sight is not hidden again; what is in sight still is; a readable path is always bound', (t) => {
    const { dir, layout } = site(t);
    const cli = path.join(dir, 'cli');
    fs.mkdirSync(cli);
    // Neither logs nor the home (which holds the vault) lies inside anything in sight.
    const m = mounts(bwrapArgs({ ...layout, view: [], readable: [cli] }, '/bin/claude', []));
    assert.equal(at(m, '--tmpfs', path.join(dir, 'logs')), -1, 'logs is out of sight already');
    assert.equal(at(m, '--tmpfs', path.join(dir, 'home')), -1);
    assert.ok(at(m, '--ro-bind', cli) >= 0, 'the CLI is bound though no hidden folder covers it');
    assert.ok(!mounts(bwrapArgs({ ...layout, view: [] }, '/bin/claude', [])).some(([, x]) => x === path.join(dir, 'home', 'nightshift.yaml')), 'a hidden file out of sight is not made');
    // A state dir inside the vault is in sight: hidden again on top of the vault.
    const inVault = path.join(layout.vault, 'state');
    fs.mkdirSync(inVault);
    const m2 = mounts(bwrapArgs({ ...layout, view: [], hidden: [inVault] }, '/bin/claude', []));
    assert.ok(at(m2, '--tmpfs', inVault) > at(m2, '--bind', layout.vault));
  });

  test('hostView: /usr and its links, the chosen parts of /etc, the CLI\'s folder and node\'s install; never /var, /srv, /opt or /home', () => {
    const v = hostView('/opt/claude-code', '/opt/node-24/bin/node');
    for (const p of ['/usr', '/bin', '/lib', '/lib64', '/sbin', '/etc/passwd', '/etc/ld.so.cache', '/etc/ssl', '/opt/claude-code', '/opt/node-24']) assert.ok(v.includes(p), p);
    for (const p of ['/', '/etc', '/var', '/var/lib', '/srv', '/opt', '/home', '/root', '/run', '/sys', '/etc/npmrc', '/etc/shadow', '/etc/ssh']) assert.ok(!v.includes(p), p);
    assert.ok(v.every((p) => !['/var', '/srv', '/home', '/root', '/run', '/mnt', '/sys'].some((d) => p === d || p.startsWith(`${d}/`))), v.join(' '));
    assert.equal(installRoot('/usr/bin/node'), '/usr');
    assert.equal(installRoot('/opt/node/bin/node'), '/opt/node');
    assert.equal(installRoot('/opt/tools/node'), '/opt/tools');
    assert.equal(installRoot('/bin/node'), '/bin');
    assert.deepEqual(hostView(null, null), [...SYSTEM_VIEW, ...ETC_VIEW]);
  });
});

test('describeView says what of the host a session sees, leaving out what is not there', () => {
  const there = new Set(['/usr', '/bin', '/lib', '/etc/passwd', '/etc/ssl', '/opt/claude', '/opt/node']);
  const d = describeView(hostView('/opt/claude', '/opt/node/bin/node'), (p) => there.has(p));
  assert.equal(d, 'of the host a session sees /usr, /bin, /lib, 2 entries of /etc, /opt/claude, /opt/node (read-only), the vault and the extra dirs; nothing else (no /var, /srv, /home, /run)');
});
