// Sessions side by side in one git vault (sessions.max_concurrent above 1), through the built tick,
// the real CLI and the fake API: each works in a worktree of its own, and every session's work
// reaches the remote's main, one landing at a time; the vault's own work tree stays the vault's.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { git, makeRepos, remoteFile } from '../git-helpers.js';
import { configYaml, fakeApiPerFile, FIXTURES, GIT_OFF, ledgerRows, processesMatching, startNightshift, waitFor, workspace, writeAgent, mostAtOnce, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();
const five = ['w1', 'w2', 'w3', 'w4', 'w5'];

// Each writes a file of its own, then waits, so that the sessions overlap.
function writers(ws: Workspace, tag: string) {
  for (const n of five) {
    api.script(`${tag}-${n}`, ({ turn }) => turn === 0
      ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: `printf '%s\\n' 'by ${n}' > from-${n}.md; sleep 4` } }] }
      : { kind: 'message', blocks: [{ type: 'text', text: `${n} wrote from-${n}.md` }] });
    writeAgent(ws, n, `SCENARIO=${tag}-${n}`, { allowed_tools: ['Bash'] });
  }
}

// The tick with some git checks off (test/fixtures/tick-git-checks.mjs): the control's seam.
function tick(ws: Workspace, off: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [path.join(FIXTURES, 'tick-git-checks.mjs'), ws.config, off.join(',')], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Which session's commit on the remote's main carried which files.
function commitsByAgent(remote: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const block of git(remote, 'log', '--format=@%s', '--name-only', 'main').split('@').filter(Boolean)) {
    const [subject, ...files] = block.trim().split('\n').filter(Boolean);
    const m = /^nightshift\((\w+)\)/.exec(subject);
    if (m) out.set(m[1], files);
  }
  return out;
}

