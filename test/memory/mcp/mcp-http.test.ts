// A session's memory server over loopback HTTP: the SDK's real Client through Streamable HTTP, raw
// requests for what a client library would never send, and the session as the only source.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../../../config/config.js';
import { createLogger } from '../../../logs/logger.js';
import { MemoryDbError } from '../../../memory/open.js';
import { startMemoryHttp, type MemoryHttp } from '../../../memory/mcp/mcp-http.js';
import { serveSessionMemory } from '../../../memory/mcp/session-server.js';
import { MemoryStore } from '../../../memory/store.js';
import { memoryHttpMcpConfig } from '../../../memory/mcp/mcp-config.js';
import { configYaml, tempDir, waitFor } from '../../helpers.js';

const SESSION = 'sess-http-7f3a';
const CLAIM = 'operator (signed off in person)';

type Served = { store: MemoryStore; srv: MemoryHttp; logs: string[] };

async function serve(t: TestContext, o: { maxBodyBytes?: number; maxWrites?: number } = {}): Promise<Served> {
  const dir = tempDir(t, 'nightshift-mcp-http-');
  const store = MemoryStore.open(path.join(dir, 'memory.db'));
  const logs: string[] = [];
  const logger = createLogger({ redact: (x) => x, level: 'debug', stderr: { write: (l) => void logs.push(l) } });
  const srv = await startMemoryHttp({ store, sessionId: SESSION, logger, version: '9.9.9-test', ...o });
  t.after(async () => {
    await srv.close();
    store.close();
  });
  return { store, srv, logs };
}

async function connect(t: TestContext, url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'nightshift-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

const structured = (r: any) => r.structuredContent as any;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const observeCall = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'observe', arguments: { text, ...extra } } });

function counts(store: MemoryStore): { memories: number; observations: number; audit: number } {
  const s = store.stats();
  return { memories: s.memories, observations: s.observations, audit: store.auditLog().length };
}

// A raw POST through node:http, so a body can be chunked (no Content-Length) or declared huge.
function rawPost(url: string, headers: Record<string, string>, chunks: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    let i = 0;
    const next = () => {
      while (i < chunks.length) if (!req.write(chunks[i++])) return void req.once('drain', next);
      req.end();
    };
    next();
  });
}

// The error of a POST on a fresh connection (fetch could reuse a pooled socket the server just cut).
function freshPostError(url: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent: false }, (res) => {
      res.resume();
      resolve(null);
    });
    req.on('error', (err) => resolve(err));
    req.end('{}');
  });
}

test('over HTTP the real Client lists the twelve tools and observes and queries, with the session as the source', async (t) => {
  const { store, srv } = await serve(t);
  assert.match(srv.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  assert.match(srv.token, /^[0-9a-f]{64}$/);
  const client = await connect(t, srv.url, srv.token);
  assert.equal(client.getServerVersion()?.name, 'nightshift_memory');
  assert.equal(client.getServerVersion()?.version, '9.9.9-test');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), ['believe', 'contradict', 'link', 'observe', 'predict', 'query', 'recall', 'resolve', 'review', 'stats', 'threads', 'wander']);
  // The model is told what `source` means here.
  for (const name of ['observe', 'believe']) {
    const source = (tools.find((x) => x.name === name)!.inputSchema.properties as any).source;
    assert.match(source.description, /claimed-source.*always this session/, name);
  }

  const o = await client.callTool({ name: 'observe', arguments: { text: 'The staging database runs PostgreSQL 16 on port 5433.', category: 'entity' } });
  assert.equal(o.isError, undefined, JSON.stringify(o));
  assert.equal(structured(o).decision, 'novel');
  const q = structured(await client.callTool({ name: 'query', arguments: { query: 'which port does staging PostgreSQL use' } }));
  assert.equal(q.results.length, 1);
  assert.equal(q.results[0].id, structured(o).memory_id);
  assert.deepEqual(q.results[0].sources, [SESSION]);
  assert.deepEqual(counts(store), { memories: 1, observations: 1, audit: 1 });
  assert.ok(srv.stats.requests >= 4, `requests: ${srv.stats.requests}`);
  assert.equal(srv.stats.unauthorized, 0);
});

