// session_user: who a root supervisor's walled session runs as, refused when it would be root or
// shared, and what it must reach (config/session-user.ts). The session end to end is in
// test/e2e/session-user.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { validateConfig } from '../../config/config.js';
import { allows, giveToSession, openSessionsDir, reachProblems, sessionUserFor, type SessionUser } from '../../config/session-user.js';
import { NEEDS_BWRAP, ROOT, SESSION_USER, tempDir } from '../helpers.js';

const U: SessionUser = { name: 'nightshift-session', uid: 990, gid: 980 };
const ROOT_ONLY = process.getuid?.() !== 0 ? 'needs root: chown and a folder root alone may enter' : false;

test('config refuses root and nobody as session_user, each naming why; the default is nightshift-session', () => {
  for (const u of ['root', 'nobody']) {
    const r = validateConfig({ session_user: u }, '/srv/site/nightshift.yaml');
    assert.deepEqual(r.problems, [`session_user: Expected an unprivileged user of nightshift's own (never \`root\`, never \`nobody\`, which other services share), got \`${u}\`: the default is \`nightshift-session\``]);
  }
  assert.equal(validateConfig({}, '/srv/site/nightshift.yaml').config!.session_user, 'nightshift-session');
});

test('only a root supervisor with a wall has a session user; a missing one or one of uid 0 is refused with the fix', (t) => {
  const passwd = path.join(tempDir(t), 'passwd');
  fs.writeFileSync(passwd, 'root:x:0:0::/root:/bin/sh\nnightshift-session:x:990:980::/nonexistent:/usr/sbin/nologin\ntoor:x:0:0::/:/bin/sh\n');
  const c = { sandbox: 'bwrap' as const, session_user: 'nightshift-session', file: '/srv/site/nightshift.yaml' };
  assert.deepEqual(sessionUserFor(c, { uid: 0, passwd }), { user: U, problem: null });
  assert.deepEqual(sessionUserFor(c, { uid: 1000, passwd }), { user: null, problem: null }, 'not root: the session runs as the supervisor');
  assert.deepEqual(sessionUserFor({ ...c, sandbox: 'none' }, { uid: 0, passwd }), { user: null, problem: null });
  assert.match(sessionUserFor({ ...c, session_user: 'ghost' }, { uid: 0, passwd }).problem!, /`ghost`, which does not exist: run `useradd --system --no-create-home --shell \/usr\/sbin\/nologin ghost`/);
  assert.match(sessionUserFor({ ...c, session_user: 'toor' }, { uid: 0, passwd }).problem!, /session_user `toor` has uid 0 .*never run as root/);
});

test('access is read from the class the user falls in: owner, its own group, or others', () => {
  const table: Array<[number, number, number, number, boolean]> = [
    // uid, gid, mode, bits, allowed
    [990, 0, 0o700, 7, true],
    [0, 980, 0o2770, 3, true],
    [0, 980, 0o2750, 3, false],
    [0, 0, 0o755, 1, true],
    [0, 0, 0o750, 1, false],
    [990, 980, 0o077, 1, false], // the owner's own bits decide, not the group's
  ];
  for (const [uid, gid, mode, bits, want] of table) assert.equal(allows({ uid, gid, mode }, U, bits), want, `${uid}:${gid} ${mode.toString(8)} ${bits}`);
});

test('a vault the session user cannot write, or cannot reach, is named with the command that fixes it', { skip: ROOT_ONLY }, (t) => {
  const u = SESSION_USER!;
  const dir = tempDir(t);
  fs.chmodSync(dir, 0o755);
  const vault = path.join(dir, 'vault');
  fs.mkdirSync(vault, { mode: 0o755 });
  fs.chmodSync(vault, 0o755);
  const config = { vault, state_dir: path.join(dir, 'state'), hooks: { extra_dirs: [] } } as any;
  assert.deepEqual(reachProblems(config, u, null), [`the vault ${vault} (mode 0755, uid 0, gid 0) is not writable by session_user ${u.name}: \`chgrp -R ${u.name} ${vault} && chmod -R g+rwX ${vault} && find ${vault} -type d -exec chmod g+s {} +\``]);
  fs.chownSync(vault, 0, u.gid);
  fs.chmodSync(vault, 0o2775);
  assert.deepEqual(reachProblems(config, u, null), []);
  fs.chmodSync(dir, 0o700);
  assert.match(reachProblems(config, u, null).join('\n'), new RegExp(`the vault ${vault} lies in ${dir} \\(mode 0700, uid 0, gid 0\\), which session_user ${u.name} cannot pass through: \`chmod o\\+x ${dir}\``));
});

