import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { anyRefUnder, headBranch, refSha } from '../../vault/refs.js';
import { tempDir } from '../helpers.js';

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd, encoding: 'utf8' }).trim();

test('the branch read from .git/HEAD is the one git names, and only an attached HEAD is read', (t) => {
  const vault = tempDir(t);
  git(vault, 'init', '-q', '-b', 'work/notes');
  git(vault, 'commit', '-q', '--allow-empty', '-m', 'one');
  assert.equal(headBranch(vault), git(vault, 'rev-parse', '--abbrev-ref', 'HEAD'));
  assert.equal(headBranch(vault), 'work/notes');
  git(vault, 'checkout', '-q', '--detach');
  assert.equal(headBranch(vault), null, 'a detached HEAD is git\'s to answer');
});

test('a .git that is a file, a HEAD that is a link or too big, or no repository at all read as null', (t) => {
  const dir = tempDir(t);
  assert.equal(headBranch(dir), null);
  fs.writeFileSync(path.join(dir, '.git'), 'gitdir: /elsewhere\n');
  assert.equal(headBranch(dir), null);
  fs.rmSync(path.join(dir, '.git'));
  fs.mkdirSync(path.join(dir, '.git'));
  fs.writeFileSync(path.join(dir, 'elsewhere'), 'ref: refs/heads/planted\n');
  fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, '.git', 'HEAD'));
  assert.equal(headBranch(dir), null, 'a link is not followed');
  fs.rmSync(path.join(dir, '.git', 'HEAD'));
  fs.writeFileSync(path.join(dir, '.git', 'HEAD'), `ref: refs/heads/main\n${' '.repeat(2000)}`);
  assert.equal(headBranch(dir), null);
  // Control: the same folder with a plain HEAD is read.
  fs.writeFileSync(path.join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  assert.equal(headBranch(dir), 'main');
});

test('a ref reads as the commit git names, loose or packed, and a name git would refuse reads as null', (t) => {
  const dir = tempDir(t);
  const remote = path.join(dir, 'remote.git');
  git(dir, 'init', '-q', '--bare', remote);
  const vault = path.join(dir, 'vault');
  fs.mkdirSync(vault);
  git(vault, 'init', '-q', '-b', 'main');
  git(vault, 'commit', '-q', '--allow-empty', '-m', 'one');
  git(vault, 'remote', 'add', 'origin', remote);
  git(vault, 'push', '-q', '-u', 'origin', 'main');
  assert.equal(refSha(vault, 'refs/heads/main'), git(vault, 'rev-parse', 'HEAD'));
  assert.equal(refSha(vault, 'refs/remotes/origin/main'), git(vault, 'rev-parse', 'origin/main'));
  git(vault, 'commit', '-q', '--allow-empty', '-m', 'two');
  assert.notEqual(refSha(vault, 'refs/heads/main'), refSha(vault, 'refs/remotes/origin/main'), 'an unpushed commit shows');
  git(vault, 'pack-refs', '--all');
  assert.equal(fs.existsSync(path.join(vault, '.git', 'refs', 'heads', 'main')), false);
  assert.equal(refSha(vault, 'refs/heads/main'), git(vault, 'rev-parse', 'HEAD'), 'a packed ref is read too');
  assert.equal(refSha(vault, 'refs/heads/../../HEAD'), null);
  assert.equal(refSha(vault, 'refs/heads/nothing'), null);
});

test('refs under a prefix read as none only when git has none there, loose or packed; else git is asked', (t) => {
  const dir = tempDir(t);
  const vault = path.join(dir, 'vault');
  fs.mkdirSync(vault);
  git(vault, 'init', '-q', '-b', 'main');
  git(vault, 'commit', '-q', '--allow-empty', '-m', 'one');
  const prefixes = ['refs/heads/nightshift/', 'refs/remotes/origin/nightshift/'];
  // What git itself lists under the prefixes: the answer the files must agree with.
  const listed = () => git(vault, 'for-each-ref', '--format=%(refname)', ...prefixes);
  assert.equal(listed(), '');
  assert.equal(anyRefUnder(vault, prefixes), false);
  git(vault, 'branch', 'nightshift/conflict-1');
  assert.notEqual(listed(), '');
  assert.equal(anyRefUnder(vault, prefixes), true, 'a loose branch under the prefix');
  git(vault, 'pack-refs', '--all');
  assert.equal(fs.existsSync(path.join(vault, '.git', 'refs', 'heads', 'nightshift', 'conflict-1')), false);
  assert.equal(anyRefUnder(vault, prefixes), true, 'a packed branch under the prefix');
  git(vault, 'branch', '-D', 'nightshift/conflict-1');
  assert.equal(listed(), '');
  assert.equal(anyRefUnder(vault, prefixes), false, 'deleted: none again');
  git(vault, 'update-ref', 'refs/remotes/origin/nightshift/x', 'HEAD');
  assert.equal(anyRefUnder(vault, prefixes), true, 'a remote one');
  assert.equal(anyRefUnder(vault, ['refs/heads/nightshift/']), false, 'a prefix with none of its own');
  // Unreadable plainly: git must be asked.
  assert.equal(anyRefUnder(vault, ['refs/heads/../']), null);
  assert.equal(anyRefUnder(path.join(dir, 'nowhere'), prefixes), null);
  fs.mkdirSync(path.join(vault, '.git', 'reftable'));
  assert.equal(anyRefUnder(vault, prefixes), null, 'the reftable format');
});
