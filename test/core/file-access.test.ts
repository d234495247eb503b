// Permission and ownership problems on our files are told as such: the user we run as, the owner,
// the mode and the exact chown/chmod; never "move it aside". The advice is a pure function over
// plain data; the real checks run as a user the folder shuts out (as root, root passes every
// permission check, so the store is opened by a child process running as nobody).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Ledger } from '../../budget/ledger.js';
import { PermissionError } from '../../core/errors.js';
import { accessAdvice, accessFacts, foreignOwnerAdvice, type AccessFacts } from '../../core/file-access.js';
import { MemoryStore } from '../../memory/store.js';
import { MemoryError } from '../../memory/types.js';
import { ROOT, tempDir } from '../helpers.js';

const me = { name: 'nightshift', uid: 998 };
const root = { name: 'root', uid: 0 };
const base: AccessFacts = { what: 'memory database', path: '/var/lib/nightshift', kind: 'folder', need: ['write'], user: me, owner: root, mode: 0o40755 };

describe('accessAdvice', () => {
  const table: Array<[string, Partial<AccessFacts>, RegExp]> = [
    ['a folder owned by another user: chown -R to us', {}, /runs as nightshift \(uid 998\) and cannot write the memory database folder \/var\/lib\/nightshift, owned by root \(uid 0\) with mode 0755\. .*fix the access: sudo chown -R nightshift \/var\/lib\/nightshift$/],
    ['a file owned by another user: chown the file', { kind: 'file', path: '/var/lib/nightshift/ledger.db', what: 'ledger', need: ['read', 'write'], mode: 0o100600 }, /cannot read or write the ledger file .* mode 0600\. .*sudo chown nightshift \/var\/lib\/nightshift\/ledger\.db$/],
    ['our own file with a mode that shuts us out: chmod', { kind: 'file', path: '/s/memory.db', need: ['read', 'write'], owner: me, mode: 0o100000 }, /owned by nightshift \(uid 998\) with mode 0000\. .*chmod u\+rw \/s\/memory\.db$/],
    ['our own folder we cannot enter: chmod u+x', { path: '/s', need: ['enter'], owner: me, mode: 0o40600 }, /cannot enter .*chmod u\+x \/s$/],
    ['a user without a name: by uid', { user: { name: null, uid: 4242 } }, /runs as uid 4242 .*sudo chown -R 4242 /],
    ['a path with a space is quoted', { path: '/srv/night shift' }, /sudo chown -R nightshift '\/srv\/night shift'$/],
    // Why-point 8 of issue 35: the service user running `systemd install` was told to chown
    // /etc/systemd/system to itself. A folder of the system's (root's, outside our site): run as root.
    ['a system folder (root\'s, outside our site): run as root, never chown', { what: '', path: '/etc/systemd/system', insideOurs: false }, /fix the access: it is a folder of the system's, root's to write: run the command as root \(sudo nightshift …\), never chown it$/],
    ['control: a root-made leftover inside our own site is chowned back to us', { what: '', path: '/srv/site/state/sessions', insideOurs: true }, /sudo chown -R nightshift \/srv\/site\/state\/sessions$/],
    ['a named path that is a system folder (state_dir: /var/lib) is never chowned', { what: 'state_dir', path: '/var/lib' }, /it is a folder of the system's/],
    // Another user's site (the operator as alice on the service user's site): run as its owner.
    ['another user\'s site: runuser as its owner, units for them, no chown', { user: { name: 'alice', uid: 1001 }, owner: me, path: '/srv/site/state' }, /fix the access: it belongs to nightshift: run nightshift as them \(sudo runuser -u nightshift -- nightshift …\), and install the units for them \(nightshift systemd install --user nightshift\)/],
    // Issue 50 item 3: root's ledger in the service user's state_dir, met by a third user: it goes
    // back to state_dir's owner, and nightshift runs as them (control: without folderOwner, the
    // advice chowns it to whoever met it: the row above's "sudo chown nightshift").
    ['root\'s leftover in another user\'s folder: back to the folder\'s owner, and run as them', { user: { name: 'alice', uid: 1001 }, kind: 'file', path: '/srv/site/state/ledger.db', what: 'ledger', mode: 0o100644, folderOwner: me }, /fix the access: root made it in nightshift's folder: give it back \(sudo chown nightshift \/srv\/site\/state\/ledger\.db\) and run nightshift as nightshift \(sudo runuser -u nightshift -- nightshift …\)$/],
    ['control: the folder\'s owner meeting root\'s leftover chowns it back to themself', { kind: 'file', path: '/srv/site/state/ledger.db', what: 'ledger', mode: 0o100644, folderOwner: me }, /fix the access: sudo chown nightshift \/srv\/site\/state\/ledger\.db$/],
  ];
  for (const [name, facts, expected] of table) {
    test(name, () => {
      const m = accessAdvice({ ...base, ...facts });
      assert.match(m, expected);
      assert.doesNotMatch(m, /move it aside/i);
      // No advice hands a system folder, or another user's site, to us.
      if (/system's|belongs to/.test(m)) assert.doesNotMatch(m, /sudo chown/);
    });
  }
});

test('units for root on a service user\'s site (EPERM on its files): the owner named, runuser and the units for them, no chown', () => {
  const m = foreignOwnerAdvice('/srv/site/state/sessions', { name: 'nightshift', uid: 998 });
  assert.match(m, /nightshift runs as root and may not change \/srv\/site\/state\/sessions, owned by nightshift \(uid 998\): it belongs to nightshift: run nightshift as them \(runuser -u nightshift -- nightshift …\), and install the units for them/);
  assert.doesNotMatch(m, /chown -R|sudo chown/);
});

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

// Runs `code` (an ES module body) as nobody when we are root, else as ourselves; returns its stdout JSON.
function runAs(code: string): any {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', ...(isRoot ? { uid: NOBODY, gid: NOBODY } : {}) });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const openStoreCode = (file: string) => `
  import { MemoryStore } from ${JSON.stringify(path.join(ROOT, 'dist', 'memory', 'store.js'))};
  import { Ledger } from ${JSON.stringify(path.join(ROOT, 'dist', 'budget', 'ledger.js'))};
  const out = {};
  try { MemoryStore.open(${JSON.stringify(file)}).close(); out.store = 'opened'; } catch (e) { out.store = { code: e.code, message: e.message }; }
  try { Ledger.open(${JSON.stringify(path.join(path.dirname(file), 'ledger.db'))}).close(); out.ledger = 'opened'; } catch (e) { out.ledger = { code: e.code, message: e.message }; }
  process.stdout.write(JSON.stringify(out));`;

test('a store folder the service user cannot write: the memory database and the ledger say who owns it and the chown', (t) => {
  const dir = tempDir(t);
  fs.chmodSync(dir, 0o755);
  const state = path.join(dir, 'state');
  // 0755 whatever the umask (the helpers keep group write for the session user).
  fs.mkdirSync(state, { mode: 0o755 });
  const file = path.join(state, 'memory.db');
  MemoryStore.open(file).close();
  Ledger.open(path.join(state, 'ledger.db')).close();
  for (const f of fs.readdirSync(state)) fs.chmodSync(path.join(state, f), 0o644);
  // Owned by us, readable by all, writable by the owner only: a healthy store another user runs against.
  if (!isRoot) fs.chmodSync(state, 0o555);
  let r: any;
  try {
    r = runAs(openStoreCode(file));
  } finally {
    fs.chmodSync(state, 0o755);
  }
  for (const k of ['store', 'ledger'] as const) {
    assert.equal(r[k].code, 'PERMISSION', `${k}: ${JSON.stringify(r[k])}`);
    assert.match(r[k].message, /Permission denied: nightshift runs as \S+ \(uid \d+\)/, k);
    assert.match(r[k].message, new RegExp(`cannot write the (memory database|ledger) folder ${state} \\(for .*\\), owned by .* with mode 0[57]55`), k);
    assert.ok(r[k].message.endsWith(isRoot ? `sudo chown -R nobody ${state}` : `chmod u+w ${state}`), r[k].message);
    assert.doesNotMatch(r[k].message, /move it aside|corrupt/i, k);
  }
  // Negative control, tried once: without refuseDenied in memory/schema.ts, the store said
  // "cannot be read (SQLITE_CANTOPEN) ... Move it aside to start a new store" here.
  assert.match(fs.readFileSync(file).subarray(0, 16).toString('latin1'), /^SQLite format 3/, 'the store is left as it was');
});

test('accessFacts finds the folder on the way that shuts us out, and nothing when all is open', { skip: isRoot ? 'root passes every permission check (covered above through a child running as nobody)' : false }, (t) => {
  const dir = tempDir(t);
  const locked = path.join(dir, 'locked');
  fs.mkdirSync(locked);
  fs.chmodSync(locked, 0o000);
  t.after(() => fs.chmodSync(locked, 0o755));
  const f = accessFacts(path.join(locked, 'state', 'memory.db'), 'memory database');
  assert.equal(f?.path, locked);
  assert.deepEqual(f?.need, ['enter']);
  assert.equal(accessFacts(path.join(dir, 'open', 'memory.db'), 'memory database'), null);
});

test('a corrupt store is still "move it aside", and a healthy one opens: the advice is for permissions only', (t) => {
  const dir = tempDir(t);
  const bad = path.join(dir, 'bad.db');
  fs.writeFileSync(bad, 'not a database '.repeat(50));
  assert.throws(() => MemoryStore.open(bad), (e: unknown) => e instanceof MemoryError && e.code === 'CORRUPT' && /Move it aside/.test(e.message));
  assert.throws(() => Ledger.open(bad), (e: unknown) => !(e instanceof PermissionError) && /move it aside/.test((e as Error).message));
  assert.equal(accessFacts(path.join(dir, 'fine.db'), 'memory database'), null);
});