// Issue 50 item 4: root in the service user's site was told to chgrp -R their vault.
// control: without siteOwner's check in reachProblems, the first assertion gets the chgrp line of the test above.
test('root in a site of another user\'s is told to run as its owner, never to chgrp their vault', { skip: ROOT_ONLY }, (t) => {
  const u = SESSION_USER!;
  const dir = tempDir(t);
  fs.chmodSync(dir, 0o755);
  const vault = path.join(dir, 'vault');
  const state = path.join(dir, 'state');
  fs.mkdirSync(vault, { mode: 0o755 });
  fs.mkdirSync(state, { mode: 0o755 });
  for (const p of [vault, state]) fs.chownSync(p, 65534, 65534);
  const config = { vault, state_dir: state, hooks: { extra_dirs: [] } } as any;
  assert.deepEqual(reachProblems(config, u, null), [`state_dir ${state} is owned by nobody (uid 65534), not root: it belongs to nobody: run nightshift as them (runuser -u nobody -- nightshift …), and install the units for them (nightshift systemd install --user nobody); a chown would take the site from nobody`]);
  // The vault alone tells too, where state_dir is not made yet.
  fs.rmdirSync(state);
  assert.match(reachProblems(config, u, null)[0], new RegExp(`^the vault ${vault} is owned by nobody .*runuser -u nobody -- nightshift`));
  // Control: root's own site (a vault given to the session user's group is still root's) gets the chgrp.
  fs.chownSync(vault, 0, 0);
  assert.match(reachProblems(config, u, null)[0], new RegExp(`^the vault ${vault} .*is not writable by session_user ${u.name}: \`chgrp -R ${u.name} `));
  fs.chownSync(vault, u.uid, u.gid);
  assert.deepEqual(reachProblems(config, u, null), [], 'a vault of the session user\'s own is not another owner\'s site');
});

test('the session\'s folder and its sockets become the session user\'s, reachable through state_dir, and by no other user', { skip: ROOT_ONLY }, async (t) => {
  const u = SESSION_USER!;
  const state = path.join(tempDir(t), 'state');
  fs.mkdirSync(state, { mode: 0o700 });
  fs.chmodSync(state, 0o700);
  const sessions = path.join(state, 'sessions');
  openSessionsDir(state, sessions, u);
  assert.equal(fs.statSync(state).mode & 0o777, 0o710, 'search for its group, never a listing');
  assert.equal(fs.statSync(state).gid, u.gid, 'the session user\'s group, no one else\'s');
  assert.equal(allows(fs.statSync(sessions), u, 1), true);
  const dir = path.join(sessions, 's1');
  fs.mkdirSync(path.join(dir, 's'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(dir, 'mcp.json'), '{}', { mode: 0o600 });
  const server = net.createServer();
  const socket = path.join(dir, 's', 'a');
  await new Promise<void>((r) => server.listen(socket, () => r()));
  t.after(() => server.close());
  fs.chmodSync(socket, 0o600);
  giveToSession(dir, u);
  for (const p of [dir, path.join(dir, 's'), socket, path.join(dir, 'mcp.json')]) {
    const st = fs.lstatSync(p);
    assert.deepEqual([st.uid, st.gid], [u.uid, u.gid], p);
  }
  assert.equal(fs.statSync(socket).mode & 0o777, 0o600, 'the socket: the session user and root only');
  assert.equal(fs.statSync(dir).mode & 0o077, 0, 'its folder: no one else enters');
});

test('a root supervisor that may not change uid (a unit without CAP_SETUID) is told so by the probe, not an internal error', { skip: ROOT_ONLY || NEEDS_BWRAP }, () => {
  const u = SESSION_USER!;
  const sandbox = path.join(ROOT, 'dist', 'sessions', 'wall', 'sandbox.js');
  const script = `import(${JSON.stringify(sandbox)}).then(async (m) => console.log(await m.bwrapProblem('bwrap', process.env.PATH, { uid: ${u.uid}, gid: ${u.gid} })))`;
  const run = (drop: boolean) => spawnSync('setpriv', [...(drop ? ['--bounding-set=-setuid,-setgid', '--inh-caps=-setuid,-setgid'] : []), process.execPath, '-e', script], { encoding: 'utf8' });
  const without = run(true);
  assert.match(without.stdout, /bwrap cannot be started as the session's user \(uid \d+\): spawn EPERM \(.*must keep CAP_SETUID and CAP_SETGID/, without.stderr);
  assert.equal(run(false).stdout.trim(), 'null', 'control: with them, the probe passes');
});
