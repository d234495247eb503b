// The real Claude Code CLI through the per-session API proxy to the imitation API: it holds only
// the proxy's token; the imitation sees only the real credential.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test, type TestContext } from 'node:test';
import { OAUTH_BETA, startApiProxy, type ApiProxy, type ApiProxyOptions } from '../../sessions/wall/api-proxy.js';
import { CLAUDE, claudeTestEnv, fakeApiPerFile, tempDir } from '../helpers.js';

const REAL_KEY = 'sk-test-real-upstream-key';
const REAL_OAUTH = 'fake-oauth-test-real-token';
const quiet = { warn() {}, info() {}, debug() {} };
// The imitation knows only the real credentials: the proxy's token would be a 401.
const api = fakeApiPerFile({ keys: [REAL_KEY, REAL_OAUTH] });

async function proxy(t: TestContext, o: Partial<ApiProxyOptions> = {}): Promise<ApiProxy> {
  const p = await startApiProxy({ upstream: api.url, credential: { kind: 'api_key', value: REAL_KEY }, logger: quiet, redact: (x) => x, ...o });
  t.after(() => p.close());
  return p;
}

type Cli = { code: number | null; stderr: string; lines: any[]; result: any };

// `auth`: the CLI's credential variables (the proxy token under one name or another).
async function cli(t: TestContext, p: ApiProxy, prompt: string, auth: Record<string, string>, extra: NodeJS.ProcessEnv = {}): Promise<Cli> {
  const dir = tempDir(t);
  const env = { ...claudeTestEnv(dir, p.url), ...extra };
  delete env.ANTHROPIC_API_KEY;
  Object.assign(env, auth);
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const args = ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--max-turns', '4', '--model', 'sonnet', '--no-session-persistence', '--allowedTools', 'Bash(echo:*)'];
  const child = spawn(CLAUDE, args, { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { code, stderr, lines, result: lines.find((l) => l.type === 'result') ?? null };
}

// The requests of this test alone (the imitation is shared by the file; its tests run in order).
const since = (n: number) => api.requests.slice(n);

describe('api proxy with the real CLI', () => {
  test('with the token as ANTHROPIC_API_KEY a tool session succeeds and every API call carries the real key, never the token', { timeout: 60_000 }, async (t) => {
    const p = await proxy(t);
    const n = api.requests.length;
    const r = await cli(t, p, 'SCENARIO=tool', { ANTHROPIC_API_KEY: p.token });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.result?.subtype, 'success');
    assert.equal(r.result.is_error, false);
    assert.equal(r.result.result, 'Tool said: "hi". Done.');
    const reqs = since(n);
    assert.equal(reqs.length, 2);
    for (const q of reqs) {
      assert.equal(q.stream, true);
      assert.equal(q.headers['x-api-key'], REAL_KEY);
      assert.equal(q.headers.authorization, undefined);
      assert.ok(!JSON.stringify(q.headers).includes(p.token), 'the token reached the upstream');
      assert.match(String(q.headers['user-agent']), /^claude-cli\//, 'the CLI headers pass through');
      assert.doesNotMatch(String(q.headers['anthropic-beta']), new RegExp(OAUTH_BETA));
    }
    assert.equal(p.stats.requests, 2);
    assert.equal(p.stats.upstreamErrors, 0);
  });

  test('with the token as CLAUDE_CODE_OAUTH_TOKEN the CLI sends it as a bearer through the base URL, and the upstream sees the real OAuth token', { timeout: 60_000 }, async (t) => {
    const p = await proxy(t, { credential: { kind: 'oauth', value: REAL_OAUTH } });
    const n = api.requests.length;
    const r = await cli(t, p, 'SCENARIO=text', { CLAUDE_CODE_OAUTH_TOKEN: p.token });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.result?.subtype, 'success');
    assert.equal(r.result.result, 'hi from the fake API');
    const reqs = since(n);
    assert.equal(reqs.length, 1);
    assert.equal(reqs[0].headers.authorization, `Bearer ${REAL_OAUTH}`);
    assert.equal(reqs[0].headers['x-api-key'], undefined);
    const betas = String(reqs[0].headers['anthropic-beta']).split(',');
    assert.equal(betas.filter((b) => b === OAUTH_BETA).length, 1, 'the oauth beta, once');
    assert.ok(betas.includes('claude-code-20250219'), 'the CLI betas pass through');
    assert.ok(!JSON.stringify(reqs[0].headers).includes(p.token));
  });

  test(`a refusal mid-session ends the CLI's turn at once with the reason, without a retry, even with the CLI's default retries`, { timeout: 60_000 }, async (t) => {
    const p = await proxy(t, { refuse: () => (p.stats.requests >= 1 ? 'the session cost ceiling is reached' : null) });
    const n = api.requests.length;
    // The CLI's default retries (the test environment turns them off).
    const r = await cli(t, p, 'SCENARIO=tool', { ANTHROPIC_API_KEY: p.token }, { CLAUDE_CODE_MAX_RETRIES: undefined });
    assert.equal(r.code, 1);
    assert.equal(r.result?.is_error, true);
    assert.equal(r.result.api_error_status, 400);
    assert.match(r.result.result, /nightshift: the session cost ceiling is reached/);
    assert.equal(since(n).length, 1, 'only the first call went upstream');
    assert.equal(p.stats.refused, 1, 'the CLI did not retry the refusal');
  });

  test('a CLI holding a wrong token gets a 401 it does not retry, and nothing reaches the upstream', { timeout: 60_000 }, async (t) => {
    const p = await proxy(t);
    const n = api.requests.length;
    // The CLI retries a plain 401; x-should-retry: false stops it, even with its default retries.
    const r = await cli(t, p, 'SCENARIO=text', { ANTHROPIC_API_KEY: 'sk-ant-api03-not-the-token' }, { CLAUDE_CODE_MAX_RETRIES: undefined });
    assert.equal(r.result?.is_error, true);
    assert.equal(r.result.api_error_status, 401);
    assert.match(r.result.result, /nightshift: invalid session token/);
    assert.equal(since(n).length, 0);
    assert.equal(p.stats.requests, 0);
    // Its connection warm-up (HEAD /, no credential) and the one call.
    assert.ok(p.stats.unauthorized >= 1 && p.stats.unauthorized <= 2, `${p.stats.unauthorized} refused`);
  });
});