test('no token, a wrong token or another scheme is a 401 that never reaches a tool, and the store is untouched', async (t) => {
  const { store, srv, logs } = await serve(t);
  const before = counts(store);
  const wrong = srv.token.slice(0, -1) + (srv.token.endsWith('0') ? '1' : '0');
  const cases: Array<[string, Record<string, string>]> = [
    ['no header', {}],
    ['wrong token, same length', { authorization: `Bearer ${wrong}` }],
    ['token with a tail', { authorization: `Bearer ${srv.token}x` }],
    ['half the token', { authorization: `Bearer ${srv.token.slice(0, 32)}` }],
    ['basic scheme', { authorization: `Basic ${srv.token}` }],
    ['bare token', { authorization: srv.token }],
    ['empty bearer', { authorization: 'Bearer ' }],
  ];
  for (const [what, auth] of cases) {
    const res = await fetch(srv.url, { method: 'POST', headers: { ...MCP_HEADERS, ...auth }, body: observeCall(`Written by a stranger: ${what}.`) });
    assert.equal(res.status, 401, what);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer', what);
    assert.equal((await res.json()).error.message, 'Unauthorized', what);
  }
  // Also on another path: nothing about the server is told without the token.
  const other = await fetch(srv.url.replace(/\/mcp$/, '/health'));
  assert.equal(other.status, 401);
  // The SDK client with a wrong token cannot even initialize.
  const transport = new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${wrong}` } } });
  await assert.rejects(new Client({ name: 'stranger', version: '1' }).connect(transport), /401|Unauthorized/);

  assert.equal(srv.stats.unauthorized, cases.length + 2);
  assert.deepEqual(counts(store), before);
  assert.deepEqual(before, { memories: 0, observations: 0, audit: 0 });
  assert.ok(logs.some((l) => l.includes('mcp_http_unauthorized')), 'refusals are logged');
  assert.ok(!logs.some((l) => l.includes(srv.token)), 'the token is never logged');
});

test('a claimed source is kept only as a labelled tag: query and recall name the session, the audit names mcp and the session', async (t) => {
  const { store, srv } = await serve(t);
  const client = await connect(t, srv.url, srv.token);
  const o = structured(await client.callTool({ name: 'observe', arguments: { text: 'The release freeze for v2 starts on 14 March.', source: CLAIM, tags: ['release'] } }));
  assert.equal(o.decision, 'novel');

  const q = structured(await client.callTool({ name: 'query', arguments: { query: 'when does the v2 release freeze start' } }));
  assert.equal(q.results[0].id, o.memory_id);
  assert.deepEqual(q.results[0].sources, [SESSION]);
  assert.ok(!JSON.stringify(q).includes('signed off'), 'the claim is nowhere in a query result');

  const r = structured(await client.callTool({ name: 'recall', arguments: { id: o.memory_id } }));
  assert.deepEqual(r.sources, [SESSION]);
  assert.deepEqual(r.tags, ['release', `claimed-source: ${CLAIM}`]);
  const { tags, ...rest } = r;
  assert.ok(!JSON.stringify(rest).includes('signed off'), 'outside the labelled tag the claim does not appear');

  // The observation row itself and the audit row.
  const line = [...store.exportAll()].find((x) => x.text.startsWith('The release freeze'))!;
  assert.equal(line.source, SESSION);
  const audit = store.auditLog().filter((a) => a.action === 'observe');
  assert.equal(audit.length, 1);
  assert.equal(audit[0].surface, 'mcp');
  assert.equal(audit[0].session_id, SESSION);
  assert.equal((audit[0].after as any).source, SESSION);

  // believe takes a source too: the same rule.
  const b = structured(await client.callTool({ name: 'believe', arguments: { text: 'Friday deploys cause most of the weekend pages.', confidence: 0.8, source: 'the CTO' } }));
  const rb = structured(await client.callTool({ name: 'recall', arguments: { id: b.id } }));
  assert.equal(rb.category, 'belief');
  assert.deepEqual(rb.sources, [SESSION]);
  assert.deepEqual(rb.tags, ['claimed-source: the CTO']);

  // A long claim is cut to fit a tag and marked; the session's own id as source is no claim.
  const long = 'x'.repeat(300);
  const l = structured(await client.callTool({ name: 'observe', arguments: { text: 'Grafana alerts for disk usage fire at 85 percent.', source: `${long}\n\tend` } }));
  const rl = structured(await client.callTool({ name: 'recall', arguments: { id: l.memory_id } }));
  assert.equal(rl.tags.length, 1);
  assert.equal(rl.tags[0].length, 100);
  assert.equal(rl.tags[0], `claimed-source: ${'x'.repeat(83)}…`);
  const own = structured(await client.callTool({ name: 'observe', arguments: { text: 'The VPN certificate expires in November.', source: SESSION } }));
  assert.deepEqual(structured(await client.callTool({ name: 'recall', arguments: { id: own.memory_id } })).tags, []);

  // predict and threads take no source at all.
  const p = await client.callTool({ name: 'predict', arguments: { text: 'The migration finishes by Friday.', source: 'someone' } });
  assert.equal(p.isError, true);
  assert.match((p.content as any)[0].text, /source/);
  const th = await client.callTool({ name: 'threads', arguments: { action: 'open', text: 'Why do builds slow down on Mondays?', source: 'someone' } });
  assert.equal(th.isError, true);
  for (const x of [...store.exportAll()]) assert.equal(x.source, SESSION, x.text);
});

test('malformed and oversized bodies, other paths and methods get error statuses, and the next request is served', async (t) => {
  const { store, srv } = await serve(t, { maxBodyBytes: 64 * 1024 });
  const auth = { authorization: `Bearer ${srv.token}` };

  const bad = await fetch(srv.url, { method: 'POST', headers: { ...MCP_HEADERS, ...auth }, body: '{"jsonrpc":"2.0","id":1,"method":' });
  assert.equal(bad.status, 400);
  assert.deepEqual(await bad.json(), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null });
  const empty = await fetch(srv.url, { method: 'POST', headers: { ...MCP_HEADERS, ...auth }, body: '' });
  assert.equal(empty.status, 400);
  assert.equal((await empty.json()).error.code, -32700);
  // JSON, but not JSON-RPC: the SDK's own parse error.
  const notRpc = await fetch(srv.url, { method: 'POST', headers: { ...MCP_HEADERS, ...auth }, body: '{"hello":"world"}' });
  assert.equal(notRpc.status, 400);
  assert.equal((await notRpc.json()).error.code, -32700);

  // Over the bound with a Content-Length, and chunked without one.
  const big = observeCall('y'.repeat(100 * 1024));
  const declared = await fetch(srv.url, { method: 'POST', headers: { ...MCP_HEADERS, ...auth }, body: big });
  assert.equal(declared.status, 413);
  assert.match((await declared.json()).error.message, /over 65536 bytes/);
  const chunked = await rawPost(srv.url, { ...MCP_HEADERS, ...auth }, Array.from({ length: 40 }, () => Buffer.alloc(4096, 0x20)));
  assert.equal(chunked.status, 413);

  const notFound = await fetch(srv.url.replace(/\/mcp$/, '/admin'), { method: 'POST', headers: { ...MCP_HEADERS, ...auth }, body: observeCall('hello') });
  assert.equal(notFound.status, 404);
  const get = await fetch(srv.url, { headers: { accept: 'text/event-stream', ...auth } });
  assert.equal(get.status, 405);

  assert.deepEqual(counts(store), { memories: 0, observations: 0, audit: 0 });
  // The JSON that is not JSON-RPC was the SDK's to refuse.
  assert.equal(srv.stats.rejected, 6);
  // Still serving, on a fresh client.
  const client = await connect(t, srv.url, srv.token);
  assert.equal((await client.listTools()).tools.length, 12);
  const o = structured(await client.callTool({ name: 'observe', arguments: { text: 'Backups run at 02:00 every night.' } }));
  assert.equal(o.decision, 'novel');
  assert.equal(srv.stats.errors, 0);
});

test('the default bound is 4 MiB', async (t) => {
  const { store, srv } = await serve(t);
  const headers = { ...MCP_HEADERS, authorization: `Bearer ${srv.token}` };
  const over = await fetch(srv.url, { method: 'POST', headers, body: observeCall('z'.repeat(4 * 1024 * 1024)) });
  assert.equal(over.status, 413);
  assert.match((await over.json()).error.message, /over 4194304 bytes/);
  // Just under: it reaches the tool, which refuses text over 20,000 characters as a tool error.
  const under = await fetch(srv.url, { method: 'POST', headers, body: observeCall('z'.repeat(3 * 1024 * 1024)) });
  assert.equal(under.status, 200);
  assert.match(JSON.stringify(await under.json()), /Invalid arguments for `observe`: text/);
  assert.equal(counts(store).observations, 0);
});

test('close() cuts open connections, and afterwards a request is refused', async (t) => {
  const { srv } = await serve(t);
  const client = await connect(t, srv.url, srv.token);
  assert.equal((await client.listTools()).tools.length, 12);
  // A request still arriving (half its body sent): close() must not wait for it.
  const { port } = new URL(srv.url);
  const slow = net.connect(Number(port), '127.0.0.1');
  await new Promise((r) => slow.once('connect', r));
  const before = srv.stats.requests;
  slow.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${srv.token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`);
  const cut = new Promise((r) => slow.once('close', r));
  // The server is reading its body: its handler has begun.
  await waitFor(() => srv.stats.requests > before, 5000, 'the server to take the slow request');
  const closing = await Promise.race([srv.close().then(() => 'closed'), new Promise((r) => setTimeout(r, 3000, 'still waiting'))]);
  assert.equal(closing, 'closed');
  await srv.close(); // twice is fine
  await cut;
  await assert.rejects(client.listTools());
  assert.equal((await freshPostError(srv.url))?.code, 'ECONNREFUSED');
});

