// A repository nested in the vault is moved aside, by rename only, before nightshift's git runs
// (issue 25, point 1).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { findNestedGit, nestedQuarantine, sweepNestedGit } from '../../vault/nested-repos.js';
import { tempDir } from '../helpers.js';
import { git } from '../git-helpers.js';

function vaultWithNests(dir: string): string {
  const vault = path.join(dir, 'vault');
  fs.mkdirSync(vault);
  git(vault, 'init', '-q', '-b', 'main');
  fs.mkdirSync(path.join(vault, 'tools', 'cache'), { recursive: true });
  git(path.join(vault, 'tools', 'cache'), 'init', '-q');
  execFileSync('mkfifo', [path.join(vault, 'tools', 'cache', '.git', 'fifo')]);
  fs.mkdirSync(path.join(vault, 'sub'));
  fs.writeFileSync(path.join(vault, 'sub', '.git'), `gitdir: ${path.join(dir, 'elsewhere')}\n`);
  // A link to a folder holding a .git is not followed: it is the link git sees, not a repository.
  fs.mkdirSync(path.join(dir, 'outside', '.git'), { recursive: true });
  fs.symlinkSync(path.join(dir, 'outside'), path.join(vault, 'linked'));
  return vault;
}

test('every nested .git is found, folders and gitdir files, links not followed, the top one left', (t) => {
  const vault = vaultWithNests(tempDir(t));
  assert.deepEqual(findNestedGit(vault).found.sort(), ['sub/.git', 'tools/cache/.git']);
});

test('they are renamed into the vault\'s own .git (a FIFO inside moves too), and the vault has none left', (t) => {
  const dir = tempDir(t);
  const vault = vaultWithNests(dir);
  const into = nestedQuarantine(vault, path.join(dir, 'state', 'quarantine'), 'S1');
  assert.equal(into, path.join(vault, '.git', 'nightshift-quarantine', 'S1'));
  const r = sweepNestedGit(vault, into);
  assert.deepEqual(r.failed, []);
  assert.deepEqual(r.moved.map((m) => m.from).sort(), ['sub/.git', 'tools/cache/.git']);
  assert.deepEqual(findNestedGit(vault).found, []);
  assert.ok(fs.lstatSync(path.join(into, encodeURIComponent('tools/cache/.git'), 'fifo')).isFIFO());
  // The quarantine is no repository to the vault's git: status lists nothing from it.
  assert.doesNotMatch(git(vault, 'status', '--porcelain', '--ignored'), /quarantine/);
});

test('what cannot be renamed is reported, never copied', (t) => {
  const dir = tempDir(t);
  const vault = vaultWithNests(dir);
  // A quarantine that cannot be made (a file where its folder would be).
  fs.writeFileSync(path.join(dir, 'blocked'), '');
  const r = sweepNestedGit(vault, path.join(dir, 'blocked', 'S1'));
  assert.equal(r.moved.length, 0);
  assert.deepEqual(r.failed.map((f) => f.path).sort(), ['sub/.git', 'tools/cache/.git']);
  assert.ok(fs.existsSync(path.join(vault, 'tools', 'cache', '.git', 'HEAD')), 'left in place, whole');
});
