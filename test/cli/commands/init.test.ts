// `nightshift init`: a site a new operator can run, driven as they would: init, doctor, and init
// again over what exists.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { git } from '../../git-helpers.js';
import { nextSteps } from '../../../cli/commands/init.js';
import { BWRAP, CLAUDE, nightshift, SESSION_USER, tempDir } from '../../helpers.js';

// The real CLI as `claude` on PATH, as `npm install -g @anthropic-ai/claude-code` leaves it.
function envWithClaude(dir: string): NodeJS.ProcessEnv {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.symlinkSync(CLAUDE, path.join(bin, 'claude'));
  const home = path.join(dir, 'home');
  fs.mkdirSync(home, { recursive: true });
  return { PATH: `${bin}:${process.env.PATH}`, HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'), DISABLE_AUTOUPDATER: '1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
}

describe('nightshift init', () => {
  test('makes a config, an agent, a vault, state and logs, and an env file only its owner reads; prints what to run next', async (t) => {
    const dir = tempDir(t);
    const ran = await nightshift(['init', 'site'], { PATH: process.env.PATH }, dir);
    assert.equal(ran.code, 0, ran.stderr);
    const site = path.join(dir, 'site');
    for (const f of ['nightshift.yaml', 'prompts/gardener.md', 'nightshift.env', 'vault/.git', 'state', 'logs']) assert.ok(fs.existsSync(path.join(site, f)), f);
    assert.equal(fs.statSync(path.join(site, 'nightshift.env')).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.join(site, 'state')).mode & 0o777, 0o700);
    assert.match(fs.readFileSync(path.join(site, 'nightshift.env'), 'utf8'), /^# ANTHROPIC_API_KEY=$/m);
    assert.match(ran.stdout, /Next \(as \S+, the site's owner\):\n {2}1\. put ANTHROPIC_API_KEY=.* in .*nightshift\.env\n {2}2\. nightshift doctor --config .*site\/nightshift\.yaml\n {2}3\. nightshift rehearse gardener --config .*\n {2}4\. nightshift run gardener --config .*\n {2}5\. the timer, as root: NIGHTSHIFT_CONFIG=\S+ nightshift systemd install --user \S+/);
  });

  // The units' PrivateTmp= hides /tmp and /var/tmp: a site there never runs under the timer.
  test('under /tmp it warns that the units hide the folder and points to /srv; under /srv it does not', async (t) => {
    const dir = tempDir(t);
    assert.ok(dir.startsWith('/tmp/'), `the test's temp folder is under /tmp: ${dir}`);
    const ran = await nightshift(['init', 'site'], { PATH: process.env.PATH }, dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /^warning: \/tmp\/\S+\/site is under \/tmp, which the systemd units' PrivateTmp= hides .*never under the timer\. For the timer, make it under \/srv: nightshift init \/srv\/nightshift$/m);
    // Control: the same init under /srv says nothing of it.
    const srv = fs.mkdtempSync('/srv/rehearse-init-');
    t.after(() => fs.rmSync(srv, { recursive: true, force: true }));
    const there = await nightshift(['init', 'site'], { PATH: process.env.PATH }, srv);
    assert.equal(there.code, 0, there.stderr);
    assert.doesNotMatch(there.stdout, /PrivateTmp|^warning:/m);
    assert.match(there.stdout, /^ {2}3\. nightshift rehearse gardener /m);
  });

  test('its next steps name the user who owns the site, for the steps and for the units', () => {
    const as = (user: string | null) => nextSteps({ dir: '/srv/s', config: '/srv/s/nightshift.yaml', conf: '', user }).join('\n');
    const alice = as('alice');
    assert.match(alice, /^Next \(as alice, the site's owner\):$/m);
    assert.match(alice, /systemd install --user alice \(the units run as alice, who owns this site; as root, run the steps above as it: runuser -u alice -- nightshift \.\.\.\)/);
    assert.match(alice, /^ {2}3\. nightshift rehearse gardener /m);
    const root = as('root');
    assert.match(root, /systemd install --user root \(this site is root's; for a service user of its own, make the site as it instead: useradd --system --user-group .* nightshift, install -d -o nightshift -g nightshift \/srv\/nightshift, runuser -u nightshift -- nightshift init \/srv\/nightshift\)/);
    assert.doesNotMatch(alice, /useradd/);
  });

  test('run as root, the vault it makes is the session user\'s group\'s to write (setgid folders), and it says so', { skip: SESSION_USER ? false : 'needs root: only a root supervisor has a session user' }, async (t) => {
    const dir = tempDir(t);
    const ran = await nightshift(['init', 'site'], { PATH: process.env.PATH }, dir);
    assert.equal(ran.code, 0, ran.stderr);
    const vault = path.join(dir, 'site', 'vault');
    for (const p of [vault, path.join(vault, '.git'), path.join(vault, '.git', 'objects')]) {
      const st = fs.statSync(p);
      assert.equal(st.gid, SESSION_USER!.gid, p);
      assert.equal(st.mode & 0o2070, 0o2070, `${p}: group rwx and setgid`);
    }
    assert.match(ran.stdout, new RegExp(`gave ${vault} to group nightshift-session \\(setgid\\)`));
  });

  test('the generated config passes doctor but for the credential, and all of it once the env file holds one', async (t) => {
    const dir = tempDir(t);
    // Run as root, the sessions' own user must pass through the site's folder (init made none).
    if (SESSION_USER) fs.chmodSync(dir, 0o711);
    const env = envWithClaude(dir);
    assert.equal((await nightshift(['init'], env, dir)).code, 0);
    const doctor = async () => {
      const ran = await nightshift(['doctor', '--json'], env, dir);
      return { ran, failing: JSON.parse(ran.stdout).checks.filter((c: any) => c.status === 'fail').map((c: any) => c.name) };
    };
    const before = await doctor();
    assert.deepEqual(before.failing, BWRAP ? ['credential'] : ['credential', 'sandbox']);
    assert.equal(before.ran.code, 1);
    // The operator's step 1: the key into the env file (never a real key in a test).
    fs.appendFileSync(path.join(dir, 'nightshift.env'), 'ANTHROPIC_API_KEY=test-key-for-init\n');
    const after = await doctor();
    assert.deepEqual(after.failing, BWRAP ? [] : ['sandbox']);
    if (BWRAP) assert.equal(after.ran.code, 0, after.ran.stdout);
  });

  test('never overwrites what exists, and says which were kept', async (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'vault: ./mine\n');
    fs.writeFileSync(path.join(dir, 'nightshift.env'), 'ANTHROPIC_API_KEY=kept-key\n', { mode: 0o600 });
    const ran = await nightshift(['init'], { PATH: process.env.PATH }, dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(fs.readFileSync(path.join(dir, 'nightshift.yaml'), 'utf8'), 'vault: ./mine\n');
    assert.equal(fs.readFileSync(path.join(dir, 'nightshift.env'), 'utf8'), 'ANTHROPIC_API_KEY=kept-key\n');
    assert.match(ran.stdout, /^kept {2}.*\/nightshift\.yaml \(exists; not changed\)$/m);
    assert.match(ran.stdout, /^kept {2}.*\/nightshift\.env /m);
    assert.match(ran.stdout, /^made {2}.*\/prompts\/gardener\.md$/m);
    const again = await nightshift(['init'], { PATH: process.env.PATH }, dir);
    assert.doesNotMatch(again.stdout, /^made/m);
  });

  test('--remote clones the vault and turns git sync on', async (t) => {
    const dir = tempDir(t);
    const remote = path.join(dir, 'remote.git');
    git(dir, 'init', '--quiet', '--bare', '-b', 'main', remote);
    const ran = await nightshift(['init', 'site', '--remote', remote], { PATH: process.env.PATH, HOME: dir }, dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(git(path.join(dir, 'site', 'vault'), 'remote', 'get-url', 'origin'), remote);
    assert.match(fs.readFileSync(path.join(dir, 'site', 'nightshift.yaml'), 'utf8'), /^ {2}enabled: true/m);
    const bad = await nightshift(['init', 'other', '--remote', path.join(dir, 'nowhere.git')], { PATH: process.env.PATH, HOME: dir }, dir);
    assert.equal(bad.code, 1, 'a failed clone is a failure (exit 1), not a usage error');
    assert.match(bad.stderr, /git clone .*nowhere\.git failed: .*Nothing was left behind/);
    assert.equal(fs.existsSync(path.join(dir, 'other')), false, 'no half site: the folder init made is gone');
    // Into a folder that was there: it is left as it was, with nothing of init's in it.
    fs.mkdirSync(path.join(dir, 'mine'));
    fs.writeFileSync(path.join(dir, 'mine', 'notes.txt'), 'mine');
    const into = await nightshift(['init', 'mine', '--remote', path.join(dir, 'nowhere.git')], { PATH: process.env.PATH, HOME: dir }, dir);
    assert.equal(into.code, 1);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'mine')), ['notes.txt']);
  });
});
