// `nightshift mcp` through the SDK's real Client over stdio, and through raw stdin for the
// malformed requests a client library would never send.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MemoryStore } from '../../../memory/store.js';
import { BIN, configYaml, tempDir } from '../../helpers.js';

type Ws = { dir: string; config: string; db: string; env: Record<string, string> };

function memoryWorkspace(t: TestContext): Ws {
  const dir = tempDir(t, 'nightshift-mcp-');
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  const config = path.join(dir, 'nightshift.yaml');
  fs.writeFileSync(config, configYaml());
  const env = { PATH: process.env.PATH ?? '', HOME: dir, NIGHTSHIFT_SESSION_ID: 'sess-mcp-test' };
  return { dir, config, db: path.join(dir, 'state', 'memory.db'), env };
}

async function connect(t: TestContext, ws: Ws): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--config', ws.config], env: ws.env, cwd: ws.dir, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (c) => (stderr += c));
  const client = new Client({ name: 'nightshift-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return { client, stderr: () => stderr };
}

const structured = (r: any) => r.structuredContent as any;

test('lists the twelve tools, each with a title, described input schema, output schema and hints', async (t) => {
  const { client } = await connect(t, memoryWorkspace(t));
  assert.equal(client.getServerVersion()?.name, 'nightshift_memory');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), ['believe', 'contradict', 'link', 'observe', 'predict', 'query', 'recall', 'resolve', 'review', 'stats', 'threads', 'wander']);
  for (const tool of tools) {
    assert.ok(tool.title && tool.description, `${tool.name} has a title and description`);
    assert.ok(tool.outputSchema, `${tool.name} has an output schema`);
    for (const [k, v] of Object.entries(tool.inputSchema.properties ?? {})) assert.ok((v as any).description, `${tool.name}.${k} is described`);
    const readOnly = ['query', 'recall', 'stats', 'wander'].includes(tool.name);
    assert.equal(tool.annotations?.readOnlyHint, readOnly, `${tool.name} readOnlyHint`);
    if (!readOnly) assert.equal(tool.annotations?.destructiveHint, false, `${tool.name} destructiveHint`);
  }
  const query = tools.find((x) => x.name === 'query')!;
  assert.deepEqual(query.inputSchema.required, ['query']);
});

test('observe, query, recall, link and stats answer with structured content and its JSON as text', async (t) => {
  const ws = memoryWorkspace(t);
  const { client } = await connect(t, ws);
  const a = await client.callTool({ name: 'observe', arguments: { text: 'The staging database runs PostgreSQL 16 on port 5433.', tags: ['infra'], category: 'entity' } });
  assert.equal(a.isError, undefined, JSON.stringify(a));
  const ra = structured(a);
  assert.equal(ra.decision, 'novel');
  assert.deepEqual(JSON.parse((a.content as any)[0].text), ra);
  const b = await client.callTool({ name: 'observe', arguments: { text: 'Backups of the wiki are uploaded to an S3 bucket every night at 02:00.', source: 'https://example.test/runbook' } });
  const rb = structured(b);
  assert.notEqual(rb.memory_id, ra.memory_id);

  const q = await client.callTool({ name: 'query', arguments: { query: 'which port does staging PostgreSQL use', limit: 5 } });
  const results = structured(q).results;
  assert.ok(results.length >= 1 && results.length <= 5);
  assert.deepEqual(Object.keys(results[0]).sort(), ['category', 'faded', 'id', 'score', 'sources', 'superseded', 'text']);
  assert.equal(results[0].id, ra.memory_id);
  assert.deepEqual(results[0].sources, ['sess-mcp-test'], 'no source given: the session id');
  assert.deepEqual(JSON.parse((q.content as any)[0].text), structured(q));

  const l = await client.callTool({ name: 'link', arguments: { from: rb.memory_id, to: ra.memory_id, type: 'relates_to', weight: 0.7 } });
  assert.deepEqual(structured(l), { from: rb.memory_id, to: ra.memory_id, type: 'relates_to', weight: 0.7 });
  const again = await client.callTool({ name: 'link', arguments: { from: rb.memory_id, to: ra.memory_id, type: 'relates_to' } });
  assert.equal(structured(again).weight, 0.5, 'default weight');

  const r = structured(await client.callTool({ name: 'recall', arguments: { id: rb.memory_id } }));
  assert.equal(r.text, 'Backups of the wiki are uploaded to an S3 bucket every night at 02:00.');
  assert.deepEqual(r.sources, ['https://example.test/runbook']);
  assert.ok(r.edges.some((e: any) => e.type === 'relates_to' && e.to === ra.memory_id && e.direction === 'out'));

  const s = structured(await client.callTool({ name: 'stats', arguments: {} }));
  assert.equal(s.memories, 2);
  assert.equal(s.observations, 2);
  assert.equal(s.file, ws.db);

  const store = MemoryStore.open(ws.db);
  try {
    const audit = store.auditLog().filter((x) => x.surface === 'mcp');
    assert.ok(audit.length >= 4, 'two observations and two links are audited as mcp');
    assert.ok(audit.every((x) => x.session_id === 'sess-mcp-test'));
  } finally {
    store.close();
  }
});

