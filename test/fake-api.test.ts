// The imitation API holds the real API's rules a bug could hide behind: a key it knows or 401,
// pings and error events inside a stream, and a loud 400 for a scenario it does not have. Each is
// checked on the wire and through the real Claude Code CLI.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import { TEST_API_KEY } from './fake-api.js';
import { pdf, png } from './fixtures/media-files.js';
import { CLAUDE, claudeTestEnv, fakeApiPerFile, tempDir } from './helpers.js';

const api = fakeApiPerFile();
const BODY = (prompt: string, stream = true) => JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 100, stream, messages: [{ role: 'user', content: prompt }] });

async function post(prompt: string, headers: Record<string, string>, stream = true): Promise<{ status: number; text: string }> {
  const r = await fetch(`${api.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers }, body: BODY(prompt, stream) });
  return { status: r.status, text: await r.text() };
}

// The SSE event names of a streamed answer, in order.
const events = (sse: string) => [...sse.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);

// The real CLI against the imitation, with the test environment's key unless `env` says otherwise.
async function cli(t: TestContext, prompt: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; result: any; lines: any[] }> {
  const dir = tempDir(t);
  const full = { ...claudeTestEnv(dir, api.url), ...env };
  const args = ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--max-turns', '2', '--model', 'sonnet', '--no-session-persistence'];
  const child = spawn(CLAUDE, args, { env: full, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.resume();
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { code, lines, result: lines.find((l) => l.type === 'result') ?? null };
}

// Prompts no other test asks: `attempt` counts per prompt and turn.
const unique = () => `ID=${randomBytes(6).toString('hex')}`;

describe('the fake API', () => {
  test('answers 401 to a request with no key or a key it does not know, and never counts it as answered', async () => {
    const before = { answered: api.requests.length, refused: api.unauthorized };
    const none = await post('SCENARIO=text', {});
    const wrong = await post('SCENARIO=text', { 'x-api-key': 'sk-test-some-other-key' });
    const wrongBearer = await post('SCENARIO=text', { authorization: 'Bearer sk-test-some-other-key' });
    for (const r of [none, wrong, wrongBearer]) {
      assert.equal(r.status, 401, r.text);
      assert.equal(JSON.parse(r.text).error.type, 'authentication_error');
      assert.doesNotMatch(r.text, /some-other-key/, 'the key is not echoed');
    }
    assert.equal(api.unauthorized - before.refused, 3);
    assert.equal(api.requests.length, before.answered, 'a refused request is not recorded as answered');
    // The control: the key the test environment holds is answered, in either header.
    assert.equal((await post('SCENARIO=text', { 'x-api-key': TEST_API_KEY })).status, 200);
    assert.equal((await post('SCENARIO=text', { authorization: `Bearer ${TEST_API_KEY}` })).status, 200);
    assert.equal(api.requests.length, before.answered + 2);
  });

  test('answers 404 on any path but /v1/messages and its count_tokens, as the API does: batches, files, a ../ climb', async () => {
    const before = api.requests.length;
    for (const p of ['/v1/messages/batches', '/v1/messages/batches/msgbatch_01/results', '/v1/files', '/v1/messages/../files', '/v1/messagesX', '/v2/messages']) {
      const r = await fetch(`${api.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': TEST_API_KEY }, body: BODY('SCENARIO=text') });
      const text = await r.text();
      assert.equal(r.status, 404, `${p}: ${text}`);
      assert.equal(JSON.parse(text).error.type, 'not_found_error');
    }
    assert.equal(api.requests.length, before, 'none was answered as a message');
    // The control: the same body at /v1/messages is answered.
    assert.equal((await post('SCENARIO=text', { 'x-api-key': TEST_API_KEY })).status, 200);
  });

  // mutation: the path checked before the key (404 to an unknown key off the two paths), caught here.
  test('answers 401 to an unknown key on every path, batches, files and models too, before any 404', async () => {
    const before = api.unauthorized;
    for (const [method, p] of [['POST', '/v1/messages/batches'], ['GET', '/v1/files'], ['GET', '/v1/models'], ['HEAD', '/']]) {
      const r = await fetch(`${api.url}${p}`, { method, headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test-some-other-key' } });
      assert.equal(r.status, 401, `${method} ${p}`);
    }
    assert.equal(api.unauthorized - before, 4);
  });

  test('answers 400 to a call without anthropic-version, as the API does; control: with it, 200', async () => {
    const before = api.requests.length;
    const r = await fetch(`${api.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY }, body: BODY('SCENARIO=text') });
    const text = await r.text();
    assert.equal(r.status, 400, text);
    assert.deepEqual(JSON.parse(text).error, { type: 'invalid_request_error', message: 'anthropic-version: header is required' });
    const counted = await fetch(`${api.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY }, body: BODY('SCENARIO=text') });
    assert.equal(counted.status, 400);
    assert.equal(api.requests.length, before, 'neither was answered');
    assert.equal((await post('SCENARIO=text', { 'x-api-key': TEST_API_KEY })).status, 200);
  });

  test('bills the input it was sent: text by the body\'s size, an image by its pixels, a PDF by its pages; a script\'s own count still wins', async () => {
    const served = async (content: unknown, scenario = 'text') => {
      const n = api.served.length;
      const body = JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 100, stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: `SCENARIO=${scenario} ${unique()}` }, ...[content].flat()] }] });
      const r = await fetch(`${api.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': TEST_API_KEY }, body });
      const reply = await r.json() as any;
      assert.equal(r.status, 200, JSON.stringify(reply));
      assert.equal(api.served.length, n + 1);
      assert.equal(reply.usage.input_tokens, api.served[n].usage.input_tokens, 'the reply says what was recorded');
      return { input: reply.usage.input_tokens as number, bytes: Buffer.byteLength(body) };
    };
    // Text: a token per 4 bytes, so 40,000 more bytes of text are 10,000 more tokens.
    const small = await served({ type: 'text', text: 'x' });
    const big = await served({ type: 'text', text: 'x'.repeat(40_001) });
    assert.equal(small.input, Math.ceil(small.bytes / 4));
    assert.equal(big.input - small.input, 10_000);
    // An image of 1092x1092 (under both resize bounds): 1092*1092/750 = 1,590 tokens, whatever its bytes.
    const b64 = (b: Buffer) => b.toString('base64');
    const img = b64(png(1092, 1092));
    const one = await served({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: img } });
    assert.equal(one.input - Math.ceil((one.bytes - img.length) / 4), 1590);
    // A 4000x4000 image is scaled to 1092x1092 first: 1,590 tokens, not 21,334.
    const huge = b64(png(4000, 4000));
    const scaled = await served({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: huge } });
    assert.equal(scaled.input - Math.ceil((scaled.bytes - huge.length) / 4), 1590);
    // A PDF of 90 pages: 90 * 1,000 tokens.
    const doc = b64(pdf(90));
    const pages = await served({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: doc } });
    assert.equal(pages.input - Math.ceil((pages.bytes - doc.length) / 4), 90_000);
    // A script that says its input keeps it.
    api.script('says-input', () => ({ kind: 'message', blocks: [{ type: 'text', text: 'counted' }], usage: { input_tokens: 7, output_tokens: 1 } }));
    assert.equal((await served({ type: 'text', text: 'x'.repeat(10_000) }, 'says-input')).input, 7);
  });

  test('the real CLI holding a key the API does not know ends with the 401', { timeout: 60_000 }, async (t) => {
    const before = api.unauthorized;
    const r = await cli(t, 'SCENARIO=text', { ANTHROPIC_API_KEY: 'sk-test-not-the-key' });
    assert.equal(r.code, 1);
    assert.equal(r.result?.is_error, true);
    assert.equal(r.result.api_error_status, 401);
    assert.ok(api.unauthorized > before);
  });

  test('a misspelled scenario is a 400 naming it, which the real CLI ends its turn with', { timeout: 60_000 }, async (t) => {
    const wire = await post('SCENARIO=txet', { 'x-api-key': TEST_API_KEY });
    assert.equal(wire.status, 400);
    assert.match(JSON.parse(wire.text).error.message, /^fake API: unknown scenario "txet" \(known: .*\btext\b/);
    const r = await cli(t, 'SCENARIO=txet');
    assert.equal(r.code, 1);
    assert.equal(r.result?.api_error_status, 400);
    assert.match(r.result.result, /unknown scenario "txet"/);
  });

  test('every stream carries a ping, and one with pings between its deltas is read whole by the real CLI', { timeout: 60_000 }, async (t) => {
    const plain = events((await post('SCENARIO=text', { 'x-api-key': TEST_API_KEY })).text);
    assert.deepEqual(plain.slice(0, 3), ['message_start', 'ping', 'content_block_start']);
    const pinged = events((await post('SCENARIO=pings', { 'x-api-key': TEST_API_KEY })).text);
    const deltas = pinged.filter((e) => e === 'content_block_delta').length;
    assert.equal(pinged.filter((e) => e === 'ping').length, deltas + 1, pinged.join(' '));
    const r = await cli(t, 'SCENARIO=pings');
    assert.equal(r.code, 0);
    assert.equal(r.result?.result, 'answered between pings');
  });

  test('an error event mid-stream breaks the answer off; the real CLI drops the part it got and asks again', { timeout: 60_000 }, async (t) => {
    const id = unique();
    const wire = await post(`SCENARIO=stream-error ${id}`, { 'x-api-key': TEST_API_KEY });
    assert.equal(wire.status, 200, 'the error comes after a 200, inside the stream');
    const seen = events(wire.text);
    assert.deepEqual(seen.slice(-2), ['content_block_delta', 'error'], seen.join(' '));
    assert.match(wire.text, /"type":"overloaded_error"/);
    const prompt = `SCENARIO=stream-error ${unique()}`;
    const n = api.requests.length;
    const r = await cli(t, prompt);
    assert.equal(r.code, 0);
    assert.equal(r.result?.result, 'answered after 1 broken streams');
    assert.ok(!JSON.stringify(r.lines).includes('breaks off'), 'the broken part is not in the answer');
    // Asked twice: the broken stream, then again (the CLI falls back to a request without a stream).
    assert.deepEqual(api.requests.slice(n).map((q) => q.stream), [true, false]);
  });
});
