// When a memory held (issue 30, part 3): valid_from apart from recorded-at, valid_to when it is
// superseded, and queries as of a time that answer with what held then, never what began later.
// Also the migration of a store written before it (schema 8) to the version that has it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLogger } from '../../../logs/logger.js';
import { startMemoryHttp } from '../../../memory/mcp/mcp-http.js';
import { SCHEMA_VERSION, openDatabase } from '../../../memory/store/schema.js';
import { MemoryStore } from '../../../memory/store.js';
import { parseImportLine } from '../../../memory/text/jsonl.js';
import type { Actor } from '../../../memory/types.js';
import { configYaml, nightshift, tempDir } from '../../helpers.js';

const CLI: Actor = { surface: 'cli' };
const NOW = new Date('2026-12-01T10:00:00Z');

function open(t: TestContext): MemoryStore {
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => NOW });
  t.after(() => s.close());
  return s;
}

const ids = (rs: Array<{ id: number }>) => rs.map((r) => r.id);

test('valid_from is apart from recorded-at: given, else the observation time; an import line keeps its conversation date', async (t) => {
  const s = open(t);
  const given = await s.observe({ text: 'Mira moved to Lisbon for the new job', valid_from: '2024-05-01' }, CLI);
  const r = s.recall(given.memory_id);
  assert.equal(r.valid_from, '2024-05-01T00:00:00.000Z');
  assert.equal(r.created_at, NOW.toISOString(), 'recorded now');
  const plain = await s.observe({ text: 'The kettle in room four is broken' }, CLI);
  assert.equal(s.recall(plain.memory_id).valid_from, NOW.toISOString());
  const line = parseImportLine(JSON.stringify({ text: 'Caroline: I went to the support group yesterday', source: 'conv-1', created_at: '2023-05-08T13:56:00Z' }));
  assert.ok(line?.ok);
  const [imported] = await s.observeMany([line.input], { surface: 'import', sessionId: null });
  assert.equal(s.recall((imported as { memory_id: number }).memory_id).valid_from, '2023-05-08T13:56:00.000Z');
  await assert.rejects(async () => s.observe({ text: 'x y z', valid_from: 'last spring' }, CLI), /valid_from/);
});

test('as of a time, a query answers with what held then: the superseded fact before the newer began, the newer after, never what began later', async (t) => {
  const s = open(t);
  const paris = (await s.observe({ text: 'Mira lives in Paris near the canal', valid_from: '2020-02-01T00:00:00Z' }, CLI)).memory_id;
  const berlin = (await s.observe({ text: 'Mira lives in Berlin near the river', valid_from: '2023-09-01T00:00:00Z' }, CLI)).memory_id;
  s.supersede(paris, berlin, CLI);
  assert.equal(s.recall(paris).valid_to, '2023-09-01T00:00:00.000Z', 'held until the newer began');
  assert.equal(s.recall(berlin).valid_to, null);
  const q = 'where does Mira live';

  // Now: the newer; the older only when asked, labelled superseded.
  assert.deepEqual(ids(await s.query(q)), [berlin]);
  assert.deepEqual((await s.query(q, { include_faded: true })).map((r) => [r.id, r.superseded]).sort(), [[paris, true], [berlin, false]].sort());
  // 2021: Paris held, Berlin had not begun (not even with include_faded).
  const then = await s.query(q, { as_of: '2021-06-01' });
  assert.deepEqual(ids(then), [paris]);
  assert.equal(then[0].superseded, false, 'it was not superseded then');
  assert.deepEqual(ids(await s.query(q, { as_of: '2021-06-01', include_faded: true })), [paris]);
  // 2024: Berlin; Paris was superseded by then.
  assert.deepEqual(ids(await s.query(q, { as_of: '2024-01-01T00:00:00Z' })), [berlin]);
  // Before either began: nothing.
  assert.deepEqual(ids(await s.query(q, { as_of: '2019-01-01' })), []);
  await assert.rejects(async () => s.query(q, { as_of: 'yesterday-ish' }), /as_of/);
});

