// What a walled session can neither read nor exhaust (issue 26, points 3 and 4), end to end with
// the real CLI, each with the control that shows the harm: the push token in the vault's
// .git/config, an env file named with --environment-file outside the config's folder, a
// private /tmp past limits.tmp, a fork bomb past limits.pids and a memory hog past limits.memory.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { bash, text } from '../fake-api.js';
import { NEEDS_BWRAP, configYaml, fakeApiPerFile, processesMatching, runJson, tempDir, workspace, writeAgent } from '../helpers.js';
import { git, makeRepos } from '../git-helpers.js';
import { boundsFacts } from '../../sessions/wall/cgroup.js';

const api = fakeApiPerFile();
const TOKEN = 'ghp_pushToken0123456789abcdef';
const ENV_SECRET = 'env-file-secret-9f8e7d';

async function session(t: TestContext, name: string, command: string, walled: boolean) {
  const ws = workspace(t, api.url, configYaml({ top: walled ? '' : 'sandbox: none\n' }));
  makeRepos(ws.dir, ws.vault);
  // Push credentials where a careless setup keeps them (the remote is never reached here).
  git(ws.vault, 'remote', 'set-url', 'origin', `https://deploy:${TOKEN}@git.example.invalid/vault.git`);
  git(ws.vault, 'config', 'http.extraheader', `AUTHORIZATION: bearer ${TOKEN}`);
  api.script(name, ({ turn }) => (turn === 0 ? bash(command) : text('Done.')));
  writeAgent(ws, 'reader', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
  const r = await runJson(ws, 'reader');
  const results = api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult ?? '').join('\n');
  return { r, results };
}

test('a walled session does not read the push credentials in the vault\'s .git/config', { skip: NEEDS_BWRAP, timeout: 120_000 }, async (t) => {
  const { r, results } = await session(t, 'read-walled', 'cat .git/config; echo read-done', true);
  assert.equal(r.record.outcome, 'ok', r.ran.stderr);
  assert.match(results, /read-done/);
  assert.match(results, /url = https:\/\/git\.example\.invalid\/vault\.git/, 'the rest of the config is there');
  assert.doesNotMatch(results, new RegExp(TOKEN), 'the token is not in the .git/config the session sees');
  assert.match(r.ran.stderr, /"event":"git_credentials_hidden"/);
});

test('negative control: unwalled the same session reads the token', { timeout: 120_000 }, async (t) => {
  const { results } = await session(t, 'read-open', 'cat .git/config; echo read-done', false);
  assert.match(results, new RegExp(TOKEN));
});

