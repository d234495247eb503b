// The real Claude Code CLI through the per-session API proxy to the imitation API: it holds only
// the proxy's token; the imitation sees only the real credential, and only the inference paths.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { apiRequestRefusal, OAUTH_BETA, startApiProxy, type ApiProxy, type ApiProxyOptions } from '../../sessions/wall/api-proxy.js';
import { TEST_API_KEY, bash, text } from '../fake-api.js';
import { CLAUDE, claudeTestEnv, configYaml, fakeApiPerFile, nightshift, runJson, tempDir, workspace, writeAgent } from '../helpers.js';

const REAL_KEY = 'sk-test-real-upstream-key';
const REAL_OAUTH = 'fake-oauth-test-real-token';
const quiet = { warn() {}, info() {}, debug() {} };
// The imitation knows only the real credentials: the proxy's token would be a 401. TEST_API_KEY
// is the one a nightshift workspace's supervisor holds.
const api = fakeApiPerFile({ keys: [REAL_KEY, REAL_OAUTH, TEST_API_KEY] });
// What the CLI sent for a turn, measured (2.1.197); a new CLI that calls more fails here first.
const TURN = 'POST /v1/messages?beta=true';
const CURL: string | false = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0 ? false : 'curl is not installed';

async function proxy(t: TestContext, o: Partial<ApiProxyOptions> = {}): Promise<ApiProxy> {
  const p = await startApiProxy({ upstream: api.url, credential: { kind: 'api_key', value: REAL_KEY }, logger: quiet, redact: (x) => x, ...o });
  t.after(() => p.close());
  return p;
}

type Cli = { code: number | null; stderr: string; lines: any[]; result: any };