test('as of a time, a memory that began later carries no activation either: a walk stops at it', async (t) => {
  const s = open(t);
  const seed = (await s.observe({ text: 'The orchard ladder is kept in the barn', valid_from: '2020-01-01' }, CLI)).memory_id;
  const later = (await s.observe({ text: 'A new shed was built beside the pond', valid_from: '2025-01-01' }, CLI)).memory_id;
  const beyond = (await s.observe({ text: 'The tractor keys hang on a red hook', valid_from: '2020-01-01' }, CLI)).memory_id;
  s.link(seed, later, 'relates_to', 1, CLI);
  s.link(later, beyond, 'relates_to', 1, CLI);
  assert.ok(ids(await s.query('orchard ladder barn')).includes(beyond), 'control: now the walk reaches it');
  const then = ids(await s.query('orchard ladder barn', { as_of: '2022-01-01' }));
  assert.ok(then.includes(seed));
  assert.ok(!then.includes(later) && !then.includes(beyond));
});

test('a merge keeps the earliest valid_from its evidence gives', async (t) => {
  const s = open(t);
  const a = await s.observe({ text: 'The backup job runs at two in the morning every night', valid_from: '2025-03-01' }, CLI);
  const b = await s.observe({ text: 'The backup job runs at two in the morning every night', valid_from: '2024-11-01' }, CLI);
  assert.equal(b.decision, 'merge');
  assert.equal(s.recall(a.memory_id).valid_from, '2024-11-01T00:00:00.000Z');
});

test('a store of schema 8 migrates: valid_from from its first observation, valid_to from what superseded it, every memory shared', async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const v8 = openDatabase(file, 8);
  assert.equal(v8.pragma('user_version', { simple: true }), 8);
  const at = (d: string) => `${d}T12:00:00.000Z`;
  const mem = v8.prepare("INSERT INTO memories (id, text, category, created_at, updated_at, superseded_by) VALUES (?, ?, 'observation', ?, ?, ?)");
  const obs = v8.prepare("INSERT INTO observations (text, source, created_at, salience, prediction_error, decision, memory_id, session_id) VALUES (?, 'old', ?, 0.5, 1, 'novel', ?, ?)");
  mem.run(2, 'Mira lives in Berlin near the river', at('2023-09-01'), at('2023-09-01'), null);
  mem.run(1, 'Mira lives in Paris near the canal', at('2020-02-01'), at('2023-09-01'), 2);
  obs.run('Mira lives in Paris near the canal', at('2020-02-01'), 1, 'S-alpha-old');
  obs.run('Mira lives in Berlin near the river', at('2023-09-01'), 2, 'S-beta-old');
  v8.close();

  const s = MemoryStore.open(file, { now: () => NOW });
  t.after(() => s.close());
  assert.equal(s.stats().schema_version, SCHEMA_VERSION);
  assert.equal(SCHEMA_VERSION, 10);
  const paris = s.recall(1);
  assert.deepEqual([paris.valid_from, paris.valid_to, paris.scope], [at('2020-02-01'), at('2023-09-01'), null]);
  assert.deepEqual([s.recall(2).valid_from, s.recall(2).valid_to, s.recall(2).scope], [at('2023-09-01'), null, null]);
  // What every session saw before, each agent still sees; and as-of works on the old rows.
  assert.deepEqual(ids(await s.as('beta').query('where does Mira live', { as_of: '2021-01-01' })), [1]);
  assert.deepEqual(ids(await s.as('alpha').query('where does Mira live')), [2]);
});

