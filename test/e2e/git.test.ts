// Git sync for real: a bare repository as the remote, the vault a clone of it, and a second clone
// that pushes while the session runs (from inside the imitation API's script, mid-session).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { spawn } from 'node:child_process';
import { git, makeRepos, otherPushes, remoteFile, remoteLog } from '../git-helpers.js';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, processesMatching, startNightshift, waitFor, workspace, type Workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

const withDispatch = (extra = '') => configYaml({ top: `dispatch:\n  - agent: writer\n${extra}` });

// An agent whose session writes `file` with `content` in the vault; `during` runs mid-session.
function writerAgent(ws: Workspace, name: string, file: string, content: string, during?: () => void) {
  api.script(name, ({ turn }) => {
    if (turn === 0) {
      during?.();
      return { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: `printf '%s\\n' '${content}' >> ${file}` } }] };
    }
    return { kind: 'message', blocks: [{ type: 'text', text: `Wrote ${file}.` }] };
  });
  writeAgent(ws, 'writer', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
}

async function tickJson(ws: Workspace, env: NodeJS.ProcessEnv = {}) {
  const ran = await nightshift(['tick', '--json'], { ...ws.env, ...env }, ws.dir);
  try {
    return { ran, r: JSON.parse(ran.stdout) };
  } catch {
    throw new Error(`tick printed no JSON (exit ${ran.code}): ${ran.stdout}\n${ran.stderr}`);
  }
}