test('bad arguments and refusals are isError results that say what to fix', async (t) => {
  const ws = memoryWorkspace(t);
  const { client } = await connect(t, ws);
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['query', { query: 5 }, /query: .*string/i],
    ['query', { query: 'x', limit: 'ten' }, /limit: .*number/i],
    ['query', { query: 'x', limit: 0 }, /limit/],
    ['query', {}, /query: /],
    ['observe', { text: '' }, /text: /],
    ['observe', { text: 'ok', salience: 3 }, /salience: /],
    ['observe', { text: 'ok', category: 'gossip' }, /category: /],
    ['observe', { text: 'ok', tgas: ['typo'] }, /tgas/],
    ['recall', { id: 'seven' }, /id: /],
    ['link', { from: 1, to: 2, type: 'likes' }, /type: /],
  ];
  for (const [name, args, message] of cases) {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}`);
    const text = (r.content as any)[0].text as string;
    assert.match(text, /^Invalid arguments for `\w+`/);
    assert.match(text, message);
  }
  const missing = await client.callTool({ name: 'recall', arguments: { id: 999 } });
  assert.equal(missing.isError, true);
  assert.match((missing.content as any)[0].text, /NOT_FOUND: .*999/);
  const self = await client.callTool({ name: 'link', arguments: { from: 1, to: 1, type: 'supports' } });
  assert.equal(self.isError, true);

  const store = MemoryStore.open(ws.db);
  try {
    store.tombstone('The moon is made of cheese.', 'disproved by the 2026 survey', { surface: 'cli' });
  } finally {
    store.close();
  }
  const refused = await client.callTool({ name: 'observe', arguments: { text: 'the moon is made of cheese' } });
  assert.equal(refused.isError, true);
  assert.match((refused.content as any)[0].text, /^TOMBSTONED: .*tombstone [0-9a-f]{12}: disproved by the 2026 survey/);
  // Cyrillic а and о for Latin a and o: the confusables table (loaded at its first use in the bundle) maps them back.
  const twin = await client.callTool({ name: 'observe', arguments: { text: 'the m\u043e\u043en is m\u0430de of cheese' } });
  assert.equal(twin.isError, true, JSON.stringify(twin));
  assert.match((twin.content as any)[0].text, /^TOMBSTONED: /);
});

test('an unknown tool and an unknown method are JSON-RPC errors', async (t) => {
  const { client } = await connect(t, memoryWorkspace(t));
  await assert.rejects(client.callTool({ name: 'forget_everything', arguments: {} }), (err: unknown) => {
    assert.ok(err instanceof McpError);
    assert.equal(err.code, -32602);
    assert.match(err.message, /Unknown tool: forget_everything\. Tools: observe, query, recall, link, stats, believe, contradict, predict, resolve, review, threads, wander/);
    return true;
  });
  await assert.rejects(client.request({ method: 'memory/dump', params: {} }, z.object({}).loose()), (err: unknown) => {
    assert.ok(err instanceof McpError);
    assert.equal(err.code, -32601);
    return true;
  });
  // Still serving.
  assert.equal((await client.listTools()).tools.length, 12);
});

// 100 lines no client library would send: not JSON, JSON that is not JSON-RPC, and JSON-RPC with
// params of the wrong shape.
function malformed(): string[] {
  const lines: string[] = [];
  const req = (id: number, method: string, params?: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
  const garbage = ['not json', '{', '}}}', '{"jsonrpc":"2.0",', 'null', '42', '"a string"', 'true', '[]', '[1,2,3]', '{}', '\u0000\u0001\u0002', 'Ω≈ç√∫', '{"a":1}{"b":2}', '[' .repeat(10000)];
  lines.push(...garbage);
  const invalid = [
    { jsonrpc: '1.0', id: 1, method: 'tools/list' },
    { id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: {}, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 5 },
    { jsonrpc: '2.0', id: 4 },
    { jsonrpc: '2.0', id: 5, result: 'x', error: { code: 1 } },
    { jsonrpc: '2.0', method: ['tools/call'] },
    [{ jsonrpc: '2.0', id: 6, method: 'tools/list' }],
  ];
  lines.push(...invalid.map((x) => JSON.stringify(x)));
  let id = 1000;
  const wrong: Array<[string, unknown]> = [
    ['tools/call', { name: 123 }],
    ['tools/call', 'params as a string'],
    ['tools/call', [1, 2]],
    ['tools/call', { name: 'query', arguments: 'not an object' }],
    ['tools/call', { name: 'query', arguments: { query: 5 } }],
    ['tools/call', { name: 'query', arguments: { query: 'x', limit: -3 } }],
    ['tools/call', { name: 'observe', arguments: { text: ['a'] } }],
    ['tools/call', { name: 'observe', arguments: { text: 'x'.repeat(30_000) } }],
    ['tools/call', { name: 'recall', arguments: { id: -1 } }],
    ['tools/call', { name: 'recall', arguments: { id: 1e300 } }],
    ['tools/call', { name: 'link', arguments: { from: 'a', to: null, type: 1 } }],
    ['tools/call', { name: 'stats', arguments: { extra: true } }],
    ['tools/call', { name: '../../etc/passwd' }],
    ['tools/list', { cursor: 5 }],
    ['initialize', { protocolVersion: 7 }],
    ['ping', 'x'],
    ['resources/list', {}],
    ['prompts/get', { name: 'x' }],
    ['no/such/method', {}],
    ['', {}],
  ];
  while (lines.length < 100) {
    const [method, params] = wrong[lines.length % wrong.length];
    lines.push(req(id++, method, params));
  }
  return lines.slice(0, 100);
}

test('survives 100 malformed requests, still answers, and writes only JSON-RPC to stdout', async (t) => {
  const ws = memoryWorkspace(t);
  const child = spawn(process.execPath, [BIN, 'mcp', '--config', ws.config], { env: ws.env, cwd: ws.dir, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  child.stdin.on('error', () => {}); // a failed test kills the child mid-write
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const responses = () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const waitFor = async (id: number) => {
    const end = Date.now() + 15_000;
    while (!responses().some((m) => m.id === id)) {
      if (Date.now() > end || child.exitCode !== null) throw new Error(`no answer to ${id} (exit ${child.exitCode}); stderr:\n${stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return responses().find((m) => m.id === id);
  };
  const send = (line: string) => child.stdin.write(`${line}\n`);

  send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
  assert.equal((await waitFor(1)).result.serverInfo.name, 'nightshift_memory');
  send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));

  const bad = malformed();
  assert.equal(bad.length, 100);
  for (const line of bad) send(line);
  // A line over the SDK's 10 MB buffer (which would close its transport) and the guard's 4 MB limit, sent in pieces with no newline until the end.
  const big = `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"observe","arguments":{"text":"${'y'.repeat(11 * 1024 * 1024)}"}}}`;
  for (let i = 0; i < big.length; i += 256 * 1024) child.stdin.write(big.slice(i, i + 256 * 1024));
  child.stdin.write('\n');

  send(JSON.stringify({ jsonrpc: '2.0', id: 9001, method: 'tools/call', params: { name: 'observe', arguments: { text: 'Still standing after the garbage.' } } }));
  const observed = await waitFor(9001);
  assert.equal(observed.result.isError, undefined, JSON.stringify(observed));
  assert.equal(observed.result.structuredContent.decision, 'novel');
  send(JSON.stringify({ jsonrpc: '2.0', id: 9002, method: 'tools/call', params: { name: 'query', arguments: { query: 'garbage standing' } } }));
  const found = await waitFor(9002);
  assert.equal(found.result.structuredContent.results[0].text, 'Still standing after the garbage.');
  assert.equal(child.exitCode, null, 'still running');

  // Every stdout line is one JSON-RPC 2.0 message; every request with an id got an answer.
  const lines = stdout.split('\n');
  assert.equal(lines.pop(), '', 'stdout ends with a newline');
  for (const line of lines) {
    const m = JSON.parse(line);
    assert.equal(m.jsonrpc, '2.0', line.slice(0, 200));
    assert.ok('result' in m || 'error' in m, line.slice(0, 200));
  }
  const ids = new Set(responses().map((m) => m.id));
  for (let id = 1000; id < 1000 + 100 - 23; id++) assert.ok(ids.has(id), `answered request ${id}`);
  const parseErrors = responses().filter((m) => m.error?.code === -32700);
  assert.ok(parseErrors.length >= 8, `parse errors answered (${parseErrors.length})`);
  assert.ok(responses().some((m) => m.error?.code === -32600 && m.error.message.includes('longer than')), 'the oversized line is refused');

  child.stdin.end();
  const code = await new Promise((r) => child.on('close', r));
  assert.equal(code, 0, stderr.slice(-2000));
});

