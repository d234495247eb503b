// nightshift.env for every command, read as systemd's EnvironmentFile= reads it; the environment
// wins; a file holding secrets that others may read is refused with its chmod.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { parseEnvFile } from '../../config/env-file.js';
import { nightshift, tempDir } from '../helpers.js';

function site(t: TestContext, envText: string, mode = 0o600) {
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'prompts'));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'sandbox: none\nvault: ./vault\ndiscord:\n  api_base: http://127.0.0.1:9/api\n  timeout: 2s\n');
  fs.writeFileSync(path.join(dir, 'nightshift.env'), envText, { mode });
  fs.chmodSync(path.join(dir, 'nightshift.env'), mode);
  return { dir, env: { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml'), ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } as NodeJS.ProcessEnv };
}

async function doctorChecks(dir: string, env: NodeJS.ProcessEnv, args: string[] = []) {
  const ran = await nightshift(['doctor', '--json', ...args], env, dir);
  const out = JSON.parse(ran.stdout);
  return { ran, out, check: (name: string) => out.checks.find((c: any) => c.name === name) };
}

describe('env file', () => {
  test('KEY=VALUE lines, comments, quotes and continuations, as systemd reads them', () => {
    const r = parseEnvFile([
      '# a comment', '; another', '', 'PLAIN=value', '  SPACED = padded  ', 'DOUBLE="two words \\"quoted\\""', "SINGLE='kept \\n as is'",
      'EMPTY=', 'JOINED=first\\', 'second', 'export BAD=1', 'no equals sign',
    ].join('\n'));
    assert.deepEqual(r.vars, { PLAIN: 'value', SPACED: 'padded', DOUBLE: 'two words "quoted"', SINGLE: 'kept \\n as is', EMPTY: '', JOINED: 'firstsecond' });
    assert.equal(r.problems.length, 2);
    assert.match(r.problems[0], /^line 11: Expected KEY=VALUE/);
  });

  test('every command reads it: doctor sees the credential and the webhook that are only in the file', async (t) => {
    const s = site(t, 'ANTHROPIC_API_KEY=test-key-in-env-file\nDISCORD_WEBHOOK_URL=http://127.0.0.1:9/api/webhooks/1/test-webhook-token-in-file\n');
    const { check } = await doctorChecks(s.dir, s.env);
    assert.equal(check('credential').status, 'ok');
    assert.match(check('credential').detail, /ANTHROPIC_API_KEY is set \(from .*nightshift\.env\)/);
    // The webhook is read (and probed), not reported missing.
    assert.doesNotMatch(check('discord').detail, /not set/);
    // Negative control: without the file, the same doctor finds neither.
    fs.rmSync(path.join(s.dir, 'nightshift.env'));
    const without = await doctorChecks(s.dir, s.env);
    assert.equal(without.check('credential').status, 'fail');
    assert.match(without.check('discord').detail, /DISCORD_WEBHOOK_URL is not set/);
  });

  test('a variable already in the environment wins over the file; --environment-file names another file', async (t) => {
    const s = site(t, 'ANTHROPIC_API_KEY=test-key-from-file\n');
    const { check } = await doctorChecks(s.dir, { ...s.env, ANTHROPIC_API_KEY: 'test-key-from-environment' });
    assert.doesNotMatch(check('credential').detail, /from /);
    assert.match(check('env').detail, /0 variables taken/);
    const other = path.join(s.dir, 'other.env');
    fs.writeFileSync(other, 'CLAUDE_CODE_OAUTH_TOKEN=test-oauth-from-other\n', { mode: 0o600 });
    fs.rmSync(path.join(s.dir, 'nightshift.env'));
    const named = await doctorChecks(s.dir, s.env, ['--environment-file', other]);
    assert.match(named.check('credential').detail, /CLAUDE_CODE_OAUTH_TOKEN is set \(from .*other\.env\)/);
    const missing = await nightshift(['agents', '--environment-file', path.join(s.dir, 'gone.env')], s.env, s.dir);
    assert.equal(missing.code, 78);
    assert.match(missing.stderr, /gone\.env:\n {2}- file not found/);
  });

  test('a file with secrets that group or others may read is refused (78) with its chmod; doctor --fix narrows it', async (t) => {
    const s = site(t, 'ANTHROPIC_API_KEY=test-key-world-readable\n', 0o644);
    const ran = await nightshift(['agents'], s.env, s.dir);
    assert.equal(ran.code, 78);
    assert.match(ran.stderr, /its mode 0644 lets its group or others read the secrets in it \(ANTHROPIC_API_KEY\); fix: chmod 600 .*nightshift\.env/);
    assert.doesNotMatch(ran.stderr, /test-key-world-readable/);
    const doctor = await doctorChecks(s.dir, s.env);
    assert.equal(doctor.check('env').status, 'fail');
    const fixed = await doctorChecks(s.dir, s.env, ['--fix']);
    assert.ok(fixed.out.fixed.some((f: string) => /^chmod 600 .*nightshift\.env \(was 0644\)$/.test(f)), fixed.out.fixed.join('\n'));
    assert.equal(fixed.check('env').status, 'ok');
    assert.equal(fs.statSync(path.join(s.dir, 'nightshift.env')).mode & 0o777, 0o600);
    // Negative control: now 0600, the same command runs.
    assert.equal((await nightshift(['agents'], s.env, s.dir)).code, 0);
  });

  test('a readable file with no secrets in it is read, not refused', async (t) => {
    const s = site(t, 'NIGHTSHIFT_LOG_LEVEL=warn\n', 0o644);
    assert.equal((await nightshift(['agents'], s.env, s.dir)).code, 0);
  });
});