// `auth`: the CLI's credential variables (the proxy token under one name or another).
async function cli(t: TestContext, p: ApiProxy, prompt: string, auth: Record<string, string>, extra: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<Cli> {
  const dir = tempDir(t);
  const env = { ...claudeTestEnv(dir, p.url), ...extra };
  delete env.ANTHROPIC_API_KEY;
  Object.assign(env, auth);
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const argv = [...args, '-p', prompt, '--output-format', 'stream-json', '--verbose', '--max-turns', '4', '--model', 'sonnet', '--no-session-persistence', '--allowedTools', 'Bash(echo:*)'];
  const child = spawn(CLAUDE, argv, { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
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
// Every `METHOD path` that reached the imitation since `n`, and those the allowlist would refuse.
const seenSince = (n: number) => api.seen.slice(n);
const notAllowed = (seen: string[]) => seen.filter((l) => apiRequestRefusal(l.slice(0, l.indexOf(' ')), l.slice(l.indexOf(' ') + 1)) !== null);

// A stdio MCP server with one tool whose answer is large enough for the CLI to count its tokens.
const BIG_MCP = `
const rl = require('node:readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'big', version: '1' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'big', description: 'a large answer', inputSchema: { type: 'object', properties: {} } }] } });
  else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'word '.repeat(4000) }] } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, result: {} });
});
`;

describe('api proxy with the real CLI', () => {
  test('with the token as ANTHROPIC_API_KEY a tool session succeeds and every API call carries the real key, never the token', { timeout: 60_000 }, async (t) => {
    const p = await proxy(t);
    const n = api.requests.length;
    const seen = api.seen.length;
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
    // Through the allowlist: all its calls passed, and they were the measured ones.
    assert.equal(p.stats.refusedPaths, 0);
    assert.deepEqual(seenSince(seen), [TURN, TURN]);
  });

  // CLI 2.1.197 counted tokens here (POST /v1/messages/count_tokens); 2.1.332 makes no such call.
  // Either way, every call the CLI makes for a long tool answer must pass the allowlist.
  test('a session whose MCP tool answers at length: every call the CLI makes passes the allowlist', { timeout: 60_000 }, async (t) => {
    const p = await proxy(t, { credential: { kind: 'oauth', value: REAL_OAUTH } });
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'big.cjs'), BIG_MCP);
    fs.writeFileSync(path.join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { big: { command: process.execPath, args: [path.join(dir, 'big.cjs')] } } }));
    api.script('mcp-big', ({ turn }) => (turn === 0 ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'mcp__big__big', input: {} }], stopReason: 'tool_use' } : text('counted')));
    const seen = api.seen.length;
    const counted = api.countTokens;
    // Counted above half of MAX_MCP_OUTPUT_TOKENS (probed): 4000 words pass 250 tokens.
    const r = await cli(t, p, 'SCENARIO=mcp-big', { CLAUDE_CODE_OAUTH_TOKEN: p.token }, { MAX_MCP_OUTPUT_TOKENS: '500' }, ['--mcp-config', path.join(dir, 'mcp.json'), '--allowedTools', 'mcp__big__big']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.result?.result, 'counted');
    const calls = seenSince(seen);
    assert.deepEqual(calls.filter((c) => c === TURN).length, 2, `Expected the tool turn and the answer, got ${JSON.stringify(calls)}`);
    assert.ok(api.countTokens - counted === calls.filter((c) => c.includes('count_tokens')).length, 'every count the CLI made reached the API');
    assert.deepEqual(notAllowed(calls), []);
    assert.equal(p.stats.refusedPaths, 0);
  });

  // Unwalled: in the wall a tool reaches no API at all (e2e/wall-redteam); the proxy's allowlist is
  // what holds for the CLI's own calls and where a tool can reach the proxy.
  test('an unwalled nightshift session whose Bash runs curl with its own token to /v1/files, batches and a ..%2f climb gets our 400 each time, and the API never sees them', { skip: CURL, timeout: 120_000 }, async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: 'sandbox: none\n' }));
    const paths = ['/v1/files', '/v1/messages/batches', '/v1/messages/..%2f..%2fv1/files', '/v1/organizations/api_keys'];
    // --path-as-is: curl would otherwise resolve a plain dot segment itself.
    const cmd = paths.map((p) => `curl -s --path-as-is -w ' HTTP=%{http_code}\\n' -H "x-api-key: $ANTHROPIC_API_KEY" "$ANTHROPIC_BASE_URL${p}"`).join('; ');
    api.script('curl-files', ({ turn, lastToolResult }) => (turn === 0 ? bash(cmd) : text(`curl said: ${lastToolResult}`)));
    writeAgent(ws, 'curl-files', 'SCENARIO=curl-files', { allowed_tools: ['Bash'] });
    const n = api.requests.length;
    const seen = api.seen.length;
    const { ran, record } = await runJson(ws, 'curl-files');
    assert.equal(record?.outcome, 'ok', ran.stderr);
    const reqs = since(n);
    assert.equal(reqs.length, 2, 'the turn with the tool call and the one after it');
    const out = reqs[1].toolResult ?? '';
    for (const p of paths) {
      assert.ok(out.includes(`nightshift: GET ${p} is not forwarded`), `Expected the tool output to hold our refusal of ${p}, got ${JSON.stringify(out.slice(0, 2000))}`);
    }
    assert.equal(out.match(/HTTP=400/g)?.length, paths.length, `Expected ${paths.length} times HTTP=400, got ${JSON.stringify(out.slice(0, 2000))}`);
    // The imitation saw the session's two turns and nothing of what its Bash asked for.
    assert.deepEqual(seenSince(seen), [TURN, TURN]);
    // Logged once per refused request, by the session's proxy, with the path, never the token.
    const logs = fs.readdirSync(ws.logs, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => fs.readFileSync(path.join(e.parentPath ?? (e as any).path, e.name), 'utf8')).join('\n');
    const refusals = logs.split('\n').filter((l) => l.includes('api_proxy_path_refused'));
    assert.equal(refusals.length, paths.length, `Expected ${paths.length} api_proxy_path_refused lines, got ${refusals.length}`);
    for (const p of paths) assert.ok(refusals.some((l) => l.includes(p)), `Expected a refusal line naming ${p}`);
    assert.ok(!logs.includes(TEST_API_KEY), 'the real key is in the logs');
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

  test(`a refusal mid-session ends the CLI's turn with the reason, and no retry of it reaches the upstream, even with the CLI's default retries`, { timeout: 60_000 }, async (t) => {
    const p = await proxy(t, { refuse: () => (p.stats.requests >= 1 ? 'the session cost ceiling is reached' : null) });
    const n = api.requests.length;
    // The CLI's default retries (the test environment turns them off).
    const r = await cli(t, p, 'SCENARIO=tool', { ANTHROPIC_API_KEY: p.token }, { CLAUDE_CODE_MAX_RETRIES: undefined });
    assert.equal(r.code, 1);
    assert.equal(r.result?.is_error, true);
    assert.equal(r.result.api_error_status, 400);
    assert.match(r.result.result, /nightshift: the session cost ceiling is reached/);
    assert.equal(since(n).length, 1, 'only the first call went upstream');
    // CLI 2.1.197 never retried it; 2.1.332 retries the 400 a few times (6 calls seen), each refused
    // here at no cost, before it ends with our reason.
    assert.ok(p.stats.refused >= 1 && p.stats.refused <= 11, `refused ${p.stats.refused} times`);
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

// No DNS for the API's host: the CLI would retry for three minutes and then blame "a server-side
// issue". The proxy answers with the cause and tells it not to retry; the outcome, the report and
// show name it. The CLI's own retries are left at its default here (the other tests turn them off).
// control: without the x-should-retry: false the CLI retries past the 45 s wall clock (`timeout`).
test('an API host that cannot be resolved ends the session at once, its error saying so in the record and show', { timeout: 120_000 }, async (t) => {
  const ws = workspace(t, api.url, configYaml({ claude: { timeout: '45s', idle_timeout: '45s' } }));
  writeAgent(ws, 'nodns', 'SCENARIO=text');
  const env: NodeJS.ProcessEnv = { ...ws.env, ANTHROPIC_BASE_URL: 'https://api.nightshift.invalid' };
  delete env.CLAUDE_CODE_MAX_RETRIES;
  const t0 = Date.now();
  const ran = await nightshift(['run', 'nodns', '--json'], env, ws.dir);
  const record = JSON.parse(ran.stdout);
  assert.equal(record.outcome, 'error', ran.stderr);
  assert.match(record.error, /^the API could not be reached: could not resolve api\.nightshift\.invalid \((ENOTFOUND|EAI_AGAIN)\): no DNS on this host\? check \/etc\/resolv\.conf/);
  assert.ok(Date.now() - t0 < 40_000, `ended in ${Date.now() - t0} ms, not after the CLI's retries`);
  const shown = await nightshift(['show', record.id], env, ws.dir);
  assert.match(shown.stdout, /could not resolve api\.nightshift\.invalid/);
  assert.doesNotMatch(shown.stdout, /server-side issue/);
});
