// What a session wrote is weighed before nightshift's git reads it (issue 26, point 4): a file over
// limits.commit_file, or more than limits.commit_total in all, is neither committed nor pushed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { validateConfig } from '../../config/config.js';
import { changedPaths, emptyGitReport, oversized, VaultGit } from '../../vault/git-sync.js';
import { tempDir } from '../helpers.js';
import { makeRepos, remoteLog } from '../git-helpers.js';

test('changedPaths reads status -z: leading blanks kept, renames\' old paths and deletions left out', () => {
  assert.deepEqual(changedPaths(' M a.md\0?? new dir/b c.txt\0D  gone.md\0R  to.md\0from.md\0 D also-gone\0'), ['a.md', 'new dir/b c.txt', 'to.md']);
});

test('oversized names the file over the bound, or the total, and weighs a link by its own size', (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(3000));
  fs.writeFileSync(path.join(dir, 'a'), Buffer.alloc(600));
  fs.writeFileSync(path.join(dir, 'b'), Buffer.alloc(600));
  fs.symlinkSync('/dev/zero', path.join(dir, 'link'));
  assert.match(oversized(dir, ['a', 'big.bin'], { file: 2000, total: 1e9 })!, /`big\.bin` is 2\.9k \(limits\.commit_file is 2k\)/);
  assert.match(oversized(dir, ['a', 'b'], { file: 2000, total: 1000 })!, /added 1\.2k \(limits\.commit_total is 1000 bytes\)/);
  assert.equal(oversized(dir, ['a', 'link', 'gone'], { file: 2000, total: 1e9 }), null);
});

for (const [name, limits, pushed] of [
  ['a file over limits.commit_file is neither committed nor pushed', { commit_file: '1M' }, false],
  ['negative control: with the default bounds the same file is committed and pushed', {}, true],
] as const) {
  test(name, async (t) => {
    const dir = tempDir(t);
    const repos = makeRepos(dir, path.join(dir, 'vault'));
    const config = validateConfig({ vault: './vault', state_dir: './state', limits }, path.join(dir, 'nightshift.yaml')).config!;
    fs.writeFileSync(path.join(repos.vault, 'dump.bin'), Buffer.alloc(2 * 1024 * 1024, 7));
    fs.writeFileSync(path.join(repos.vault, 'note.md'), 'small\n');
    const report = emptyGitReport();
    await new VaultGit(config, pino({ enabled: false })).commitAndPush({ id: 'S1', agent: 'a', outcome: 'ok', cost_usd: 0, turns: 1, result: null }, (x) => x, report);
    assert.equal(report.pushed, pushed, JSON.stringify(report));
    assert.equal(remoteLog(repos)[0].startsWith('nightshift(a)'), pushed);
    if (!pushed) {
      assert.match(report.error!, /commit refused, nothing committed .*`dump\.bin` is 2M \(limits\.commit_file is 1M\)/);
      assert.ok(fs.existsSync(path.join(repos.vault, 'dump.bin')), 'the work stays in the vault');
    }
  });
}
