// A repository a session makes in the vault is never trusted by nightshift's git (a filter in it
// would run inside nightshift's own `git add`), and a vault marked untrusted gets no git of ours.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { bash, text } from '../fake-api.js';
import { SESSION_USER, configYaml, fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';
import { untrustedGitMarker } from '../../vault/git-guard.js';

const api = fakeApiPerFile();

// With git on, a vault that is no repository is refused before the spawn (e2e/git), so no session
// of a git-on site makes the vault's first repository; the quarantine after the session stays as
// the net. With git off, nightshift runs no git in the vault, so a repository a session makes there
// runs nothing of ours.
test('with git off, a repository a session makes in the vault is never entered by nightshift\'s git: its filter never runs', async (t) => {
  const ws = workspace(t, api.url);
  const proof = path.join(ws.dir, 'filter-ran');
  api.script('plant-repo', ({ turn }) =>
    turn === 0
      ? bash(`git init -q . && git config filter.x.clean 'touch ${proof}; cat' && printf '* filter=x\\n' > .gitattributes && echo planted > f.txt && echo done`)
      : text('Planted.'),
  );
  writeAgent(ws, 'planter', 'SCENARIO=plant-repo', { allowed_tools: ['Bash'] });
  writeAgent(ws, 'next', 'SCENARIO=text');
  const planted = await runJson(ws, 'planter');
  assert.equal(planted.ran.code, 0, planted.ran.stderr);
  assert.ok(fs.existsSync(path.join(ws.vault, '.git')), 'the session made a repository');
  const next = await runJson(ws, 'next');
  assert.equal(next.ran.code, 0, next.ran.stderr);
  assert.ok(!fs.existsSync(proof), 'the planted filter never ran');
});

// A vault whose repository could not be moved aside (the marker) gets no git of ours at all, the
// start's early "is it a work tree" included (supervise.ts asks it beside the session's loading).
test('while the vault\'s git is untrusted no git of the supervisor runs there; control: without the marker it does', async (t) => {
  const ws = workspace(t, api.url, configYaml({ top: 'git:\n  enabled: true\n' }));
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: ws.vault });
  fs.writeFileSync(path.join(ws.vault, 'a.md'), 'a\n');
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first', '--allow-empty'], { cwd: ws.vault });
  if (SESSION_USER) execFileSync('chown', ['-R', '0:0', path.join(ws.vault, '.git')]);
  // Every git the supervisor starts, by where it runs (the session's own, marked, is left out).
  const bin = path.join(ws.dir, 'bin');
  const log = path.join(ws.dir, 'git.log');
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\n[ -n "$NIGHTSHIFT_SESSION_ID" ] || echo "$PWD $*" >> ${log}\nexec ${real} "$@"\n`, { mode: 0o755 });
  const env = { PATH: `${bin}:${ws.env.PATH}` };
  writeAgent(ws, 'next', 'SCENARIO=text');
  fs.mkdirSync(ws.state, { recursive: true });
  fs.writeFileSync(untrustedGitMarker(ws.state), 'test: a repository that could not be moved aside\n');
  const inVault = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith(`${ws.vault} `) || l.startsWith(`${fs.realpathSync(ws.vault)} `)) : []);
  const held = await runJson(ws, 'next', [], env);
  assert.ok(held.record, held.ran.stderr);
  assert.match(String(held.record.git?.error ?? held.ran.stdout), /could not be moved aside/);
  t.diagnostic(`log: ${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '(none)'}`);
  assert.deepEqual(inVault(), [], 'no git of ours ran in the untrusted vault');
  fs.rmSync(untrustedGitMarker(ws.state));
  const open = await runJson(ws, 'next', [], env);
  assert.ok(open.record, open.ran.stderr);
  assert.ok(inVault().some((l) => / rev-parse --is-inside-work-tree$/.test(l)), `control: git is asked in a trusted vault: ${inVault().join('; ')}`);
});