test('over MCP, observe takes valid_from and shared, and query takes as_of', async (t) => {
  const store = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { agent: 'alpha' });
  const srv = await startMemoryHttp({ store, sessionId: 'S-when', agent: 'alpha', logger: createLogger({ redact: (x) => x, level: 'warn', stderr: { write: () => {} } }), version: '0' });
  t.after(async () => {
    await srv.close();
    store.close();
  });
  const client = new Client({ name: 't', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${srv.token}` } } }));
  t.after(() => client.close());
  const out = (r: any) => r.structuredContent as any;
  const old = out(await client.callTool({ name: 'observe', arguments: { text: 'The team standup is at nine', valid_from: '2024-01-01T00:00:00Z' } })).memory_id;
  const shared = out(await client.callTool({ name: 'observe', arguments: { text: 'The office closes at six on Fridays', shared: true } })).memory_id;
  assert.equal(store.recall(old).valid_from, '2024-01-01T00:00:00.000Z');
  assert.equal(store.recall(old).scope, 'alpha');
  assert.equal(store.recall(shared).scope, null);
  assert.deepEqual(out(await client.callTool({ name: 'query', arguments: { query: 'team standup', as_of: '2023-06-01' } })).results, []);
  assert.equal(out(await client.callTool({ name: 'query', arguments: { query: 'team standup', as_of: '2024-06-01' } })).results[0].id, old);
  const bad = await client.callTool({ name: 'query', arguments: { query: 'team standup', as_of: 'soon' } });
  assert.equal(bad.isError, true);
  assert.match((bad.content as any)[0].text, /as_of/);
});

test('`memory observe --valid-from` and `memory query --as-of` from the command line', async (t) => {
  const dir = tempDir(t, 'nightshift-when-cli-');
  for (const d of ['vault', 'prompts', 'state']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
  const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const run = (...args: string[]) => nightshift(['memory', ...args], env, dir);
  const o = await run('observe', 'The lab moved to building seven', '--valid-from', '2025-02-01', '--json');
  assert.equal(o.code, 0, o.stderr);
  const id = JSON.parse(o.stdout).memory_id;
  const q = async (asOf: string) => JSON.parse((await run('query', 'lab building', '--as-of', asOf, '--json')).stdout).map((r: { id: number }) => r.id);
  assert.deepEqual(await q('2025-01-01'), []);
  assert.deepEqual(await q('2025-03-01'), [id]);
  const bad = await run('query', 'lab', '--as-of', 'whenever');
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /--as-of/);
});

// Recency as of a time counts from that time, from what was seen by then: the memory fresh then
// ranks first as of then, the one fresh now ranks first now (the order an as-of query gave before,
// when it counted ages from now).
test('as of a time, recency counts from that time: the memory seen just before it ranks above the one seen just before now', async (t) => {
  let now = new Date('2024-05-30T00:00:00Z');
  // Recency weighted so that it decides between two equally good matches.
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => now, weights: { recency: 1 } });
  t.after(() => s.close());
  const freshThen = (await s.observe({ text: 'The ferry timetable for the north harbour is printed on blue card' }, CLI)).memory_id;
  now = new Date('2026-11-30T00:00:00Z');
  const freshNow = (await s.observe({ text: 'The ferry timetable at the south quay hangs by the ticket window', valid_from: '2020-01-01' }, CLI)).memory_id;
  now = NOW;
  const q = 'ferry timetable';
  const asOf = await s.query(q, { as_of: '2024-06-01T00:00:00Z', explain: true });
  assert.deepEqual(ids(asOf), [freshThen, freshNow]);
  const recencyOf = (rs: typeof asOf, id: number) => rs.find((r) => r.id === id)!.explain!.recency;
  assert.ok(recencyOf(asOf, freshThen) > 0.9, 'two days old then');
  assert.ok(recencyOf(asOf, freshNow) < 0.01, 'as of then it was last seen when it began, in 2020');
  // Control: counted from now, the order turns over.
  const current = await s.query(q, { explain: true });
  assert.deepEqual(ids(current), [freshNow, freshThen]);
  // Recency is the mean of the two ages (docs/memory.md, Updates): seen just now (1), holding since 2020 (0).
  assert.ok(Math.abs(recencyOf(current, freshNow) - 0.5) < 0.02 && recencyOf(current, freshThen) < 0.01, String(recencyOf(current, freshNow)));
});

test('as of a time, a memory merged into later is as recent as its evidence of then', async (t) => {
  let now = new Date('2024-01-01T00:00:00Z');
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => now });
  t.after(() => s.close());
  const text = 'The night bus to the airport runs every forty minutes';
  const id = (await s.observe({ text }, CLI)).memory_id;
  now = new Date('2026-11-01T00:00:00Z');
  assert.equal((await s.observe({ text }, CLI)).memory_id, id, 'merged');
  now = NOW;
  const [then] = await s.query('night bus airport', { as_of: '2024-03-01T00:00:00Z', explain: true });
  // 60 days after its one observation by then: two half-lives.
  assert.ok(Math.abs(then.explain!.recency - 0.25) < 0.01, String(then.explain!.recency));
  const [current] = await s.query('night bus airport', { explain: true });
  // Control: now, its newest evidence is 30 days old (0.5) and it has held since 2024 (about 0): the mean.
  const held = Math.pow(0.5, (NOW.getTime() - Date.parse('2024-01-01T00:00:00Z')) / 86_400_000 / 30);
  assert.ok(Math.abs(current.explain!.recency - (Math.pow(0.5, 30 / 30) + held) / 2) < 0.01, `control: counted from the later observation now, ${current.explain!.recency}`);
});