test('answers what was already sent when stdin closes, then exits 0; SIGTERM exits 0 too', async (t) => {
  const ws = memoryWorkspace(t);
  const run = (input: string, signal?: NodeJS.Signals) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'mcp', '--config', ws.config], { env: ws.env, cwd: ws.dir, stdio: ['pipe', 'pipe', 'pipe'] });
      t.after(() => child.kill('SIGKILL'));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => {
        stdout += c;
        if (signal && stdout.includes('"id":1')) child.kill(signal);
      });
      child.stderr.on('data', (c) => (stderr += c));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      if (signal) child.stdin.write(input);
      else child.stdin.end(input);
    });
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } });
  const call = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'observe', arguments: { text: 'Piped in and closed at once.' } } });
  const piped = await run(`${init}\n${call}\n`);
  assert.equal(piped.code, 0, piped.stderr);
  const answers = piped.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(answers.map((a) => a.id), [1, 2]);
  assert.equal(answers[1].result.structuredContent.decision, 'novel');

  const stopped = await run(`${init}\n`, 'SIGTERM');
  assert.equal(stopped.code, 0, stopped.stderr);
});

test('with Gemini configured, a new observation is checked for contradictions as it arrives (a candidate, never applied)', async (t) => {
  const { startFakeGemini } = await import('../../fake-gemini.js');
  const fake = await startFakeGemini('ok');
  t.after(() => fake.close());
  // The loopback judge says every pair it is shown contradicts.
  fake.generate = (body) => {
    const prompt: string = body.contents[0].parts[0].text;
    return JSON.stringify([...prompt.matchAll(/^(\d+)\. A: /gm)].map((m) => ({ pair: Number(m[1]), contradicts: true, confidence: 0.8, reason: 'the judge says so' })));
  };
  const ws = memoryWorkspace(t);
  fs.writeFileSync(ws.config, configYaml({ top: `gemini:\n  base_url: ${fake.url}\n` }));
  const { client } = await connect(t, { ...ws, env: { ...ws.env, GEMINI_API_KEY: 'fake-gemini-key-for-tests' } });
  const first = structured(await client.callTool({ name: 'observe', arguments: { text: 'The weekly backup of the vault runs on Fridays at noon' } })).memory_id;
  // Its confidence before it has a neighbour to be judged against: what both must still have.
  const initial = structured(await client.callTool({ name: 'recall', arguments: { id: first } })).confidence;
  assert.equal(typeof initial, 'number');
  await client.callTool({ name: 'observe', arguments: { text: 'The weekly backup of the vault runs on Sundays at dawn' } });
  const judged = () => fake.requests.some((r) => r.action === 'generateContent' && JSON.stringify(r.body).includes('Sundays at dawn'));
  for (let i = 0; i < 100 && !judged(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(judged(), 'Gemini was asked about the new memory and its neighbour');
  await client.close();
  const store = MemoryStore.open(ws.db);
  t.after(() => store.close());
  const c = store.contradictionCandidates('candidate', 10);
  assert.ok(c.some((x) => x.method === 'gemini'), JSON.stringify(c));
  // Recorded with an audit row naming the surface and the session, like every other mutation.
  assert.ok(store.auditLog().some((r) => r.action === 'candidate' && r.surface === 'mcp' && r.session_id === 'sess-mcp-test' && (r.after as any).method === 'gemini'));
  // A candidate only: neither memory lost confidence nor gained a contradicts edge. (Tried: a
  // recordCandidate that also lowers the newer memory's confidence by a third fails this, 0.333
  // for 0.5.)
  const pair = c.find((x) => x.method === 'gemini')!;
  assert.ok([pair.a, pair.b].includes(first), 'the pair is the two observations');
  for (const id of [pair.a, pair.b]) {
    const m = store.recall(id);
    assert.equal(m.confidence, initial, `memory ${id}'s confidence`);
    assert.deepEqual(m.edges.filter((e) => e.type === 'contradicts'), [], `memory ${id}'s edges`);
  }
});