test('serveSessionMemory opens the store from the config, serves it, and close() stops the server and closes the store', async (t) => {
  const dir = tempDir(t, 'nightshift-session-memory-');
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
  const config = loadConfig(path.join(dir, 'nightshift.yaml'));
  const logs: string[] = [];
  const logger = createLogger({ redact: (x) => x, level: 'debug', stderr: { write: (l) => void logs.push(l) } });
  const mem = await serveSessionMemory(config, { PATH: process.env.PATH }, logger, SESSION, '1.2.3');
  assert.deepEqual(JSON.parse(mem.mcpConfig), { mcpServers: { nightshift_memory: { type: 'http', url: mem.url, headers: { Authorization: `Bearer ${mem.token}` } } } });
  assert.equal(mem.mcpConfig, memoryHttpMcpConfig(mem.url, mem.token));
  const client = await connect(t, mem.url, mem.token);
  await client.callTool({ name: 'observe', arguments: { text: 'The office printer is on the third floor.', source: CLAIM } });
  await mem.close();
  assert.equal((await freshPostError(mem.url))?.code, 'ECONNREFUSED');
  // Closed: another process may open it, and the observation is there with the session as source.
  const store = MemoryStore.open(path.join(dir, 'state', 'memory.db'));
  try {
    const lines = [...store.exportAll()];
    assert.deepEqual(lines.map((l) => [l.text, l.source, l.tags]), [['The office printer is on the third floor.', SESSION, [`claimed-source: ${CLAIM}`]]]);
  } finally {
    store.close();
  }

  // A file that is not a memory store: a clear error, and nothing left listening.
  const other = tempDir(t, 'nightshift-session-memory-bad-');
  for (const d of ['vault', 'prompts', 'state']) fs.mkdirSync(path.join(other, d));
  fs.writeFileSync(path.join(other, 'nightshift.yaml'), configYaml());
  fs.writeFileSync(path.join(other, 'state', 'memory.db'), 'this is not a database, just text that is long enough to be read as a header '.repeat(20));
  await assert.rejects(serveSessionMemory(loadConfig(path.join(other, 'nightshift.yaml')), {}, logger, 'sess-bad', '1.2.3'), (err: unknown) => {
    assert.ok(err instanceof MemoryDbError, String(err));
    assert.match((err as Error).message, /^Cannot open the memory store for session sess-bad: /);
    return true;
  });
});

