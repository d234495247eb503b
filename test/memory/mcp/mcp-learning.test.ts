// The learning tools through the SDK's real Client over stdio against `nightshift mcp`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MemoryStore } from '../../../memory/store.js';
import { BIN, configYaml, tempDir } from '../../helpers.js';

async function connect(t: TestContext): Promise<{ client: Client; db: string }> {
  const dir = tempDir(t, 'nightshift-mcp-');
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  const config = path.join(dir, 'nightshift.yaml');
  fs.writeFileSync(config, configYaml());
  const env = { PATH: process.env.PATH ?? '', HOME: dir, NIGHTSHIFT_SESSION_ID: 'sess-learn' };
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--config', config], env, cwd: dir, stderr: 'pipe' });
  const client = new Client({ name: 'nightshift-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return { client, db: path.join(dir, 'state', 'memory.db') };
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  const r: any = await client.callTool({ name, arguments: args });
  return r;
};
const ok = async (client: Client, name: string, args: Record<string, unknown>) => {
  const r = await call(client, name, args);
  assert.equal(r.isError, undefined, `${name}: ${JSON.stringify(r.content)}`);
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, 'the text is the structured content');
  return r.structuredContent;
};

test('believe, contradict, predict, resolve, review, threads and wander answer in the shapes other tools rely on', async (t) => {
  const { client, db } = await connect(t);
  const b = await ok(client, 'believe', { text: 'The nightly build is reliable enough to ship from', confidence: 0.8 });
  assert.deepEqual(Object.keys(b).sort(), ['decision', 'id']);
  const o = await ok(client, 'observe', { text: 'The nightly build failed three nights in a row' });
  const c = await ok(client, 'contradict', { id: b.id, other_id: o.memory_id, note: 'three red nights' });
  assert.deepEqual(c, { id: b.id, other_id: o.memory_id, confidence: 0.5333 });
  const rec = await ok(client, 'recall', { id: b.id });
  assert.equal(rec.category, 'belief');
  assert.ok(rec.edges.some((e: any) => e.type === 'contradicts' && e.to === o.memory_id));

  const p = await ok(client, 'predict', { text: 'The nightly build will be green tomorrow', confidence: 0.9, due: '2030-01-02T00:00:00Z' });
  assert.deepEqual(Object.keys(p), ['id']);
  const res = await ok(client, 'resolve', { id: p.id, outcome: 'wrong', note: 'red again' });
  assert.deepEqual(res, { id: p.id, surprise: 0.9 });
  const again = await call(client, 'resolve', { id: p.id, outcome: 'correct' });
  assert.equal(again.isError, true);
  assert.match(again.content[0].text, /already resolved/);

  const rv = await ok(client, 'review', { id: o.memory_id, grade: 'good' });
  assert.equal(rv.grade, 'good');
  assert.ok(rv.stability > 0 && Date.parse(rv.due) > 0);

  const th = await ok(client, 'threads', { action: 'open', text: 'Find out why the nightly build flakes', solo: true });
  assert.equal(th.threads[0].status, 'open');
  assert.equal(th.threads[0].solo, true);
  await ok(client, 'threads', { action: 'open', text: 'Ask the operator about the release date' });
  assert.deepEqual((await ok(client, 'threads', { action: 'list', solo: true })).threads.map((x: any) => x.id), [th.threads[0].id]);
  const done = await ok(client, 'threads', { action: 'resolve', id: th.threads[0].id, text: 'a flaky test, quarantined' });
  assert.equal(done.threads[0].status, 'resolved');
  assert.equal((await ok(client, 'threads', { action: 'list' })).threads.length, 1);
  const noText = await call(client, 'threads', { action: 'open' });
  assert.equal(noText.isError, true);
  assert.match(noText.content[0].text, /Expected `text`/);

  const w1 = await ok(client, 'wander', { steps: 4, seed: 42 });
  const w2 = await ok(client, 'wander', { steps: 4, seed: 42 });
  assert.deepEqual(w1, w2, 'the same seed gives the same path');
  assert.equal(w1.path.length, 4);
  for (const step of w1.path) assert.deepEqual(Object.keys(step).sort(), ['category', 'id', 'retrievability', 'text', 'via']);

  const st = await ok(client, 'stats', {});
  assert.equal(st.threads_open, 1);
  assert.equal(st.predictions_open, 0);
  assert.equal(typeof st.retrievability.mean, 'number');
  assert.equal(typeof st.overdue, 'number');
  assert.ok(st.reviews >= 2);

  // Every mutation was audited as mcp, with the session id.
  const s = MemoryStore.open(db);
  t.after(() => s.close());
  const actions = s.auditLog().map((r) => r.action);
  for (const a of ['believe', 'contradict', 'predict', 'resolve', 'review', 'thread_open', 'thread_resolve']) assert.ok(actions.includes(a), a);
  assert.ok(s.auditLog().every((r) => r.surface === 'mcp' && r.session_id === 'sess-learn'));
});

test('bad arguments and refusals are isError results: unknown grade, a missing memory, observing a tombstoned claim', async (t) => {
  const { client, db } = await connect(t);
  const bad = await call(client, 'review', { id: 1, grade: 'great' });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /Invalid arguments for `review`: grade/);
  const missing = await call(client, 'contradict', { id: 998, other_id: 999 });
  assert.equal(missing.isError, true);
  assert.match(missing.content[0].text, /^NOT_FOUND: No memory with id 998/);
  const s = MemoryStore.open(db);
  s.tombstone('The build server is in the basement', 'moved to the cloud', { surface: 'cli' });
  s.close();
  const refused = await call(client, 'believe', { text: 'the build server is in the basement' });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /^TOMBSTONED: .*tombstone [0-9a-f]{12}: moved to the cloud/);
});
