// A vault cloned from an empty remote (issue 29, point 4): the pull finds nothing and says nothing
// failed, a session that wrote nothing pushes nothing and reports no failure, and the first commit's
// push creates the branch the clone's HEAD names.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../logs/logger.js';
import { validateConfig } from '../../config/config.js';
import { emptyGitReport, VaultGit } from '../../vault/git-sync.js';
import { tempDir } from '../helpers.js';
import { git } from '../git-helpers.js';

const session = { id: 'S1', agent: 'gardener', outcome: 'ok', cost_usd: 0, turns: 1, result: null };

test('an empty remote: no pull failure, no push (and no "push failed") without a commit; the first commit creates the branch', async (t) => {
  const dir = tempDir(t);
  const remote = path.join(dir, 'remote.git');
  git(dir, 'init', '--quiet', '--bare', '--initial-branch=trunk', remote);
  git(dir, 'clone', '--quiet', remote, path.join(dir, 'vault'));
  const branch = git(path.join(dir, 'vault'), 'symbolic-ref', '--short', 'HEAD');
  const config = validateConfig({ vault: './vault', state_dir: './state' }, path.join(dir, 'nightshift.yaml')).config!;
  fs.mkdirSync(path.join(dir, 'state'));
  const vg = new VaultGit(config, silentLogger());
  const before = emptyGitReport();
  await vg.pull(before);
  assert.equal(before.error, null, JSON.stringify(before));
  assert.equal(before.pulled, false, 'nothing was there to pull: the report does not say pulled');
  // The session wrote nothing.
  const idle = emptyGitReport();
  await vg.commitAndPush(session, (x) => x, idle);
  assert.deepEqual({ committed: idle.committed, pushed: idle.pushed, error: idle.error }, { committed: false, pushed: false, error: null });
  assert.equal(git(remote, 'for-each-ref').trim(), '', 'nothing pushed');
  // It wrote a file: committed, and the push makes the branch HEAD named.
  fs.writeFileSync(path.join(dir, 'vault', 'first.md'), 'first\n');
  const wrote = emptyGitReport();
  await vg.commitAndPush(session, (x) => x, wrote);
  assert.deepEqual({ committed: wrote.committed, pushed: wrote.pushed, error: wrote.error }, { committed: true, pushed: true, error: null });
  assert.equal(git(remote, 'for-each-ref', '--format=%(refname)'), `refs/heads/${branch}`);
});