// Issue 26: one session wrote 954 memories of 20 kB in 40 s.
test('a session\'s writes stop at its bound: the next writing call is refused and the store untouched, reads still answer', async (t) => {
  const { store, srv } = await serve(t, { maxWrites: 3 });
  const client = await connect(t, srv.url, srv.token);
  for (let i = 0; i < 3; i++) {
    const o = await client.callTool({ name: 'observe', arguments: { text: `Fact number ${i} about the ${['staging', 'backup', 'billing'][i]} service.` } });
    assert.equal(o.isError, undefined, JSON.stringify(o));
  }
  const before = counts(store);
  const over = await client.callTool({ name: 'observe', arguments: { text: 'One fact too many about the mail relay.' } });
  assert.equal(over.isError, true);
  assert.match(JSON.stringify(over.content), /limits\.memory_writes/);
  const link = await client.callTool({ name: 'link', arguments: { from: 1, to: 2, type: 'relates_to' } });
  assert.match(JSON.stringify(link.content), /limits\.memory_writes/, 'every writing tool counts');
  assert.deepEqual(counts(store), before);
  const q = await client.callTool({ name: 'query', arguments: { query: 'staging service' } });
  assert.equal(q.isError, undefined, 'reading is not bounded');
  // Control: without a bound the fourth write lands.
  const open = await serve(t);
  const c2 = await connect(t, open.srv.url, open.srv.token);
  for (let i = 0; i < 4; i++) await c2.callTool({ name: 'observe', arguments: { text: `Unbounded fact ${i} about the ${['staging', 'backup', 'billing', 'mail'][i]} host.` } });
  assert.equal(counts(open.store).memories, 4);
});

