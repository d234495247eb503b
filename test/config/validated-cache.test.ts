// What the schemas made of an unchanged file is kept beside the ledger (config/validated-cache.ts):
// a hit must be what validating would give, and any change, another build, a broken file or a
// missing agent must validate (and fail) as before.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { loadConfig, validateConfig } from '../../config/config.js';
import { loadConfigCached, stateDirGuess } from '../../config/config-file.js';
import { loadAgentCached, readAgentsCached } from '../../config/agent-file.js';
import { readAgents } from '../../config/agents.js';
import { VALIDATED_FILE } from '../../config/validated-cache.js';
import { ConfigError } from '../../core/errors.js';
import { BIN, ROOT, tempDir } from '../helpers.js';

const RICH = `vault: ./vault
state_dir: ./state
log_dir: ./logs
network: [example.com, "*.Example.org."]
claude:
  model: opus
  timeout: 20m
  idle_timeout: 5m
  permission_mode: [Bash, Read, "Bash(git:*)"]
  extra_args: [--verbose]
budget:
  timezone: Europe/Berlin
  max_usd_per_day: 7.5
  max_usd_per_session: 2
  prices:
    my-model: { input: 1, output: 2 }
loop:
  window: 12
  max_repeats: 4
dispatch:
  - agent: writer
    hours: 8-18
    days: mon-fri
  - agent: gardener
    min_interval: 2h
`;

function site(t: any, yaml = RICH, o: { state?: boolean } = {}) {
  const dir = tempDir(t);
  for (const d of ['vault', 'prompts', ...(o.state === false ? [] : ['state'])]) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'prompts', 'writer.md'), '---\ndescription: writes\nmodel: haiku\ntimeout: 15m\nenv: [EDITOR]\nnetwork: [docs.example.com]\n---\nWrite.\n');
  fs.writeFileSync(path.join(dir, 'prompts', 'gardener.md'), 'Tend the garden.\n');
  const file = path.join(dir, 'nightshift.yaml');
  fs.writeFileSync(file, yaml);
  const kept = path.join(dir, 'state', VALIDATED_FILE);
  const edit = (f: (j: any) => void) => {
    const j = JSON.parse(fs.readFileSync(kept, 'utf8'));
    f(j);
    fs.writeFileSync(kept, JSON.stringify(j));
  };
  return { dir, file, kept, edit };
}

