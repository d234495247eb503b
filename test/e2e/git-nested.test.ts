// A repository a session nests inside the vault (issue 25, point 1): its own config names a clean
// filter and its .gitattributes binds every file to it. nightshift's git (the commit after the
// session, the next start's pull and state) never enters it: it is moved aside first, and no
// status of ours recurses into a submodule. The filter writes into the state folder, which the
// session cannot see, so the proof can only come from a process outside the wall.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { bash, text } from '../fake-api.js';
import { NEEDS_BWRAP, SESSION_USER, fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';
import { git, makeRepos, remoteLog } from '../git-helpers.js';

const api = fakeApiPerFile();

test('a nested repository with a filter is moved aside and its filter never runs in the supervisor', { skip: NEEDS_BWRAP, timeout: 180_000 }, async (t) => {
  const ws = workspace(t, api.url);
  const repos = makeRepos(ws.dir, ws.vault);
  fs.mkdirSync(ws.state, { recursive: true });
  const proof = path.join(ws.state, 'filter-ran');
  const nest = [
    'mkdir -p tools/cache && cd tools/cache && git init -q',
    `git config filter.x.clean 'touch ${proof} 2>/dev/null; cat'`,
    "printf '* filter=x\\n' > .gitattributes && echo a > f && git add f .gitattributes && echo b >> f",
    'cd ../.. && echo work > work.md && echo planted',
  ].join(' && ');
  api.script('nest-repo', ({ turn }) => (turn === 0 ? bash(nest) : text('Nested.')));
  writeAgent(ws, 'nester', 'SCENARIO=nest-repo', { allowed_tools: ['Bash'] });
  writeAgent(ws, 'next', 'SCENARIO=text');

  const planted = await runJson(ws, 'nester');
  assert.equal(planted.record.outcome, 'ok', planted.ran.stderr);
  assert.match(planted.ran.stderr, /"event":"nested_git_quarantined"/);
  const moved = path.join(ws.vault, '.git', 'nightshift-quarantine', planted.record.id, encodeURIComponent('tools/cache/.git'));
  assert.ok(fs.existsSync(path.join(moved, 'config')), 'the nested repository is kept, inside the vault\'s own .git');
  assert.ok(!fs.existsSync(path.join(ws.vault, 'tools', 'cache', '.git')));
  // The session's work is committed and pushed, the nested files as plain files, no gitlink.
  assert.ok(remoteLog(repos)[0].startsWith('nightshift(nester): ok'));
  assert.match(git(repos.remote, 'ls-tree', '-r', 'main'), /^100644 blob \w+\ttools\/cache\/f$/m);
  assert.doesNotMatch(git(repos.remote, 'ls-tree', '-r', 'main'), /^160000/m);
  const next = await runJson(ws, 'next');
  assert.equal(next.record.outcome, 'ok', next.ran.stderr);
  assert.ok(!fs.existsSync(proof), 'the nested filter never ran outside the wall');

  // Negative control: the same nesting made again and left in place, then the commands nightshift
  // ran before (add --all records it as a gitlink, a plain status enters it): the filter runs.
  // Run as root, the session was session_user, and git's own ownership check would refuse to enter
  // what it made: given to root, it is what a session of the supervisor's own uid leaves.
  if (SESSION_USER) execFileSync('chown', ['-R', '0:0', path.join(ws.vault, 'tools')]);
  execFileSync('sh', ['-c', nest.replace('tools/cache', 'tools/again').replace('cd ../..', 'cd ../..')], { cwd: ws.vault });
  git(ws.vault, 'add', '--all');
  git(ws.vault, 'status', '--porcelain');
  assert.ok(fs.existsSync(proof), 'without the protection the filter runs in the supervisor\'s own git');
});