test('an env file named with --environment-file outside the config\'s folder reads as empty inside the wall; unwalled it leaks', { skip: NEEDS_BWRAP, timeout: 120_000 }, async (t) => {
  for (const walled of [true, false]) {
    const name = `env-${walled ? 'walled' : 'open'}`;
    const ws = workspace(t, api.url, configYaml({ top: walled ? '' : 'sandbox: none\n' }));
    const envFile = path.join(tempDir(t).replace(/^\/tmp\//, '/var/tmp/'), 'site.env');
    fs.mkdirSync(path.dirname(envFile), { recursive: true });
    t.after(() => fs.rmSync(path.dirname(envFile), { recursive: true, force: true }));
    fs.writeFileSync(envFile, `SITE_SECRET=${ENV_SECRET}\n`, { mode: 0o600 });
    api.script(name, ({ turn }) => (turn === 0 ? bash(`cat ${envFile}; echo env-read-done`) : text('Done.')));
    writeAgent(ws, 'reader', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
    const r = await runJson(ws, 'reader', ['--environment-file', envFile]);
    assert.equal(r.record.outcome, 'ok', r.ran.stderr);
    const results = api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult ?? '').join('\n');
    assert.match(results, /env-read-done/);
    if (walled) assert.doesNotMatch(results, new RegExp(ENV_SECRET), 'hidden inside the wall');
    else assert.match(results, new RegExp(ENV_SECRET), 'control: unwalled it is read');
  }
});

test('the private /tmp holds limits.tmp and no more; the default bound holds the same write', { skip: NEEDS_BWRAP, timeout: 120_000 }, async (t) => {
  // Through node: the guardrail refuses a `dd of=` outside the vault, the wall is what is tested.
  // The file goes before anything is printed: the CLI keeps the tool's output in /tmp too.
  const write = `node -e 'const fs = require("fs"); let r = "written"; try { fs.writeFileSync("/tmp/fill", Buffer.alloc(24 << 20)); } catch (e) { r = e.code; } const n = fs.statSync("/tmp/fill").size; fs.rmSync("/tmp/fill"); console.log(r, n, "tmp-done")'`;
  for (const [limit, full] of [['8M', true], [null, false]] as const) {
    const name = `tmp-${limit ?? 'default'}`;
    const ws = workspace(t, api.url, configYaml({ top: limit ? `limits:\n  tmp: ${limit}\n` : '' }));
    api.script(name, ({ turn }) => (turn === 0 ? bash(write) : text('Done.')));
    writeAgent(ws, 'filler', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
    const r = await runJson(ws, 'filler');
    assert.equal(r.record.outcome, 'ok', r.ran.stderr);
    const results = api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult ?? '').join('\n');
    assert.match(results, /tmp-done/);
    if (full) assert.match(results, /ENOSPC/, results);
    else assert.match(results, /written 25165824 tmp-done/, `control: the 24 MB land under the default bound: ${results}`);
  }
});

// A fork bomb kept small: up to 300 sleeping children, each counted in the vault before it is
// started. With limits.pids at 96 the count stops short and the session ends, named; the control
// (the bound raised past the bomb) reaches all 300, then kills them itself.
const BOMB = 'n=0; p=""; while [ $n -lt 300 ]; do sleep 60 > /dev/null 2>&1 & p="$p $!"; n=$((n+1)); echo $n > bomb-count; done; echo bomb-done $n; kill $p; wait';

test('a fork bomb stops at limits.pids and ends the session; with the bound raised it reaches all it asked for', { timeout: 180_000 }, async (t) => {
  for (const [pids, bounded] of [[96, true], [100_000, false]] as const) {
    const name = `bomb-${bounded ? 'bounded' : 'control'}`;
    const ws = workspace(t, api.url, configYaml({ top: `limits:\n  pids: ${pids}\n` }));
    fs.writeFileSync(path.join(ws.vault, 'bomb.sh'), `${BOMB}\n`);
    api.script(name, ({ turn }) => (turn === 0 ? bash('sh bomb.sh') : text('Done.')));
    writeAgent(ws, 'bomber', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
    const r = await runJson(ws, 'bomber');
    const count = Number(fs.readFileSync(path.join(ws.vault, 'bomb-count'), 'utf8'));
    assert.match(r.ran.stderr, /"event":"bounds","mechanism":"cgroup[12]"/, 'a cgroup bounds it on this machine');
    if (bounded) {
      assert.equal(r.record.outcome, 'error', r.ran.stderr);
      assert.match(r.record.error, /limits\.pids: the session reached its 96 processes bound/);
      assert.ok(count > 0 && count < 96, `the bomb stopped short of the bound: ${count}`);
      assert.equal(processesMatching('sleep 60').length, 0, 'nothing of the session is left');
      const cells = Object.values(boundsFacts(process.env.PATH ?? '').v1).map((h) => path.join(h!.dir, `nightshift-${r.record.id}`));
      assert.deepEqual(cells.filter((d) => fs.existsSync(d)), [], 'the session\'s cgroup is gone with it');
    } else {
      assert.equal(r.record.outcome, 'ok', r.ran.stderr);
      assert.equal(count, 300, 'control: the bomb reached all 300');
    }
  }
});

// 1 GB in 16 MB steps, each counted in the vault. With limits.memory at 512M the kernel ends the
// hog and the session ends, named; the control (4G) holds all of it.
const HOG = 'const fs = require("fs"); const a = []; for (let i = 1; i <= 64; i++) { a.push(Buffer.alloc(16 << 20, 1)); fs.writeFileSync("hog-count", String(i)); } console.log("hog-done", a.length);';

test('a memory hog is ended at limits.memory and so is the session; with the bound raised it holds all it asked for', { timeout: 180_000 }, async (t) => {
  for (const [memory, bounded] of [['512M', true], ['4G', false]] as const) {
    const name = `hog-${bounded ? 'bounded' : 'control'}`;
    const ws = workspace(t, api.url, configYaml({ top: `limits:\n  memory: ${memory}\n` }));
    fs.writeFileSync(path.join(ws.vault, 'hog.js'), `${HOG}\n`);
    api.script(name, ({ turn }) => (turn === 0 ? bash('node hog.js') : text('Done.')));
    writeAgent(ws, 'hog', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
    const r = await runJson(ws, 'hog');
    const count = Number(fs.readFileSync(path.join(ws.vault, 'hog-count'), 'utf8'));
    if (bounded) {
      assert.equal(r.record.outcome, 'error', r.ran.stderr);
      assert.match(r.record.error, /limits\.memory: the session reached its 512M memory bound/);
      assert.ok(count < 32, `the hog was ended short of 512M: ${count} x 16M`);
    } else {
      assert.equal(r.record.outcome, 'ok', r.ran.stderr);
      assert.equal(count, 64, 'control: all 1 GB was held');
    }
  }
});
