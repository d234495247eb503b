// Never root inside (issue 26, point 3): run by a root supervisor, a walled session runs as
// session_user, so root's own files stay closed to it though bwrap drops every capability: it
// cannot read a 0600 file of root's in a folder it writes, and `id -u` is not 0 (/etc/shadow is not
// in its view of the host at all). It still writes the
// vault, and nightshift (root) commits and pushes the work. The control, the same session without
// session_user (a test-only seam: the fixture run-as-root.mjs), is uid 0 inside and reads the key.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { bash, text } from '../fake-api.js';
import { FIXTURES, NEEDS_BWRAP, SESSION_USER, configYaml, fakeApiPerFile, runJson, shareWithSession, workspace, writeAgent } from '../helpers.js';
import { makeRepos, remoteFile, remoteLog } from '../git-helpers.js';

const api = fakeApiPerFile();
const KEY_TEXT = '-----BEGIN PRIVATE KEY----- root-only-7c1d';
const SKIP = process.getuid?.() !== 0 ? 'needs root: session_user applies to a root supervisor only' : NEEDS_BWRAP;

// What a hostile tool tries, printed as one JSON line; then it writes the vault.
const PROBE = String.raw`
const fs = require('fs');
const read = (f) => { try { return fs.readFileSync(f, 'utf8').slice(0, 120); } catch (e) { return 'error ' + e.code; } };
const out = { uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(), shadow: read('/etc/shadow'), key: read(process.argv[2]) };
fs.writeFileSync('made-by-session.md', 'the session wrote this\n');
fs.appendFileSync('notes.md', 'and edited this\n');
console.log('PROBE ' + JSON.stringify(out));
`;

// A 0600 file of root's in an extra dir the session writes (in its view of the host), in a folder
// anyone may enter: only the file's own mode keeps it.
function rootKey(t: TestContext): { dir: string; key: string } {
  const dir = fs.mkdtempSync('/var/tmp/nightshift-rootkey-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  shareWithSession(dir);
  const key = path.join(dir, 'tls.key');
  fs.writeFileSync(key, `${KEY_TEXT}\n`, { mode: 0o600 });
  fs.chmodSync(key, 0o600);
  return { dir, key };
}

async function session(t: TestContext, asSessionUser: boolean) {
  const { dir: extra, key } = rootKey(t);
  const ws = workspace(t, api.url, configYaml({ top: `hooks:\n  extra_dirs: [${JSON.stringify(extra)}]\n` }));
  const repos = makeRepos(ws.dir, ws.vault);
  fs.writeFileSync(path.join(ws.vault, 'probe.cjs'), PROBE);
  const name = asSessionUser ? 'root-walled' : 'root-control';
  api.script(name, ({ turn }) => (turn === 0 ? bash(`node probe.cjs ${key}; git log --oneline -1 > /dev/null 2>&1 && echo GIT-OK || git log -1 2>&1 | head -2`) : text('Probed.')));
  writeAgent(ws, 'prober', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
  let record: any;
  let stderr: string;
  if (asSessionUser) {
    // An env file in a folder of root's alone: the session user cannot reach it, nor bwrap mount over it.
    const secrets = fs.mkdtempSync('/var/tmp/nightshift-rootenv-');
    t.after(() => fs.rmSync(secrets, { recursive: true, force: true }));
    fs.chmodSync(secrets, 0o700);
    fs.writeFileSync(path.join(secrets, 'site.env'), 'SITE_SECRET=kept\n', { mode: 0o600 });
    const r = await runJson(ws, 'prober', ['--environment-file', path.join(secrets, 'site.env')]);
    record = { session: r.record, git: r.record.git };
    stderr = r.ran.stderr;
  } else {
    const ran = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      const c = spawn(process.execPath, [path.join(FIXTURES, 'run-as-root.mjs'), ws.config, 'prober'], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let err = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d));
      c.stderr.on('data', (d: Buffer) => (err += d));
      c.on('close', () => resolve({ stdout, stderr: err }));
    });
    record = JSON.parse(ran.stdout.trim().split('\n').at(-1) || 'null');
    stderr = ran.stderr;
  }
  assert.equal(record?.session?.outcome, 'ok', stderr);
  const result = api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult ?? '').find((x) => x.includes('PROBE '));
  assert.ok(result, `the probe ran: ${JSON.stringify(api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult))}`);
  const out = JSON.parse(result.slice(result.indexOf('PROBE ') + 6).split('\n')[0]);
  // The session's own git works in the vault (root's, its group the session's): no "dubious ownership".
  assert.match(result, /GIT-OK/, result);
  return { ws, repos, out, stderr };
}

test('run by root, a walled session is session_user: a 0600 root file stays closed, and its work is committed and pushed', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const { ws, repos, out, stderr } = await session(t, true);
  assert.notEqual(out.uid, 0, 'id -u inside is not 0');
  assert.equal(out.uid, SESSION_USER!.uid, 'the session user');
  assert.deepEqual([out.gid, out.groups], [SESSION_USER!.gid, [SESSION_USER!.gid]], 'its own group only: root\'s are cleared');
  assert.equal(out.shadow, 'error ENOENT', '/etc/shadow is not in the session\'s view of the host at all');
  assert.equal(out.key, 'error EACCES', 'the 0600 key is not read');
  // The vault was written, as that user, and nightshift (root) committed and pushed it.
  assert.equal(fs.statSync(path.join(ws.vault, 'made-by-session.md')).uid, SESSION_USER!.uid);
  assert.equal(remoteFile(repos, 'made-by-session.md'), 'the session wrote this');
  assert.equal(remoteFile(repos, 'notes.md'), 'line one\nand edited this', 'a file the clone brought (root\'s) was editable');
  assert.match(remoteLog(repos)[0], /nightshift\(prober\): ok/);
  assert.doesNotMatch(stderr, /dubious ownership/);
});

test('negative control: the same session without session_user is uid 0 inside and reads the key', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const { repos, out } = await session(t, false);
  assert.equal(out.uid, 0);
  assert.equal(out.key, `${KEY_TEXT}\n`, 'root reads the 0600 key through the wall');
  // /etc/shadow is out of the view whoever reads (wall-layout.ts hostView; e2e/host-view).
  assert.equal(out.shadow, 'error ENOENT');
  assert.equal(remoteFile(repos, 'made-by-session.md'), 'the session wrote this');
});

test('run by root, a walled agent without allowed_tools runs: the CLI, as session_user, takes bypassPermissions', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const ws = workspace(t, api.url, configYaml());
  api.script('root-bypass', ({ turn }) => (turn === 0 ? bash('id -u > bypass-uid.txt') : text('Done.')));
  fs.writeFileSync(path.join(ws.prompts, 'open.md'), '---\ndescription: no tool list\n---\nSCENARIO=root-bypass\n');
  const r = await runJson(ws, 'open');
  assert.equal(r.record.outcome, 'ok', r.ran.stderr);
  assert.equal(fs.readFileSync(path.join(ws.vault, 'bypass-uid.txt'), 'utf8').trim(), String(SESSION_USER!.uid));
});
