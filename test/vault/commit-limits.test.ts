// What a session wrote is weighed, path by path, before nightshift's git reads it (issue 36, point
// 3): a file over limits.commit_file is left out (listed in .git/info/exclude), a total over
// limits.commit_total drops the largest first, and the rest of the work is committed and pushed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../logs/logger.js';
import { validateConfig } from '../../config/config.js';
import { changedPaths, emptyGitReport, leaveOut, VaultGit, weigh, type GitChecks } from '../../vault/git-sync.js';
import { tempDir } from '../helpers.js';
import { git, makeRepos, remoteFile } from '../git-helpers.js';

test('changedPaths reads status -z: leading blanks kept, renames\' old paths and deletions left out', () => {
  assert.deepEqual(changedPaths(' M a.md\0?? new dir/b c.txt\0D  gone.md\0R  to.md\0from.md\0 D also-gone\0'), ['a.md', 'new dir/b c.txt', 'to.md']);
});

test('weigh takes lstat\'s size: a link weighs its own name, a path gone is left out', (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'a'), Buffer.alloc(600));
  fs.symlinkSync('/dev/zero', path.join(dir, 'link'));
  assert.deepEqual(weigh(dir, ['a', 'link', 'gone']), [{ path: 'a', size: 600 }, { path: 'link', size: 9 }]);
});

test('leaveOut: each file over the file bound, then the largest until the total fits', () => {
  const files = [{ path: 'big.bin', size: 3000 }, { path: 'a', size: 600 }, { path: 'b', size: 700 }, { path: 'c', size: 100 }];
  assert.deepEqual(leaveOut(files, { file: 2000, total: 1e9 }), [{ path: 'big.bin', size: 3000, limit: 'commit_file' }]);
  assert.deepEqual(leaveOut(files, { file: 2000, total: 800 }), [
    { path: 'big.bin', size: 3000, limit: 'commit_file' }, { path: 'b', size: 700, limit: 'commit_total' },
  ]);
  assert.deepEqual(leaveOut(files, { file: 2000, total: 300 }).map((f) => f.path), ['big.bin', 'b', 'a']);
  assert.deepEqual(leaveOut(files, { file: 5000, total: 5000 }), []);
});

async function commitOnce(dir: string, vault: string, limits: Record<string, string>, checks: Partial<GitChecks> = {}) {
  const config = validateConfig({ vault: './vault', state_dir: './state', limits }, path.join(dir, 'nightshift.yaml')).config!;
  const report = emptyGitReport();
  await new VaultGit(config, silentLogger(), undefined, checks).commitAndPush({ id: 'S1', agent: 'a', outcome: 'ok', cost_usd: 0, turns: 1, result: null }, (x) => x, report);
  return report;
}

for (const control of [false, true]) {
  test(control ? 'negative control: with the check off the file over limits.commit_file reaches the remote' : 'a file over limits.commit_file is left out, named, excluded; the note beside it is pushed', async (t) => {
    const dir = tempDir(t);
    const repos = makeRepos(dir, path.join(dir, 'vault'));
    fs.writeFileSync(path.join(repos.vault, 'dump.bin'), Buffer.alloc(2 * 1024 * 1024, 7));
    fs.writeFileSync(path.join(repos.vault, 'note.md'), 'small\n');
    const report = await commitOnce(dir, repos.vault, { commit_file: '1M' }, control ? { keepOut: false } : {});
    assert.equal(report.pushed, true, JSON.stringify(report));
    assert.equal(remoteFile(repos, 'note.md'), 'small');
    const onRemote = git(repos.remote, 'ls-tree', '-r', '--name-only', 'main').split('\n');
    if (control) return assert.ok(onRemote.includes('dump.bin'), 'the harm: the big file is on the remote');
    assert.ok(!onRemote.includes('dump.bin'));
    assert.deepEqual(report.left_out, [{ path: 'dump.bin', size: 2 * 1024 * 1024, limit: 'commit_file' }]);
    assert.equal(report.uncommitted, false);
    assert.match(report.error ?? '', /left out of the commit: `dump\.bin` \(2M, over limits\.commit_file 1M/);
    assert.match(fs.readFileSync(path.join(repos.vault, '.git', 'info', 'exclude'), 'utf8'), /^\/dump\.bin$/m);
    assert.ok(fs.existsSync(path.join(repos.vault, 'dump.bin')), 'the file stays in the vault');
    // Nothing it left blocks the next commit.
    fs.writeFileSync(path.join(repos.vault, 'next.md'), 'next\n');
    const next = await commitOnce(dir, repos.vault, { commit_file: '1M' });
    assert.equal(next.pushed, true, JSON.stringify(next));
    assert.equal(next.error, null);
    assert.equal(remoteFile(repos, 'next.md'), 'next');
  });
}

test('a total over limits.commit_total drops the largest first; a later commit with room takes it', async (t) => {
  const dir = tempDir(t);
  const repos = makeRepos(dir, path.join(dir, 'vault'));
  fs.writeFileSync(path.join(repos.vault, 'a.bin'), Buffer.alloc(600 * 1024, 1));
  fs.writeFileSync(path.join(repos.vault, 'b.bin'), Buffer.alloc(500 * 1024, 2));
  const first = await commitOnce(dir, repos.vault, { commit_total: '1M' });
  assert.deepEqual(first.left_out.map((f) => [f.path, f.limit]), [['a.bin', 'commit_total']]);
  assert.equal(first.pushed, true);
  assert.equal(first.uncommitted, false, 'a file left out is not counted as work left uncommitted');
  assert.ok(git(repos.remote, 'ls-tree', '-r', '--name-only', 'main').split('\n').includes('b.bin'));
  const second = await commitOnce(dir, repos.vault, { commit_total: '1M' });
  assert.deepEqual(second.left_out, []);
  assert.ok(git(repos.remote, 'ls-tree', '-r', '--name-only', 'main').split('\n').includes('a.bin'));
});
