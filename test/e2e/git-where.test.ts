// Issue 36 end to end: the real CLI, a bare remote, the session's Bash writing the vault. The
// remote holds only what a session meant to commit, and every screen says where the work went.
// Each promise has its negative control: the check off (test/fixtures/tick-git-checks.mjs), through
// the same tick a real session takes, shows the harm.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { startFakeDiscord } from '../fake-discord.js';
import { git, makeRepos, otherPushes, remoteFile, type Repos } from '../git-helpers.js';
import { BIN, configYaml, fakeApiPerFile, FIXTURES, nightshift, type Ran, waitFor, workspace, type Workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

// An agent whose one turn runs `command` in the vault.
function bashAgent(ws: Workspace, scenario: string, command: string) {
  api.script(scenario, ({ turn }) =>
    turn === 0
      ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command } }] }
      : { kind: 'message', blocks: [{ type: 'text', text: 'Done.' }] },
  );
  writeAgent(ws, 'writer', `SCENARIO=${scenario}`, { allowed_tools: ['Bash'] });
}

function run(cmd: string, args: string[], ws: Workspace): Promise<Ran> {
  const child = spawn(cmd, args, { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

// One tick: the real CLI, or (a control) the fixture with the named checks off. `wrap`: a command
// the tick runs under (a mount namespace).
async function tick(ws: Workspace, off: string[] = [], wrap: string[] = []) {
  const argv = off.length ? [path.join(FIXTURES, 'tick-git-checks.mjs'), ws.config, off.join(',')] : [BIN, 'tick', '--json'];
  const ran = wrap.length ? await run(wrap[0], [...wrap.slice(1), process.execPath, ...argv], ws) : await run(process.execPath, argv, ws);
  try {
    return { ran, r: JSON.parse(ran.stdout.trim().split('\n').at(-1)!) };
  } catch {
    throw new Error(`tick printed no JSON (exit ${ran.code}): ${ran.stdout}\n${ran.stderr}`);
  }
}

const dirBytes = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? dirBytes(path.join(dir, e.name)) : fs.lstatSync(path.join(dir, e.name)).size), 0);
const onRemote = (repos: Repos, ref = 'main') => git(repos.remote, 'ls-tree', '-r', '--name-only', ref).split('\n');
const MARKERS = /<<<<<<<|>>>>>>>/;
const dispatch = (extra = '') => configYaml({ top: `dispatch:\n  - agent: writer\n${extra}` });

// The operator's pull that stopped on a conflict: MERGE_HEAD, `UU notes.md`, markers in the file.
function unfinishedMerge(ws: Workspace, repos: Repos) {
  otherPushes(repos, 'notes.md', 'their line\n');
  fs.writeFileSync(path.join(ws.vault, 'notes.md'), 'our line\n');
  git(ws.vault, 'commit', '--quiet', '-am', 'operator edits notes');
  spawnSync('git', ['-c', 'user.name=op', '-c', 'user.email=op@example.com', 'pull', '--no-rebase', '--quiet', 'origin', 'main'], { cwd: ws.vault });
  assert.ok(fs.existsSync(path.join(ws.vault, '.git', 'MERGE_HEAD')), 'the merge stopped on its conflict');
  assert.match(fs.readFileSync(path.join(ws.vault, 'notes.md'), 'utf8'), MARKERS);
}

describe('git: nothing reaches main that a check did not pass', () => {
  for (const control of [false, true]) {
    test(control ? 'negative control: with the conflict checks off, an operator\'s unfinished merge is pushed to main, markers and all' : 'an operator\'s unfinished merge before a run: nothing committed or pulled, the fix named, doctor fails, main clean', async (t) => {
      const ws = workspace(t, api.url, dispatch());
      const repos = makeRepos(ws.dir, ws.vault);
      unfinishedMerge(ws, repos);
      bashAgent(ws, `merge-${control}`, "printf 'agent line\\n' >> todo.md");
      const { ran, r } = await tick(ws, control ? ['conflicts'] : []);
      assert.equal(r.session.outcome, 'ok', ran.stderr);
      if (control) return assert.match(remoteFile(repos, 'notes.md'), MARKERS, 'the harm: markers on the remote\'s main');
      assert.doesNotMatch(remoteFile(repos, 'notes.md'), MARKERS);
      assert.equal(r.git.committed, false);
      assert.equal(r.git.pulled, false);
      assert.match(r.git.error, /nothing committed .*the vault has a merge in progress \(\.git\/MERGE_HEAD\): finish it \(fix the conflicts, then git -C .* commit\) or abort it \(git -C .* merge --abort\)/);
      assert.equal(ran.code, 1, 'work left uncommitted: OnFailure= fires');
      assert.ok(fs.existsSync(path.join(ws.vault, '.git', 'MERGE_HEAD')), 'the operator\'s merge is left as it was');
      assert.match(fs.readFileSync(path.join(ws.vault, 'todo.md'), 'utf8'), /agent line/, 'the session\'s work stays in the vault');
      const doctor = JSON.parse((await nightshift(['doctor', '--json'], ws.env, ws.dir)).stdout);
      const vault = doctor.checks.find((c: any) => c.name === 'vault');
      assert.equal(vault.status, 'fail', JSON.stringify(vault));
      assert.match(vault.detail, /a merge in progress/);
      // The operator finishes the merge: the next tick commits both and pushes.
      fs.writeFileSync(path.join(ws.vault, 'notes.md'), 'our line\ntheir line\n');
      git(ws.vault, 'commit', '--quiet', '-am', 'operator merges');
      bashAgent(ws, 'merge-after', "printf 'later line\\n' >> todo.md");
      const after = await tick(ws);
      assert.equal(after.r.git.pushed, true, JSON.stringify(after.r.git));
      assert.match(remoteFile(repos, 'todo.md'), /agent line\nlater line/);
    });
  }

  for (const control of [false, true]) {
    test(control ? 'negative control: with the conflict checks off, markers a session wrote reach main' : 'markers a session wrote go to a pushed nightshift/ branch, named as pushed on every screen, listed by status --json', async (t) => {
      const discord = await startFakeDiscord();
      t.after(() => discord.close());
      const ws = workspace(t, api.url, configYaml({ top: 'dispatch:\n  - agent: writer\n', discord: { api_base: discord.apiBase } }));
      ws.env.DISCORD_WEBHOOK_URL = discord.webhookUrl;
      const repos = makeRepos(ws.dir, ws.vault);
      const before = git(repos.remote, 'rev-parse', 'main');
      bashAgent(ws, `markers-${control}`, "printf '%s\\n' '<<<<<<< HEAD' ours ======= theirs '>>>>>>> other' >> notes.md; printf 'fine\\n' > other.md");
      const { ran, r } = await tick(ws, control ? ['conflicts'] : []);
      assert.equal(r.session.outcome, 'ok', ran.stderr);
      if (control) return assert.match(remoteFile(repos, 'notes.md'), MARKERS, 'the harm: markers on the remote\'s main');
      assert.equal(git(repos.remote, 'rev-parse', 'main'), before, 'main did not move');
      const branch = `nightshift/${r.session.id}`;
      assert.deepEqual({ branch: r.git.branch, branch_pushed: r.git.branch_pushed, pushed: r.git.pushed }, { branch, branch_pushed: true, pushed: false });
      assert.match(r.git.error, new RegExp(`conflict markers: saved on branch ${branch}, pushed to origin \\(not on the main branch until you merge it\\)`));
      assert.match(remoteFile(repos, 'notes.md', branch), MARKERS, 'nothing lost: the work is on the remote branch');
      assert.equal(remoteFile(repos, 'other.md', branch), 'fine');
      // show, sessions, status and the Discord report say where the work is.
      const show = await nightshift(['show', r.session.id], ws.env, ws.dir);
      assert.match(show.stdout, new RegExp(`^git +not pulled|^git +pulled`, 'm'));
      assert.match(show.stdout, new RegExp(`work on branch ${branch} \\(pushed\\)`));
      assert.match(show.stdout, new RegExp(`the session's work is on branch ${branch}, pushed: not on main until you merge it`));
      assert.deepEqual(JSON.parse((await nightshift(['show', r.session.id, '--json'], ws.env, ws.dir)).stdout).git.branch, branch);
      assert.match((await nightshift(['sessions'], ws.env, ws.dir)).stdout, new RegExp(`${r.session.id}: work on branch ${branch} \\(pushed\\), not on main until merged`));
      const status = JSON.parse((await nightshift(['status', '--json'], ws.env, ws.dir)).stdout);
      assert.deepEqual(status.branches, [{ name: branch, local: true, remote: true }]);
      assert.match((await nightshift(['status'], ws.env, ws.dir)).stdout, new RegExp(`branch +${branch} \\(on origin\\): work not on main until you merge it`));
      await waitFor(() => discord.messages.length > 0, 10_000, 'the session report');
      const field = discord.messages[0].body.embeds[0].fields.find((f: any) => f.name === 'Git').value;
      assert.match(field, new RegExp(`the work is on branch \`${branch}\` \\(pushed\\), not on main until merged`));
      // Merged by the operator and pulled: no longer open.
      git(repos.other, 'pull', '--quiet', 'origin', 'main');
      git(repos.other, 'fetch', '--quiet', 'origin', branch);
      git(repos.other, 'merge', '--quiet', '--no-edit', 'FETCH_HEAD');
      git(repos.other, 'push', '--quiet', 'origin', 'main');
      git(ws.vault, 'pull', '--quiet', 'origin', 'main');
      assert.deepEqual(JSON.parse((await nightshift(['status', '--json'], ws.env, ws.dir)).stdout).branches, []);
    });
  }
});

describe('git: leftovers with markers before the pull', () => {
  for (const control of [false, true]) {
    test(control ? 'negative control: with the conflict checks off, leftover markers are committed before the pull and pushed to main' : 'markers an earlier session left uncommitted go to a pushed nightshift/leftovers- branch before the pull; this session\'s work reaches main', async (t) => {
      const ws = workspace(t, api.url, dispatch());
      const repos = makeRepos(ws.dir, ws.vault);
      // No operation in progress: only the markers, as a stash pop or an abandoned session leaves them.
      fs.writeFileSync(path.join(ws.vault, 'notes.md'), '<<<<<<< Updated upstream\nline one\n=======\nline uno\n>>>>>>> Stashed changes\n');
      bashAgent(ws, `leftover-markers-${control}`, "printf 'new work\\n' > todo.md");
      const { ran, r } = await tick(ws, control ? ['conflicts'] : []);
      assert.equal(r.session.outcome, 'ok', ran.stderr);
      if (control) return assert.match(remoteFile(repos, 'notes.md'), MARKERS, 'the harm: markers on the remote\'s main');
      assert.doesNotMatch(remoteFile(repos, 'notes.md'), MARKERS);
      assert.match(remoteFile(repos, 'todo.md'), /new work/, 'the session\'s own work is on main');
      assert.match(r.git.branch, /^nightshift\/leftovers-\d{8}-\d+Z$/);
      assert.equal(r.git.branch_pushed, true);
      assert.match(remoteFile(repos, 'notes.md', r.git.branch), MARKERS, 'nothing lost: the leftovers are on the branch');
      assert.equal(r.git.pulled, true, 'the pull went on, onto a clean main');
      assert.match(r.git.error, /^the work left uncommitted before this session holds conflict markers: saved on branch nightshift\/leftovers-.*, pushed to origin/);
    });
  }
});

describe('git: nightshift\'s own files are never tracked', () => {
  for (const control of [false, true]) {
    test(control ? 'negative control: with the exclude only while git is on and no untracking, the state reaches the remote' : 'git turned on after init without a remote: the state never reaches the remote', async (t) => {
      const ws = workspace(t, api.url, dispatch('git:\n  enabled: false\n'));
      git(ws.vault, 'init', '--quiet', '--initial-branch=main');
      fs.writeFileSync(path.join(ws.vault, 'notes.md'), 'first\n');
      git(ws.vault, 'add', '.');
      git(ws.vault, 'commit', '--quiet', '-m', 'start');
      bashAgent(ws, `late-git-1-${control}`, "printf 'offline\\n' >> notes.md");
      const off = control ? ['excludeAlways', 'untrackOwn'] : [];
      const first = await tick(ws, off);
      assert.equal(first.r.session.outcome, 'ok', first.ran.stderr);
      assert.ok(fs.existsSync(path.join(ws.vault, '.nightshift', 'session-state.md')), 'the state was written while git was off');
      // The operator adds a remote and turns git on, as the config's comment says.
      const remote = path.join(ws.dir, 'remote.git');
      git(ws.dir, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
      git(ws.vault, 'remote', 'add', 'origin', remote);
      fs.writeFileSync(ws.config, fs.readFileSync(ws.config, 'utf8').replace('enabled: false', 'enabled: true'));
      bashAgent(ws, `late-git-2-${control}`, "printf 'online\\n' >> notes.md");
      const second = await tick(ws, off);
      assert.equal(second.r.git.pushed, true, JSON.stringify(second.r.git));
      assert.match(git(remote, 'show', 'main:notes.md'), /offline\nonline/);
      const ever = git(remote, 'log', '--all', '--format=%h', '--', '.nightshift');
      if (control) return assert.notEqual(ever, '', 'the harm: the state is in the remote\'s history');
      assert.equal(ever, '', 'no commit on the remote ever held .nightshift/');
    });
  }

  for (const control of [false, true]) {
    test(control ? 'negative control: without untracking, a state an older version tracked is pushed again' : 'a state an older version tracked is untracked in the next commit, named, and kept in the vault', async (t) => {
      const ws = workspace(t, api.url, dispatch());
      const repos = makeRepos(ws.dir, ws.vault);
      fs.mkdirSync(path.join(ws.vault, '.nightshift'));
      fs.writeFileSync(path.join(ws.vault, '.nightshift', 'session-state.md'), 'an old state\n');
      git(ws.vault, 'add', '-f', '.nightshift');
      git(ws.vault, 'commit', '--quiet', '-m', 'an older nightshift tracked its state');
      git(ws.vault, 'push', '--quiet', 'origin', 'main');
      bashAgent(ws, `tracked-${control}`, "printf 'work\\n' >> notes.md");
      const { ran, r } = await tick(ws, control ? ['untrackOwn'] : []);
      assert.equal(r.git.pushed, true, JSON.stringify(r.git));
      if (control) return assert.doesNotMatch(remoteFile(repos, '.nightshift/session-state.md'), /an old state/, 'the harm: this session\'s state (memories, budget) is on main');
      assert.ok(!onRemote(repos).some((p) => p.startsWith('.nightshift/')), 'main no longer tracks it');
      assert.deepEqual(r.git.untracked, ['.nightshift/session-state.md']);
      assert.match(ran.stderr, /"event":"git_untracked_own"/);
      assert.ok(fs.existsSync(path.join(ws.vault, '.nightshift', 'session-state.md')), 'kept in the vault');
      assert.match((await nightshift(['show', r.session.id], ws.env, ws.dir)).stdout, /untracked: \.nightshift\/session-state\.md \(nightshift's own/);
    });
  }
});

describe('git: an oversized file is left out, the rest goes on', () => {
  for (const control of [false, true]) {
    test(control ? 'negative control: with nothing weighed, the file over limits.commit_file reaches the remote' : 'a large file plus a note: the note and the next session\'s work reach the remote, the big files never', async (t) => {
      const ws = workspace(t, api.url, dispatch('limits:\n  commit_file: 1M\n'));
      const repos = makeRepos(ws.dir, ws.vault);
      bashAgent(ws, `big-${control}`, "head -c 2000000 /dev/urandom > dump.bin; printf 'a note\\n' > note.md");
      const { ran, r } = await tick(ws, control ? ['keepOut'] : []);
      assert.equal(r.git.pushed, true, JSON.stringify(r.git));
      assert.equal(remoteFile(repos, 'note.md'), 'a note');
      if (control) return assert.ok(onRemote(repos).includes('dump.bin'), 'the harm: the big file is on the remote');
      assert.ok(!onRemote(repos).includes('dump.bin'));
      assert.deepEqual(r.git.left_out, [{ path: 'dump.bin', size: 2000000, limit: 'commit_file' }]);
      assert.equal(ran.code, 0, 'the rest went on');
      assert.match((await nightshift(['show', r.session.id], ws.env, ws.dir)).stdout, /left out: dump\.bin \(1\.9M, over limits\.commit_file; listed in \.git\/info\/exclude\)/);
      // The next session: its work and a real 150 MiB (sparse) file; the work goes, the file never.
      bashAgent(ws, 'big-next', "truncate -s 150M huge.bin; printf 'next\\n' >> note.md; grep -A2 'left out of every commit' .nightshift/session-state.md > seen.md");
      const next = await tick(ws);
      assert.equal(next.r.git.pushed, true, JSON.stringify(next.r.git));
      assert.equal(remoteFile(repos, 'note.md'), 'a note\nnext');
      assert.match(remoteFile(repos, 'seen.md'), /dump\.bin/, 'the next state named the file left out');
      assert.deepEqual(next.r.git.left_out.map((f: any) => f.path), ['huge.bin']);
      assert.ok(!onRemote(repos).some((p) => p === 'dump.bin' || p === 'huge.bin'));
      assert.ok(dirBytes(repos.remote) < 1024 * 1024, `the remote holds ${dirBytes(repos.remote)} bytes: neither file's content went there`);
    });
  }
});

describe('git: doctor warns about commits the remote has not taken', () => {
  test('a commit unpushed for more than 3 hours is a warning naming the command that shows git\'s reason; a fresh one is not', async (t) => {
    const ws = workspace(t, api.url, dispatch());
    makeRepos(ws.dir, ws.vault);
    const unpushed = async () => JSON.parse((await nightshift(['doctor', '--json'], ws.env, ws.dir)).stdout).checks.find((c: any) => c.name === 'unpushed');
    fs.writeFileSync(path.join(ws.vault, 'notes.md'), 'fresh\n');
    git(ws.vault, 'commit', '--quiet', '-am', 'fresh');
    // Control: a commit of a minute ago is the next tick's to push.
    assert.equal((await unpushed()).status, 'ok');
    const old = new Date(Date.now() - 4 * 3_600_000).toISOString();
    fs.writeFileSync(path.join(ws.vault, 'notes.md'), 'old\n');
    spawnSync('git', ['-c', 'user.name=x', '-c', 'user.email=x@example.com', 'commit', '--quiet', '--amend', '-am', 'old'], { cwd: ws.vault, env: { ...process.env, GIT_COMMITTER_DATE: old } });
    const check = await unpushed();
    assert.equal(check.status, 'warn', JSON.stringify(check));
    assert.match(check.detail, /1 commit not on origin, the oldest 4h.* old: every push since has failed/);
    assert.match(check.fix, /git -C .* push origin/);
  });
});

// The remote bind-mounted read-only in a mount namespace of the tick's own: what ProtectSystem=
// does to a path outside ReadWritePaths=.
const readOnlyRemote = (remote: string) => ['unshare', '-m', 'sh', '-c', `mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"`, remote];
const UNSHARE = spawnSync('unshare', ['-m', 'true']).status === 0;

describe('git: a push failure says git\'s own words', () => {
  for (const control of [false, true]) {
    test(control ? 'negative control: with any "rejected" taken for a race, the read-only remote is retried and reported as rejected' : 'a remote the tick cannot write: git\'s own line, an error in the report and the log, no retries', { skip: UNSHARE ? false : 'unshare -m cannot make a mount namespace here (needs root)' }, async (t) => {
      const discord = await startFakeDiscord();
      t.after(() => discord.close());
      const ws = workspace(t, api.url, configYaml({ top: 'dispatch:\n  - agent: writer\n', discord: { api_base: discord.apiBase } }));
      ws.env.DISCORD_WEBHOOK_URL = discord.webhookUrl;
      const repos = makeRepos(ws.dir, ws.vault);
      bashAgent(ws, `ro-${control}`, "printf 'unpushable\\n' >> notes.md");
      const { ran, r } = await tick(ws, control ? ['pushRule'] : [], readOnlyRemote(repos.remote));
      assert.equal(r.git.committed, true, ran.stderr);
      assert.equal(r.git.pushed, false);
      if (control) return assert.match(r.git.error, /push rejected 3 times/, 'the harm: told as a race, git\'s reason lost');
      assert.match(r.git.error, /^push failed, committed locally \(the next tick tries again\): error: remote unpack failed: unable to create temporary object directory; ! \[remote rejected\] HEAD -> main \(unpacker error\)/);
      assert.doesNotMatch(ran.stderr, /"event":"git_rebased"/, 'never retried as a race');
      const logged = ran.stderr.split('\n').filter((l) => l.includes('"event":"git_error"')).map((l) => JSON.parse(l));
      assert.equal(logged[0]?.level, 40, 'logged at warning');
      await waitFor(() => discord.messages.length > 0, 10_000, 'the session report');
      assert.match(discord.messages[0].body.embeds[0].fields.find((f: any) => f.name === 'Git').value, /remote unpack failed/);
      assert.doesNotMatch(remoteFile(repos, 'notes.md'), /unpushable/);
    });
  }
});