// Issue 28: the tool list rides on every request of every session.
test('the memory tools say their contract in few bytes: a budget per tool and in all, schemas without the server\'s bounds', async (t) => {
  const { srv } = await serve(t);
  const client = await connect(t, srv.url, srv.token);
  const { tools } = await client.listTools();
  const bytes = (x: any) => JSON.stringify({ name: x.name, description: x.description, input_schema: x.inputSchema }).length;
  for (const x of tools) {
    assert.ok(bytes(x) <= 900, `${x.name}: ${bytes(x)} bytes`);
    assert.ok(!/\.\s+\S/.test(x.description!.replace(/e\.g\.|i\.e\./g, '')), `${x.name}: one sentence: ${x.description}`);
  }
  const total = tools.reduce((n, x) => n + bytes(x), 0);
  assert.ok(total <= 6000, `all tools: ${total} bytes`);
  const observe = tools.find((x) => x.name === 'observe')!.inputSchema as any;
  assert.deepEqual(observe.required, ['text']);
  assert.ok(Array.isArray(observe.properties.category.enum), 'enums stay');
  assert.equal(JSON.stringify(observe).includes('maxLength'), false, 'bounds are the server\'s');
  // The server still enforces what the list leaves out.
  const long = await client.callTool({ name: 'observe', arguments: { text: 'x'.repeat(20_001) } });
  assert.equal(long.isError, true);
});

// 2.1.332 opens every session with a `server/discover` probe under MCP 2026-07-28, which the SDK
// answers 400 before the CLI falls back to initialize: no warning in every session's log.
test('a newer protocol version the client tries first is answered 400 and logged at debug, not warned of', async (t) => {
  const { srv, logs } = await serve(t);
  const probe = JSON.stringify({ jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: {} });
  const r = await rawPost(srv.url, { ...MCP_HEADERS, authorization: `Bearer ${srv.token}`, 'mcp-protocol-version': '2026-07-28' }, [Buffer.from(probe)]);
  assert.equal(r.status, 400);
  assert.match(r.body, /Unsupported protocol version: 2026-07-28/);
  const lines = logs.map((l) => JSON.parse(l) as { level: number; event?: string });
  assert.deepEqual(lines.filter((l) => l.event === 'mcp_version_refused').map((l) => l.level), [20]);
  assert.equal(lines.filter((l) => l.level >= 40).length, 0, logs.join(''));
  // Control: another request the transport refuses is still a warning.
  const bad = await rawPost(srv.url, { 'content-type': 'application/json', accept: 'text/html', authorization: `Bearer ${srv.token}` }, [Buffer.from(observeCall('x'))]);
  assert.equal(bad.status, 406);
  assert.ok(logs.map((l) => JSON.parse(l) as { level: number; event?: string }).some((l) => l.event === 'mcp_error' && l.level === 40), logs.join(''));
});
