// The rehearsal's vault (rehearsal/site.ts): a clone only of a repository nightshift trusts. A
// `.git` a session left in a vault with git off (a `gitdir:` file pointing at another repository of
// the host) is copied around, never followed: the rehearsal's session sees nothing of that other
// repository. Control: the clone the old rule made through it brings that repository's files in.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { validateConfig } from '../../config/config.js';
import { rehearsalPaths } from '../../config/rehearsal.js';
import { makeRehearsalSite, trustedRepo } from '../../rehearsal/site.js';
import { untrustedGitMarker } from '../../vault/git-guard.js';
import { tempDir } from '../helpers.js';

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
};

function site(t: TestContext, gitOn: boolean) {
  const dir = tempDir(t);
  const r = validateConfig({ vault: 'vault', state_dir: 'state', log_dir: 'logs', git: { enabled: gitOn } }, path.join(dir, 'nightshift.yaml'));
  assert.ok(r.config, JSON.stringify(r.problems));
  fs.mkdirSync(r.config.vault, { recursive: true });
  fs.mkdirSync(r.config.state_dir, { recursive: true });
  fs.writeFileSync(path.join(r.config.vault, 'notes.md'), 'mine\n');
  // Another repository of the host, with a file no session of this site may see.
  const other = path.join(dir, 'other');
  fs.mkdirSync(other);
  git(other, 'init', '-q');
  fs.writeFileSync(path.join(other, 'secret.txt'), 'not for the session\n');
  git(other, 'add', 'secret.txt');
  git(other, 'commit', '-qm', 'secret');
  return { config: r.config, dir, other };
}

test('a gitdir: file a session left in a vault with git off is copied around, not cloned through; control: the clone brings the other repository in', (t) => {
  const { config, dir, other } = site(t, false);
  fs.writeFileSync(path.join(config.vault, '.git'), `gitdir: ${other}/.git\n`);
  assert.equal(trustedRepo(config), false);
  const p = rehearsalPaths(config);
  assert.equal(makeRehearsalSite(config, p, process.env), 'copy');
  assert.deepEqual(fs.readdirSync(p.vault).sort(), ['notes.md']);
  // Control: what a clone whenever a .git exists (the rule before) makes of the same vault.
  const cloned = path.join(dir, 'cloned');
  git(dir, '-c', 'safe.directory=*', 'clone', '-q', '--no-hardlinks', config.vault, cloned);
  assert.equal(fs.readFileSync(path.join(cloned, 'secret.txt'), 'utf8'), 'not for the session\n');
});

test('a real repository with git on is cloned; a link for .git, or the untrusted mark, is not', (t) => {
  const { config } = site(t, true);
  git(config.vault, 'init', '-q');
  git(config.vault, 'add', 'notes.md');
  git(config.vault, 'commit', '-qm', 'notes');
  assert.equal(trustedRepo(config), true);
  const p = rehearsalPaths(config);
  assert.equal(makeRehearsalSite(config, p, process.env), 'clone');
  assert.ok(fs.existsSync(path.join(p.vault, '.git', 'HEAD')));
  fs.writeFileSync(untrustedGitMarker(config.state_dir), '');
  assert.equal(trustedRepo(config), false);
  fs.rmSync(untrustedGitMarker(config.state_dir));
  fs.renameSync(path.join(config.vault, '.git'), path.join(config.vault, '..', 'real-git'));
  fs.symlinkSync(path.join(config.vault, '..', 'real-git'), path.join(config.vault, '.git'));
  assert.equal(trustedRepo(config), false);
});
