// Typos in names nightshift knows are warned about, naming the file and the closest name (issue
// 35.8): `model: sonet` in an agent file or the config, a misspelt variable in the env file. Never
// an error, and never for a name that is not close to a known one (a gateway's model, a variable an
// operator keeps for git or an agent).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { envNameWarnings, modelWarning } from '../../config/name-warnings.js';
import { nightshift, ROOT, tempDir } from '../helpers.js';

test('a model close to an alias is warned about with it; aliases, full names, [1m], priced and far names are not', () => {
  assert.equal(modelWarning('sonet', '/p/a.md: model'), '/p/a.md: model: `sonet` is not a model the CLI knows. Did you mean `sonnet`?');
  assert.match(modelWarning('opsu', 'x')!, /Did you mean `opus`\?/);
  assert.match(modelWarning('Haiku4', 'x') ?? '', /`haiku`/);
  for (const m of ['sonnet', 'opus', 'haiku', 'fable', 'opusplan', 'default', 'sonnet[1m]', 'claude-sonnet-4-5', 'claude-opus-4-1-20250805', 'my-gateway-model', 'gpt-4o']) assert.equal(modelWarning(m, 'x'), null, m);
  // A gateway's name the config prices is the operator's own.
  assert.equal(modelWarning('sonet-gw', 'x', ['sonet-gw']), null);
});

test('an env file variable close to one nightshift reads is warned about with it; others are left alone', () => {
  assert.deepEqual(envNameWarnings(['ANTHROPIC_API_KYE', 'DISCORD_WEBHOOK'], '/s/nightshift.env'), [
    '/s/nightshift.env: `ANTHROPIC_API_KYE` is not a variable nightshift reads. Did you mean `ANTHROPIC_API_KEY`?',
    '/s/nightshift.env: `DISCORD_WEBHOOK` is not a variable nightshift reads. Did you mean `DISCORD_WEBHOOK_URL`?',
  ]);
  const fine = ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'DISCORD_WEBHOOK_URL', 'GEMINI_API_KEY', 'NIGHTSHIFT_LOG_LEVEL', 'https_proxy', 'CLAUDE_CODE_MAX_OUTPUT_TOKENS', 'GIT_SSH_COMMAND', 'PGPASSWORD', 'LANGUAGE'];
  assert.deepEqual(envNameWarnings(fine, 'f'), []);
  // A name an agent's env: passes on is the operator's, however close.
  assert.equal(envNameWarnings(['ANTHROPIC_API_KEY_2'], 'f').length, 1, 'control: close to ANTHROPIC_API_KEY');
  assert.deepEqual(envNameWarnings(['ANTHROPIC_API_KEY_2'], 'f', ['ANTHROPIC_API_KEY_2']), []);
});

function site(t: any, model: string, envLine: string) {
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'prompts'));
  fs.writeFileSync(path.join(dir, 'prompts', 'gardener.md'), `---\nmodel: ${model}\n---\nTend the notes.\n`);
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'sandbox: none\ngit:\n  enabled: false\ndispatch:\n  - agent: gardener\n');
  fs.writeFileSync(path.join(dir, 'nightshift.env'), `${envLine}\n`, { mode: 0o600 });
  return { dir, env: { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml'), ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } };
}

test('doctor warns of both, naming each file; any command warns of the env file on stderr; spelt right, nothing (control)', async (t) => {
  const bad = site(t, 'sonet', 'ANTHROPIC_API_KYE=sk-ant-not-a-key');
  const doctor = await nightshift(['doctor', '--json'], bad.env, bad.dir);
  const checks = JSON.parse(doctor.stdout).checks as Array<{ name: string; status: string; detail: string }>;
  const agents = checks.find((c) => c.name === 'agents')!;
  assert.equal(agents.status, 'warn');
  assert.ok(agents.detail.includes(`${path.join(bad.dir, 'prompts', 'gardener.md')}: model: \`sonet\` is not a model the CLI knows. Did you mean \`sonnet\`?`), agents.detail);
  const env = checks.find((c) => c.name === 'env')!;
  assert.equal(env.status, 'warn');
  assert.ok(env.detail.includes(`${path.join(bad.dir, 'nightshift.env')}: \`ANTHROPIC_API_KYE\``) && env.detail.includes('`ANTHROPIC_API_KEY`'), env.detail);
  const status = await nightshift(['status'], bad.env, bad.dir);
  assert.equal(status.code, 0, 'a warning, not an error');
  assert.match(status.stderr, /"event":"env_file_unknown".*Did you mean `ANTHROPIC_API_KEY`\?/);

  const good = site(t, 'sonnet', 'ANTHROPIC_API_KEY=sk-ant-not-a-key');
  const checks2 = JSON.parse((await nightshift(['doctor', '--json'], good.env, good.dir)).stdout).checks as Array<{ name: string; status: string }>;
  assert.equal(checks2.find((c) => c.name === 'agents')!.status, 'ok');
  assert.equal(checks2.find((c) => c.name === 'env')!.status, 'ok');
  assert.doesNotMatch((await nightshift(['status'], good.env, good.dir)).stderr, /env_file_unknown/);
});