describe('git sync', () => {
  // control: the old skip-and-warn after the session (git.error set, no throw) makes run exit 0
  // with a ledger row and the API asked: this fails.
  test('git.enabled on a vault that is no repository: run and rehearse refuse before the charge (exit 78) naming the vault and both fixes, doctor fails naming it; once it is one, run goes on', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: 'git:\n  enabled: true\n' }));
    writerAgent(ws, 'git-norepo', 'notes.md', 'agent line');
    const asked = api.requests.length;
    const fixes = (out: string) => {
      assert.match(out, new RegExp(`the vault ${ws.vault.replace(/[/.]/g, '\\$&')} is no git repository`));
      assert.ok(out.includes(`git -C ${ws.vault} init`), out);
      assert.match(out, /nightshift init --remote URL/);
      assert.ok(out.includes(`set git.enabled: false in ${ws.config}`), out);
    };
    const ran = await nightshift(['run', 'writer'], ws.env, ws.dir);
    assert.equal(ran.code, 78, ran.stderr);
    fixes(ran.stderr);
    assert.match(ran.stderr, /nothing was started or charged/);
    assert.equal(api.requests.length, asked, 'no session reached the API');
    assert.ok(!fs.existsSync(path.join(ws.state, 'ledger.db')) || ledgerRows(ws.dir).length === 0, 'nothing counted');
    const rehearsed = await nightshift(['rehearse', 'writer'], ws.env, ws.dir);
    assert.equal(rehearsed.code, 78, rehearsed.stderr);
    fixes(rehearsed.stderr);
    assert.equal(api.requests.length, asked);
    const doctor = await nightshift(['doctor', '--json'], ws.env, ws.dir);
    const vault = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === 'vault');
    assert.equal(vault.status, 'fail');
    fixes(`${vault.detail} ${vault.fix}`);
    // The first fix named works.
    git(ws.vault, 'init', '--quiet', '--initial-branch=main');
    const after = await nightshift(['run', 'writer', '--json'], ws.env, ws.dir);
    assert.equal(after.code, 0, after.stderr);
    assert.equal(JSON.parse(after.stdout).outcome, 'ok');
  });

  test('a session\'s work is committed with its trailers and pushed', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    otherPushes(repos, 'from-other.md', 'pulled in before the session\n');
    writerAgent(ws, 'git-ok', 'notes.md', 'agent line');
    const { ran, r } = await tickJson(ws);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(r.action, 'session');
    assert.deepEqual(r.git, { pulled: true, committed: true, pushed: true, branch: null, branch_pushed: false, error: null, uncommitted: false, left_out: [], untracked: [] });
    assert.ok(fs.existsSync(path.join(ws.vault, 'from-other.md')), 'pulled before the session');
    const msg = git(repos.remote, 'log', '-1', '--format=%B', 'main');
    assert.match(msg, /^nightshift\(writer\): ok\n/);
    assert.match(msg, new RegExp(`Session-Id: ${r.session.id}`));
    // Two calls on sonnet at $3/$15 a million, their usage as the imitation served it.
    const served = api.served.filter((x) => x.prompt.includes('SCENARIO=git-ok'));
    assert.equal(served.length, 2);
    const usd = served.reduce((sum, x) => sum + (x.usage.input_tokens * 3 + x.usage.output_tokens * 15) / 1e6, 0);
    assert.match(msg, new RegExp(`Cost-USD: ${usd.toFixed(4).replace('.', '\\.')}\n`));
    assert.match(msg, /Turns: 2/);
    assert.equal(git(repos.remote, 'log', '-1', '--format=%(trailers:key=Session-Id,valueonly)', 'main'), r.session.id);
    assert.match(remoteFile(repos, 'notes.md'), /agent line/);
  });

  test('a push rejected because another writer pushed first is rebased and retried', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    // After our pull, before our push: the other clone pushes a different file.
    writerAgent(ws, 'git-race', 'notes.md', 'agent line', () => otherPushes(repos, 'other.md', 'concurrent\n'));
    const { r } = await tickJson(ws);
    assert.equal(r.git.pushed, true, JSON.stringify(r.git));
    assert.equal(r.git.error, null);
    const log = remoteLog(repos);
    assert.match(log[0], /^nightshift\(writer\): ok/);
    assert.equal(log[1], 'other writes other.md', 'ours rebased on top of theirs');
    assert.match(remoteFile(repos, 'notes.md'), /agent line/);
    assert.equal(remoteFile(repos, 'other.md'), 'concurrent');
  });

  test('a true conflict saves the session on a branch, leaves main clean and loses nothing', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    writerAgent(ws, 'git-conflict', 'notes.md', 'agent version', () => {
      git(repos.other, 'pull', '--quiet', 'origin', 'main');
      fs.writeFileSync(path.join(repos.other, 'notes.md'), 'their version\n');
      git(repos.other, 'commit', '--quiet', '-am', 'other rewrites notes');
      git(repos.other, 'push', '--quiet', 'origin', 'main');
    });
    const { ran, r } = await tickJson(ws);
    assert.equal(ran.code, 0, 'the session itself was ok');
    const branch = `nightshift/${r.session.id}`;
    assert.equal(r.git.branch, branch);
    assert.equal(r.git.pushed, false);
    assert.equal(r.git.branch_pushed, true, 'the branch reached the remote, and is said so');
    assert.match(r.git.error, new RegExp(`conflict: .*saved on branch ${branch}, pushed to origin \\(not on the main branch until you merge it\\)`));
    assert.match(remoteFile(repos, 'notes.md', branch), /agent version/, 'the session\'s work is on the remote branch');
    assert.equal(remoteFile(repos, 'notes.md'), 'their version', 'main keeps the other writer\'s work');
    assert.equal(git(ws.vault, 'status', '--porcelain'), '', 'the vault is clean');
    assert.equal(git(ws.vault, 'rev-parse', 'HEAD'), git(repos.remote, 'rev-parse', 'main'), 'the vault\'s main is the remote\'s');
  });

  test('with the remote gone the commit stays local, and the next tick pushes it', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    writerAgent(ws, 'git-offline', 'notes.md', 'written offline');
    const moved = `${repos.remote}.away`;
    fs.renameSync(repos.remote, moved);
    const first = await tickJson(ws);
    assert.equal(first.r.git.committed, true);
    assert.equal(first.r.git.pushed, false);
    assert.match(first.r.git.error, /pull failed|push failed/);
    assert.equal(git(ws.vault, 'log', '-1', '--format=%s'), 'nightshift(writer): ok', 'committed locally');
    const status = JSON.parse((await nightshift(['status', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(status.unpushed, 1);
    fs.renameSync(moved, repos.remote);
    writerAgent(ws, 'git-online', 'notes.md', 'written online');
    const second = await tickJson(ws);
    assert.equal(second.r.git.pushed, true, JSON.stringify(second.r.git));
    const log = remoteLog(repos);
    assert.deepEqual(log.slice(0, 2), ['nightshift(writer): ok', 'nightshift(writer): ok']);
    assert.match(remoteFile(repos, 'notes.md'), /written offline\nwritten online/);
  });

  test('the git lock not obtained in time: commit locally, skip the push, push on the next tick', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    fs.appendFileSync(ws.config, 'git:\n  lock_timeout: 1s\n');
    const repos = makeRepos(ws.dir, ws.vault);
    writerAgent(ws, 'git-locked', 'notes.md', 'written under a held lock');
    // Another script holds the host-wide git lock for the whole tick.
    const holder = startNightshift(['lock', '--', 'sleep', '120'], ws.env, ws.dir, t);
    await waitFor(() => fs.existsSync(path.join(ws.state, 'git.lock.owner.json')), 5000, 'the lock holder');
    const { r, ran } = await tickJson(ws);
    assert.equal(r.git.pulled, false, ran.stderr);
    assert.equal(r.git.committed, true);
    assert.equal(r.git.pushed, false);
    assert.match(r.git.error, /git lock not obtained in time/);
    holder.child.kill('SIGTERM');
    assert.equal((await holder.done).code, 143, 'the locked command was ended by the forwarded signal');
    assert.ok(!fs.existsSync(path.join(ws.state, 'git.lock.owner.json')), 'and the lock released');
    const second = await tickJson(ws);
    assert.equal(second.r.git.pushed, true, JSON.stringify(second.r.git));
    assert.match(remoteFile(repos, 'notes.md'), /written under a held lock/);
  });

  test('ignored files are not committed; git.enabled: false leaves git alone', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    writerAgent(ws, 'git-ignored', 'scratch/tmp.md', 'ignored');
    fs.mkdirSync(path.join(ws.vault, 'scratch'));
    const { r } = await tickJson(ws);
    assert.equal(r.git.committed, false);
    assert.equal(remoteLog(repos).length, 1);
    fs.appendFileSync(ws.config, 'git:\n  enabled: false\n');
    writerAgent(ws, 'git-disabled', 'notes.md', 'not committed');
    const off = await tickJson(ws);
    assert.deepEqual(off.r.git, { pulled: false, committed: false, pushed: false, branch: null, branch_pushed: false, error: null, uncommitted: false, left_out: [], untracked: [] });
    assert.match(git(ws.vault, 'status', '--porcelain'), /notes\.md/);
  });

  test('a stale index.lock (its git was SIGKILLed) is cleared and logged, and the work is committed and pushed', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    fs.writeFileSync(path.join(ws.vault, '.git', 'index.lock'), '');
    writerAgent(ws, 'git-stale-index', 'notes.md', 'after a stale lock');
    const { ran, r } = await tickJson(ws);
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual({ committed: r.git.committed, pushed: r.git.pushed, error: r.git.error, uncommitted: r.git.uncommitted }, { committed: true, pushed: true, error: null, uncommitted: false });
    assert.match(remoteFile(repos, 'notes.md'), /after a stale lock/);
    assert.match(ran.stderr, /"event":"git_stale_lock_cleared"/);
  });

  test('an index.lock held by a live process is left alone: the failure is reported and the tick exits 1', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    // A live holder of the lock file, as a running git would be.
    const holder = spawn('sh', ['-c', 'exec 3>>.git/index.lock; exec sleep 681'], { cwd: ws.vault, stdio: 'ignore' });
    t.after(() => holder.kill('SIGKILL'));
    await waitFor(() => fs.existsSync(path.join(ws.vault, '.git', 'index.lock')) && processesMatching('sleep 681').length > 0, 5000, 'the holder');
    writerAgent(ws, 'git-held-index', 'notes.md', 'cannot be committed');
    const { ran, r } = await tickJson(ws);
    assert.equal(r.session.outcome, 'ok');
    assert.equal(ran.code, 1, 'work left uncommitted is a failure, so OnFailure= fires');
    assert.equal(r.git.committed, false);
    assert.equal(r.git.uncommitted, true);
    assert.match(r.git.error, /git add failed: .*index\.lock/);
    assert.ok(fs.existsSync(path.join(ws.vault, '.git', 'index.lock')), 'a held lock is never removed');
    assert.doesNotMatch(remoteFile(repos, 'notes.md'), /cannot be committed/);
  });

  test('leftover edits plus an upstream edit of the same lines never put conflict markers on main', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    // An abandoned session left this uncommitted; meanwhile another writer changed the same line.
    fs.writeFileSync(path.join(ws.vault, 'notes.md'), 'line one, as the abandoned session left it\n');
    otherPushes(repos, 'notes.md', 'line one, as the other writer has it\n');
    writerAgent(ws, 'git-leftovers', 'todo.md', 'the new session');
    const { ran, r } = await tickJson(ws);
    assert.equal(r.session.outcome, 'ok', ran.stderr);
    const main = remoteFile(repos, 'notes.md');
    assert.doesNotMatch(main, /<<<<<<<|>>>>>>>|=======/);
    assert.equal(main, 'line one, as the other writer has it');
    assert.match(r.git.error, /conflict/);
    assert.ok(r.git.branch?.startsWith('nightshift/'), JSON.stringify(r.git));
    // Both the leftovers and the session's work are on the saved branch, markers-free.
    assert.equal(remoteFile(repos, 'notes.md', r.git.branch), 'line one, as the abandoned session left it');
    assert.match(remoteFile(repos, 'todo.md', r.git.branch), /the new session/);
    assert.equal(git(ws.vault, 'stash', 'list'), '', 'no stash left behind');
    assert.equal(git(ws.vault, 'status', '--porcelain'), '');
  });

  // The marker guard itself (vault/git-sync.ts, commitAll's `git diff --cached --check` and
  // moveAside): no rebase is involved, the session commits the markers. Removal tried: with
  // `c.markers` ignored in commitAndPush, this test failed (the markers reached the remote's main).
  test('a session that commits conflict-marker lines has them saved on a branch, never on main', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    const before = git(repos.remote, 'rev-parse', 'main');
    api.script('git-markers', ({ turn }) =>
      turn === 0
        ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: "printf '%s\\n' '<<<<<<< HEAD' 'ours' '=======' 'theirs' '>>>>>>> other' >> notes.md" } }] }
        : { kind: 'message', blocks: [{ type: 'text', text: 'Merged by hand.' }] },
    );
    writeAgent(ws, 'writer', 'SCENARIO=git-markers', { allowed_tools: ['Bash'] });
    const { ran, r } = await tickJson(ws);
    assert.equal(r.session.outcome, 'ok', ran.stderr);
    assert.equal(git(repos.remote, 'rev-parse', 'main'), before, 'the remote\'s main did not move');
    assert.doesNotMatch(remoteFile(repos, 'notes.md'), /<<<<<<<|>>>>>>>|=======/);
    assert.doesNotMatch(fs.readFileSync(path.join(ws.vault, 'notes.md'), 'utf8'), /<<<<<<</, 'the local main stepped back too');
    assert.match(r.git.error ?? '', /conflict markers/);
    assert.equal(r.git.pushed, false);
    assert.ok(r.git.branch?.startsWith('nightshift/'), JSON.stringify(r.git));
    // Nothing lost: the session's commit, markers and all, is on its branch at the remote.
    assert.match(remoteFile(repos, 'notes.md', r.git.branch), /<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> other/);
    assert.match(ran.stderr, /"event":"git_conflict_markers"/);
  });

  test('a git command that hangs is ended with its process group at git.timeout; the commit stays local', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: 'dispatch:\n  - agent: writer\ngit:\n  timeout: 2s\n' }));
    makeRepos(ws.dir, ws.vault);
    // The remote's transport never answers: ssh replaced by a long sleep.
    git(ws.vault, 'remote', 'set-url', 'origin', 'ssh://git.invalid/vault.git');
    writerAgent(ws, 'git-hang', 'notes.md', 'kept locally');
    const { ran, r } = await tickJson(ws, { GIT_SSH_COMMAND: 'sleep 682 #' });
    assert.equal(r.git.committed, true);
    assert.equal(r.git.pushed, false);
    assert.match(r.git.error ?? '', /timed out/);
    assert.equal(ran.code, 0, 'an unreachable remote is not a failure: the next tick pushes');
    await waitFor(() => processesMatching('sleep 682').length === 0, 5000, 'the hung transport to be ended');
    assert.match(git(ws.vault, 'log', '-1', '--format=%s'), /nightshift\(writer\): ok/);
  });

  test('hooks a session planted in the vault never run under nightshift\'s git', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    const ran = path.join(ws.dir, 'hook-ran');
    for (const hook of ['post-commit', 'pre-push', 'pre-commit']) {
      fs.writeFileSync(path.join(ws.vault, '.git', 'hooks', hook), `#!/bin/sh\necho ${hook} >> ${ran}\n`, { mode: 0o755 });
    }
    writerAgent(ws, 'git-hooks', 'notes.md', 'with hooks planted');
    const { r } = await tickJson(ws);
    assert.equal(r.git.pushed, true, JSON.stringify(r.git));
    assert.match(remoteFile(repos, 'notes.md'), /with hooks planted/);
    assert.ok(!fs.existsSync(ran), `a hook ran: ${fs.existsSync(ran) ? fs.readFileSync(ran, 'utf8') : ''}`);
  });
});
