// The pure rules of the vault's git (issue 36): how a push failure is read, which paths are
// unmerged, how a left-out file is written to and read from .git/info/exclude, and the
// ledger's git outcome read back.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseStatus, pushFailure, unmergedPaths } from '../../vault/git-sync.js';
import { addExcludes, leftOutPaths, LEFT_OUT_HEADING, literalPattern } from '../../vault/info-exclude.js';
import { gitOutcomeOf } from '../../budget/session-record.js';
import { tempDir } from '../helpers.js';
import { git } from '../git-helpers.js';

// Stderr as git 2.39 wrote it (measured: a second clone pushed first; a pre-receive hook that
// exits 1; the remote bind-mounted read-only, as ProtectSystem= leaves it outside ReadWritePaths=).
const RACE = `To /srv/r.git\n ! [rejected]        HEAD -> main (fetch first)\nerror: failed to push some refs to '/srv/r.git'\nhint: Updates were rejected because the remote contains work that you do`;
const HOOK = `remote: nope, closed        \nTo /srv/r.git\n ! [remote rejected] HEAD -> main (pre-receive hook declined)\nerror: failed to push some refs to '/srv/r.git'`;
const UNPACK = `error: remote unpack failed: unable to create temporary object directory\nTo /srv/r.git\n ! [remote rejected] HEAD -> main (unpacker error)\nerror: failed to push some refs to '/srv/r.git'`;

test('pushFailure: only a non-fast-forward is a race; anything else is told in git\'s words', () => {
  assert.deepEqual(pushFailure(RACE), { race: true, line: '! [rejected]        HEAD -> main (fetch first)' });
  assert.equal(pushFailure(RACE.replace('fetch first', 'non-fast-forward')).race, true);
  assert.deepEqual(pushFailure(HOOK), { race: false, line: '! [remote rejected] HEAD -> main (pre-receive hook declined)' });
  assert.deepEqual(pushFailure(UNPACK), { race: false, line: 'error: remote unpack failed: unable to create temporary object directory; ! [remote rejected] HEAD -> main (unpacker error)' });
  assert.deepEqual(pushFailure("fatal: could not read from remote repository.\n"), { race: false, line: 'fatal: could not read from remote repository.' });
  // The rule it replaced took each of these for a race (the control).
  for (const e of [HOOK, UNPACK]) assert.match(e, /rejected|non-fast-forward|fetch first/i);
});

test('unmergedPaths names what both sides changed, nothing else', () => {
  const z = 'AA todo.md\0UU notes.md\0DU gone.md\0 M fine.md\0?? new.md\0';
  assert.deepEqual(unmergedPaths(parseStatus(z)), ['todo.md', 'notes.md', 'gone.md']);
});

test('a left-out path is written as a literal pattern and read back, special characters and all', (t) => {
  assert.equal(literalPattern('dir/a*b?[c].bin'), '/dir/a\\*b\\?\\[c\\].bin');
  assert.equal(literalPattern('#x'), '/#x');
  assert.equal(literalPattern('trail  '), '/trail\\ \\ ');
  assert.equal(literalPattern('new\nline'), null);
  const vault = tempDir(t);
  git(vault, 'init', '--quiet');
  const names = ['dir/a*b?[c].bin', 'trail  ', '!bang'];
  for (const n of names) {
    fs.mkdirSync(path.dirname(path.join(vault, n)), { recursive: true });
    fs.writeFileSync(path.join(vault, n), 'x');
  }
  fs.writeFileSync(path.join(vault, 'dir', 'aXbY[c].bin'), 'a name the glob would have matched');
  assert.equal(addExcludes(vault, path.join(vault, 'no-state'), LEFT_OUT_HEADING, names.map((n) => literalPattern(n)!)), true);
  assert.deepEqual(leftOutPaths(fs.readFileSync(path.join(vault, '.git', 'info', 'exclude'), 'utf8')), names);
  // git reads each line as the one path: only the other file is still untracked.
  assert.equal(git(vault, 'status', '--porcelain', '--untracked-files=all'), '?? dir/aXbY[c].bin');
});

test('addExcludes refuses a hard-linked exclude file: nothing written to the other name', (t) => {
  const vault = tempDir(t);
  git(vault, 'init', '--quiet');
  const other = path.join(vault, 'operator.yaml');
  fs.writeFileSync(other, 'config: 1\n');
  fs.rmSync(path.join(vault, '.git', 'info', 'exclude'), { force: true });
  fs.linkSync(other, path.join(vault, '.git', 'info', 'exclude'));
  assert.throws(() => addExcludes(vault, path.join(vault, 'no-state'), LEFT_OUT_HEADING, ['/x']), /hard link/);
  assert.equal(fs.readFileSync(other, 'utf8'), 'config: 1\n');
});

test('gitOutcomeOf reads the ledger\'s JSON back, and nothing for what does not read', () => {
  assert.equal(gitOutcomeOf(null), null);
  assert.equal(gitOutcomeOf('{not json'), null);
  const g = gitOutcomeOf(JSON.stringify({ pushed: true, branch: 'nightshift/S1', branch_pushed: true, left_out: [{ path: 'a', size: 1, limit: 'commit_file' }, 7] }))!;
  assert.equal(g.branch, 'nightshift/S1');
  assert.equal(g.branch_pushed, true);
  assert.deepEqual(g.left_out, [{ path: 'a', size: 1, limit: 'commit_file' }]);
  assert.deepEqual(g.untracked, []);
});