describe('sessions side by side in one git vault', () => {
  for (const control of [false, true]) {
    test(control
      ? 'the control: with worktrees off, the five sessions share the one work tree at once and commit each other\'s files'
      : 'five agents, one git vault, max_concurrent 5: they run at once, each in a worktree of its own, and all five files reach the remote\'s main, each in its own session\'s commit', async (t) => {
      const ws = workspace(t, api.url, configYaml({ budget: { max_usd_per_session: 2 }, top: `sessions:\n  max_concurrent: 5\ndispatch:\n${five.map((n) => `  - agent: ${n}\n`).join('')}` }));
      const repos = makeRepos(ws.dir, ws.vault);
      writers(ws, control ? 'shared' : 'own');
      const ran = await tick(ws, control ? ['worktrees'] : []);
      assert.equal(ran.code, 0, ran.stderr);
      const rows = ledgerRows(ws.dir);
      assert.deepEqual(rows.map((r) => r.agent).sort(), five);
      assert.ok(rows.every((r) => r.outcome === 'ok'), JSON.stringify(rows.map((r) => [r.agent, r.outcome, r.error])));
      assert.ok(mostAtOnce(rows) >= 2, `the sessions overlapped: ${JSON.stringify(rows.map((r) => [r.agent, r.started_at, r.ended_at]))}`);
      const byAgent = commitsByAgent(repos.remote);
      if (control) {
        // The harm: a session's commit took files another session wrote (or some had nothing left).
        const mixed = five.some((n) => (byAgent.get(n) ?? []).some((f) => f.startsWith('from-') && f !== `from-${n}.md`)) || byAgent.size < five.length;
        return assert.ok(mixed, `no session committed another's file: ${JSON.stringify([...byAgent])}`);
      }
      for (const n of five) {
        assert.equal(remoteFile(repos, `from-${n}.md`), `by ${n}`);
        assert.deepEqual(byAgent.get(n), [`from-${n}.md`], `${n}'s commit holds its own file alone: ${JSON.stringify([...byAgent])}`);
      }
      // The vault's own work tree is main as pushed, clean; no worktree or session branch is left.
      assert.equal(git(ws.vault, 'status', '--porcelain'), '');
      assert.equal(git(ws.vault, 'rev-parse', 'HEAD'), git(repos.remote, 'rev-parse', 'main'));
      assert.deepEqual(fs.readdirSync(path.join(ws.state, 'worktrees')), []);
      assert.equal(git(ws.vault, 'branch', '--list', 'nightshift/*'), '');
      assert.equal(git(ws.vault, 'worktree', 'list').split('\n').length, 1);
    });
  }

  for (const control of [false, true]) {
    test(control
      ? 'the control: with left worktrees not landed, the killed sessions\' work never reaches the remote'
      : 'a supervisor SIGKILLed with three sessions running in worktrees of one vault: the next start settles them and lands all three sessions\' work on the remote\'s main', async (t) => {
      const names = ['k1', 'k2', 'k3'];
      const yaml = (dispatch: string[]) => configYaml({ budget: { max_usd_per_session: 2 }, top: `sessions:\n  max_concurrent: 3\ndispatch:${dispatch.length ? `\n${dispatch.map((n) => `  - agent: ${n}\n`).join('')}` : ' []\n'}` });
      const ws = workspace(t, api.url, yaml(names));
      const repos = makeRepos(ws.dir, ws.vault);
      const tag = control ? 'kept' : 'landed';
      for (const n of names) {
        api.script(`${tag}-${n}`, ({ turn }) => turn === 0
          ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: `printf '%s\\n' 'by ${n}' > from-${n}.md; sleep ${control ? 771 : 781}${names.indexOf(n)}` } }] }
          : { kind: 'message', blocks: [{ type: 'text', text: 'done' }] });
        writeAgent(ws, n, `SCENARIO=${tag}-${n}`, { allowed_tools: ['Bash'] });
      }
      const victim = startNightshift(['tick'], ws.env, ws.dir, t);
      const written = () => {
        const root = path.join(ws.state, 'worktrees');
        return fs.existsSync(root) ? fs.readdirSync(root).filter((id) => fs.existsSync(path.join(root, id, `from-${id.split('-')[1]}.md`))).length : 0;
      };
      await waitFor(() => written() === 3, 90_000, 'three sessions to write their files in their worktrees');
      victim.child.kill('SIGKILL');
      await victim.done;
      // Nothing due: the next start only settles what the dead one left (git stays on: makeRepos).
      fs.writeFileSync(ws.config, yaml([]).replace(GIT_OFF, ''));
      const next = await tick(ws, control ? ['landLeft'] : []);
      assert.equal(next.code, 0, next.stderr);
      assert.deepEqual(ledgerRows(ws.dir).map((r) => [r.agent, r.outcome]).sort(), names.map((n) => [n, 'abandoned']));
      const onRemote = git(repos.remote, 'ls-tree', '--name-only', 'main').split('\n');
      if (control) return assert.deepEqual(onRemote.filter((f) => f.startsWith('from-')), [], 'the harm: the work is on no branch of the remote');
      for (const n of names) assert.equal(remoteFile(repos, `from-${n}.md`), `by ${n}`);
      assert.deepEqual(fs.readdirSync(path.join(ws.state, 'worktrees')), []);
      assert.equal(git(ws.vault, 'branch', '--list', 'nightshift/*'), '');
      assert.equal(git(ws.vault, 'status', '--porcelain'), '');
      await waitFor(() => [0, 1, 2].every((i) => processesMatching(`sleep 781${i}`).length === 0), 10_000, 'the dead sessions\' tools to be ended');
    });
  }

  // mutation: worktree-repo-from-git-file, caught here.
  for (const control of [false, true]) {
    test(control
      ? 'the control: with the worktree\'s repository read from its .git file, the planted repository\'s filter runs as the supervisor'
      : 'a worktree whose .git file was rewritten to name a planted repository with a filter: nightshift\'s git names the real one, the filter never runs, and the work lands on main', async (t) => {
      const ws = workspace(t, api.url, configYaml({ budget: { max_usd_per_session: 2 }, top: 'sessions:\n  max_concurrent: 2\ndispatch:\n  - agent: h1\n' }));
      const repos = makeRepos(ws.dir, ws.vault);
      const tag = control ? 'planted-read' : 'planted-named';
      api.script(tag, ({ turn }) => turn === 0
        ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: `printf '%s\\n' 'by h1' > from-h1.md; sleep ${control ? 7 : 8}.31` } }] }
        : { kind: 'message', blocks: [{ type: 'text', text: 'done' }] });
      writeAgent(ws, 'h1', `SCENARIO=${tag}`, { allowed_tools: ['Bash'] });
      // A repository of the session's making, outside the vault, whose clean filter runs a command.
      const planted = path.join(ws.dir, 'planted');
      const ran = path.join(ws.dir, 'filter-ran');
      fs.mkdirSync(planted);
      git(planted, 'init', '--quiet', '--initial-branch=main');
      git(planted, 'config', 'filter.x.clean', `sh -c 'touch ${ran}; cat'`);
      const root = path.join(ws.state, 'worktrees');
      const own = () => (fs.existsSync(root) ? fs.readdirSync(root).find((id) => fs.existsSync(path.join(root, id, 'from-h1.md'))) : undefined);
      const done = tick(ws, control ? ['namedRepo'] : []);
      await waitFor(() => own() !== undefined, 90_000, 'the session to write in its worktree');
      // What a session past the wall would do: the worktree's .git names the planted repository.
      const wt = path.join(root, own()!);
      fs.writeFileSync(path.join(wt, '.git'), `gitdir: ${path.join(planted, '.git')}\n`);
      fs.writeFileSync(path.join(wt, '.gitattributes'), '* filter=x\n');
      const r = await done;
      assert.equal(r.code, 0, r.stderr);
      if (control) return assert.ok(fs.existsSync(ran), 'the harm: the planted filter ran as the supervisor');
      assert.equal(fs.existsSync(ran), false, 'the planted filter never ran');
      assert.equal(remoteFile(repos, 'from-h1.md'), 'by h1');
      assert.equal(git(planted, 'rev-list', '--all').trim(), '', 'nothing was committed into the planted repository');
    });
  }

  test('a soak of kills: three ticks in a row SIGKILLed at different points with sessions in worktrees of one vault; every file a session had written reaches the remote, every session is counted', { timeout: 6 * 60_000 }, async (t) => {
    const names = ['s1', 's2', 's3'];
    const yaml = (dispatch: string[]) => configYaml({ budget: { max_usd_per_session: 1 }, top: `sessions:\n  max_concurrent: 3\ndispatch:${dispatch.length ? `\n${dispatch.map((n) => `  - agent: ${n}\n`).join('')}` : ' []\n'}` }).replace(GIT_OFF, '');
    const ws = workspace(t, api.url, yaml(names));
    const repos = makeRepos(ws.dir, ws.vault);
    fs.writeFileSync(ws.config, yaml(names));
    const root = path.join(ws.state, 'worktrees');
    // A tick's start lands the killed ticks' worktrees and removes them while this looks: a folder
    // gone between the listing and its read holds nothing now.
    const list = (dir: string) => {
      try {
        return fs.readdirSync(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw err;
      }
    };
    const inWorktrees = () => list(root).flatMap((id) => list(path.join(root, id)).filter((f) => f.startsWith('soak-')));
    const written = new Set<string>();
    for (let round = 0; round < 3; round++) {
      for (const n of names) {
        api.script(`soak-${round}-${n}`, ({ turn }) => turn === 0
          ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: `printf '%s\\n' '${round} ${n}' > soak-${round}-${n}.md; sleep 79${round}${names.indexOf(n)}` } }] }
          : { kind: 'message', blocks: [{ type: 'text', text: 'done' }] });
        writeAgent(ws, n, `SCENARIO=soak-${round}-${n}`, { allowed_tools: ['Bash'] });
      }
      const victim = startNightshift(['tick'], ws.env, ws.dir, t);
      // Killed once all three wrote, or once the first did (the others mid-start).
      const want = round === 1 ? 1 : 3;
      await waitFor(() => inWorktrees().filter((f) => f.startsWith(`soak-${round}-`)).length >= want, 90_000, `round ${round}: ${want} sessions to write`);
      for (const f of inWorktrees()) written.add(f);
      victim.child.kill('SIGKILL');
      await victim.done;
    }
    fs.writeFileSync(ws.config, yaml([]));
    const last = await tick(ws, []);
    assert.equal(last.code, 0, last.stderr);
    const onRemote = git(repos.remote, 'ls-tree', '--name-only', 'main').split('\n');
    assert.ok(written.size >= 7, `files written before the kills: ${[...written].join(', ')}`);
    for (const f of written) assert.ok(onRemote.includes(f), `${f} reached the remote's main: ${onRemote.join(', ')}`);
    const rows = ledgerRows(ws.dir);
    assert.ok(rows.every((r) => r.status === 'settled'), JSON.stringify(rows.map((r) => [r.agent, r.status, r.outcome])));
    assert.ok(rows.length >= written.size, `every session that wrote is counted: ${rows.length} rows`);
    assert.deepEqual(fs.readdirSync(root), []);
    assert.equal(git(ws.vault, 'status', '--porcelain'), '');
    await waitFor(() => [0, 1, 2].every((r) => [0, 1, 2].every((i) => processesMatching(`sleep 79${r}${i}`).length === 0)), 15_000, 'the dead sessions\' tools to be ended');
  });
});