describe('validated cache', () => {
  test('a config validated once is kept whole, and what is kept is what the next load gives', async (t) => {
    const s = site(t);
    const full = loadConfig(s.file);
    assert.deepEqual(await loadConfigCached(s.file, 'build-1'), full);
    // Kept: every field survives JSON (else nothing would be kept and every tick would validate).
    const j = JSON.parse(fs.readFileSync(s.kept, 'utf8'));
    assert.equal(j.build, 'build-1');
    assert.deepEqual(j.entries[`config:${s.file}`].value, JSON.parse(JSON.stringify(full)));
    assert.deepEqual(await loadConfigCached(s.file, 'build-1'), full);
  });

  test('the documented example config, every default and the rich one survive JSON, so each would be kept (a value JSON changes never is)', () => {
    const page = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
    const example = parseYaml(/```yaml\n([\s\S]*?)```/.exec(page)![1]);
    for (const data of [example, {}, parseYaml(RICH)]) {
      const r = validateConfig(data, '/srv/site/nightshift.yaml');
      assert.ok(r.config, String(r.problems));
      assert.ok(isDeepStrictEqual(JSON.parse(JSON.stringify(r.config)), r.config), JSON.stringify(r.config));
    }
  });

  test('a hit is what was kept, not a new validation; one changed byte, another build or none validates again', async (t) => {
    const s = site(t);
    await loadConfigCached(s.file, 'build-1');
    s.edit((j) => (j.entries[`config:${s.file}`].value.claude.model = 'kept-model'));
    // The kept value is used: the schema never ran.
    assert.equal((await loadConfigCached(s.file, 'build-1')).claude.model, 'kept-model');
    // Controls: the same text under another build, or with no build id (plain modules), validates.
    assert.equal((await loadConfigCached(s.file, 'build-2')).claude.model, 'opus');
    assert.equal((await loadConfigCached(s.file, null)).claude.model, 'opus');
    // build-2 replaced the file: build-1 misses now and validates in full.
    s.edit((j) => assert.equal(j.build, 'build-2'));
    s.edit((j) => (j.entries[`config:${s.file}`].value.claude.model = 'kept-model'));
    fs.appendFileSync(s.file, '# a comment changes no setting, but the text\n');
    assert.equal((await loadConfigCached(s.file, 'build-2')).claude.model, 'opus');
  });

  test('a config that fails is never kept, and fails as loadConfig fails', async (t) => {
    const s = site(t, RICH.replace('max_repeats: 4', 'max_repeats: 40'));
    const want = (() => {
      try {
        loadConfig(s.file);
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('Expected the config to fail');
    })();
    await assert.rejects(loadConfigCached(s.file, 'build-1'), (err: unknown) => err instanceof ConfigError && assert.deepEqual(err.problems, want.problems) === undefined);
    assert.equal(fs.existsSync(s.kept), false);
  });

  test('a dispatch rule whose agent is gone fails on a hit too', async (t) => {
    const s = site(t);
    await loadConfigCached(s.file, 'build-1');
    assert.ok(fs.existsSync(s.kept));
    fs.rmSync(path.join(s.dir, 'prompts', 'gardener.md'));
    await assert.rejects(loadConfigCached(s.file, 'build-1'), /dispatch\[1\]\.agent: Expected an agent in .*got `gardener` \(.*nightshift\.yaml:\d+\)/);
  });

  test('garbage where the cache was validates in full and is replaced; no state_dir yet keeps nothing and makes none', async (t) => {
    const s = site(t);
    fs.writeFileSync(s.kept, 'not json {');
    assert.equal((await loadConfigCached(s.file, 'build-1')).claude.model, 'opus');
    assert.equal(JSON.parse(fs.readFileSync(s.kept, 'utf8')).build, 'build-1');
    const none = site(t, RICH, { state: false });
    assert.equal((await loadConfigCached(none.file, 'build-1')).claude.model, 'opus');
    assert.equal(fs.existsSync(path.join(none.dir, 'state')), false);
  });

  test('the state_dir is read off its line to find the kept file; a text it cannot read that way is validated every time', async (t) => {
    const file = '/srv/site/nightshift.yaml';
    assert.equal(stateDirGuess('vault: ./v\nstate_dir: ./custom   # kept here\n', file), '/srv/site/custom');
    assert.equal(stateDirGuess("state_dir: '/var/lib/ns'\n", file), '/var/lib/ns');
    assert.equal(stateDirGuess('state_dir: "../st"\n', file), '/srv/st');
    assert.equal(stateDirGuess('# state_dir: ./not-this\nvault: ./v\n', file), '/srv/site/state');
    // An escape the line cannot be read without a parser: the guess is the default, which is not
    // where this config keeps its state, so nothing is kept anywhere and each load validates.
    const s = site(t, RICH.replace('state_dir: ./state', 'state_dir: "./re\\x61l"'));
    fs.mkdirSync(path.join(s.dir, 'real'));
    for (let i = 0; i < 2; i++) assert.equal((await loadConfigCached(s.file, 'build-1')).state_dir, path.join(s.dir, 'real'));
    assert.deepEqual([fs.existsSync(s.kept), fs.existsSync(path.join(s.dir, 'real', VALIDATED_FILE))], [false, false]);
    // Control: the same config with a plain line is kept where its state is.
    const plain = site(t, RICH.replace('state_dir: ./state', 'state_dir: ./real'));
    fs.mkdirSync(path.join(plain.dir, 'real'));
    await loadConfigCached(plain.file, 'build-1');
    assert.ok(fs.existsSync(path.join(plain.dir, 'real', VALIDATED_FILE)));
  });

  test('agents: a hit is the kept front matter under today\'s config; a changed file or a broken one validates', async (t) => {
    const s = site(t);
    const config = loadConfig(s.file);
    assert.deepEqual(await readAgentsCached(config, 'build-1'), readAgents(config));
    const writer = path.join(s.dir, 'prompts', 'writer.md');
    s.edit((j) => (j.entries[`agent:${writer}`].value.prompt = 'Kept prompt.'));
    assert.equal((await readAgentsCached(config, 'build-1')).agents.find((a) => a.name === 'writer')?.prompt, 'Kept prompt.');
    assert.equal((await loadAgentCached(config, 'writer', 'build-1')).prompt, 'Kept prompt.');
    // The config's fallbacks apply at each read, not when the file was kept.
    const gardener = (await readAgentsCached({ ...config, claude: { ...config.claude, model: 'sonnet' } }, 'build-1')).agents.find((a) => a.name === 'gardener');
    assert.equal(gardener?.model, 'sonnet');
    // Control: the file's text changes, so it validates again.
    fs.appendFileSync(writer, 'And edit.\n');
    assert.equal((await readAgentsCached(config, 'build-1')).agents.find((a) => a.name === 'writer')?.prompt, 'Write.\nAnd edit.');
    // A broken file is reported as readAgents reports it, every time, and never kept.
    fs.writeFileSync(writer, '---\nmax_turns: none\n---\nWrite.\n');
    assert.deepEqual((await readAgentsCached(config, 'build-1')).broken, readAgents(config).broken);
    assert.deepEqual((await readAgentsCached(config, 'build-1')).broken.map((b) => b.name), ['writer']);
    s.edit((j) => assert.equal(j.entries[`agent:${writer}`].text.includes('max_turns: none'), false));
    await assert.rejects(loadAgentCached(config, 'nobody', 'build-1'), /Unknown agent `nobody`/);
  });

  test('the bundled CLI keeps what it validated under its own build, and a tick uses it until the file changes', (t) => {
    const s = site(t, 'state_dir: ./state\nlog_dir: ./logs\ngit:\n  enabled: false\ndispatch: []\n');
    const tick = () => spawnSync(process.execPath, [BIN, 'tick', '--json'], { cwd: s.dir, env: { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: s.file }, encoding: 'utf8' });
    const first = tick();
    assert.equal(first.status, 0, first.stderr);
    const bundle = fs.readFileSync(path.join(path.dirname(BIN), '..', 'bundle', 'cli.cjs'), 'latin1');
    const j = JSON.parse(fs.readFileSync(s.kept, 'utf8'));
    assert.ok(bundle.includes(JSON.stringify(j.build)), `the kept build ${j.build} is not the bundle's`);
    // The kept config's log_dir is elsewhere: the next tick logs there, so it took the kept value.
    const elsewhere = path.join(s.dir, 'kept-logs');
    s.edit((k) => (k.entries[`config:${s.file}`].value.log_dir = elsewhere));
    assert.equal(tick().status, 0);
    assert.equal(fs.readdirSync(elsewhere).length, 1);
    // Control: any edit to the file and the real log_dir is back.
    fs.rmSync(path.join(s.dir, 'logs'), { recursive: true, force: true });
    fs.appendFileSync(s.file, '# edited\n');
    assert.equal(tick().status, 0);
    assert.equal(fs.readdirSync(path.join(s.dir, 'logs')).length, 1);
  });
});
