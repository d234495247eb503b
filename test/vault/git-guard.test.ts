import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { guardGitConfig } from '../../vault/git-guard.js';
import { git, makeRepos } from '../git-helpers.js';
import { tempDir } from '../helpers.js';

// What a session would plant: a clean filter and an fsmonitor that leave a proof when they run.
function plant(vault: string, proof: string): void {
  git(vault, 'config', 'filter.x.clean', `touch ${proof}.filter; cat`);
  git(vault, 'config', 'core.fsmonitor', `touch ${proof}.fsmonitor; false`);
  git(vault, 'config', 'include.path', '../evil.cfg');
  fs.writeFileSync(path.join(vault, '.gitattributes'), '* filter=x\n');
  fs.writeFileSync(path.join(vault, 'new.md'), 'work\n');
}

describe('the vault\'s git config is the operator\'s', () => {
  test('config a session planted is put back before git runs, so its filter and fsmonitor never run', (t) => {
    const dir = tempDir(t);
    const { vault } = makeRepos(dir, path.join(dir, 'vault'));
    const proof = path.join(dir, 'proof');
    const before = fs.readFileSync(path.join(vault, '.git', 'config'));
    const guard = guardGitConfig(vault);
    plant(vault, proof);
    assert.deepEqual(guard.restore(), ['.git/config']);
    assert.ok(fs.readFileSync(path.join(vault, '.git', 'config')).equals(before), 'byte for byte');
    git(vault, 'add', '-A');
    git(vault, 'status');
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('proof')), [], 'nothing planted ran');
    assert.deepEqual(guard.restore(), [], 'nothing left to put back');
  });

  test('a .git file a session swapped in for the folder is taken away again', (t) => {
    const dir = tempDir(t);
    const { vault } = makeRepos(dir, path.join(dir, 'vault'));
    fs.renameSync(path.join(vault, '.git'), path.join(dir, 'real-git'));
    fs.writeFileSync(path.join(vault, '.git'), 'gitdir: ../real-git\n');
    const guard = guardGitConfig(vault);
    fs.writeFileSync(path.join(vault, '.git'), 'gitdir: /elsewhere\n');
    assert.deepEqual(guard.restore(), ['.git']);
    assert.equal(fs.readFileSync(path.join(vault, '.git'), 'utf8'), 'gitdir: ../real-git\n');
  });

  test('negative control: without the guard the planted filter and fsmonitor run inside git add', (t) => {
    const dir = tempDir(t);
    const { vault } = makeRepos(dir, path.join(dir, 'vault'));
    const proof = path.join(dir, 'proof');
    plant(vault, proof);
    git(vault, 'add', '-A');
    assert.ok(fs.existsSync(`${proof}.filter`), 'the planted clean filter ran');
  });
});

describe('a .git folder the session swapped out', () => {
  test('is never written through: a symlink in its place is reported, and the file it points to is untouched', (t) => {
    const dir = tempDir(t);
    const { vault } = makeRepos(dir, path.join(dir, 'vault'));
    const elsewhere = path.join(dir, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.writeFileSync(path.join(elsewhere, 'config'), 'precious\n');
    const guard = guardGitConfig(vault);
    fs.renameSync(path.join(vault, '.git'), path.join(dir, 'moved-git'));
    fs.symlinkSync(elsewhere, path.join(vault, '.git'));
    assert.equal(guard.replaced(), true);
    assert.deepEqual(guard.restore(), ['.git']);
    assert.equal(fs.readFileSync(path.join(elsewhere, 'config'), 'utf8'), 'precious\n');
  });
});
