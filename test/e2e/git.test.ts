// Git sync for real: a bare repository as the remote, the vault a clone of it, and a second clone
// that pushes while the session runs (from inside the imitation API's script, mid-session).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { git, makeRepos, otherPushes, remoteFile, remoteLog } from '../git-helpers.js';
import { configYaml, fakeApiPerFile, nightshift, startNightshift, waitFor, workspace, type Workspace, writeAgent } from '../helpers.js';

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
  test('a session\'s work is committed with its trailers and pushed', async (t) => {
    const ws = workspace(t, api.url, withDispatch());
    const repos = makeRepos(ws.dir, ws.vault);
    otherPushes(repos, 'from-other.md', 'pulled in before the session\n');
    writerAgent(ws, 'git-ok', 'notes.md', 'agent line');
    const { ran, r } = await tickJson(ws);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(r.action, 'session');
    assert.deepEqual(r.git, { pulled: true, committed: true, pushed: true, branch: null, error: null });
    assert.ok(fs.existsSync(path.join(ws.vault, 'from-other.md')), 'pulled before the session');
    const msg = git(repos.remote, 'log', '-1', '--format=%B', 'main');
    assert.match(msg, /^nightshift\(writer\): ok\n/);
    assert.match(msg, new RegExp(`Session-Id: ${r.session.id}`));
    assert.match(msg, /Cost-USD: 0\.0090/);
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
    assert.match(r.git.error, /conflict/);
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
    assert.deepEqual(off.r.git, { pulled: false, committed: false, pushed: false, branch: null, error: null });
    assert.match(git(ws.vault, 'status', '--porcelain'), /notes\.md/);
  });
});
