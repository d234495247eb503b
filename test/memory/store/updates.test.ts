// Knowledge updates (memory/store/updates.ts) through the paths real writers take: the operator's
// `nightshift memory observe/query`, a session's own MCP server (the real SDK Client), and the
// dream over what was stored before. Each with the rule off (`memory.updates: false`) as control.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../../../config/config.js';
import { createLogger } from '../../../logs/logger.js';
import { dream } from '../../../memory/dream/dream.js';
import { serveSessionMemory } from '../../../memory/mcp/session-server.js';
import { MemoryStore } from '../../../memory/store.js';
import type { Actor, Embedder } from '../../../memory/types.js';
import { configYaml, nightshift, tempDir, type Ran } from '../../helpers.js';
import { BETWEEN, NEW_FROM, OLD_FROM } from '../update-pairs.js';

const CLI: Actor = { surface: 'cli' };

type Site = { dir: string; env: NodeJS.ProcessEnv; file: string };
function site(t: TestContext, updates: boolean): Site {
  const dir = tempDir(t, 'nightshift-updates-');
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), `${configYaml()}memory:\n  updates: ${updates}\n`);
  return { dir, env: { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') }, file: path.join(dir, 'state', 'memory.db') };
}

function json(r: Ran): any {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
const mem = async (s: Site, ...args: string[]) => json(await nightshift(['memory', ...args, '--json'], s.env, s.dir));

test('through the CLI: the later value is current, the older ends where it began and still answers as of before; with the rule off the stale value ranks first', async (t) => {
  const run = async (updates: boolean) => {
    const s = site(t, updates);
    const purple = (await mem(s, 'observe', 'My favourite colour is purple')).memory_id;
    const cyan = (await mem(s, 'observe', 'My favourite colour is cyan')).memory_id;
    const atlas = (await mem(s, 'observe', 'The web app runs on atlas-one', '--valid-from', OLD_FROM)).memory_id;
    const borealis = (await mem(s, 'observe', 'The web app runs on borealis-two', '--valid-from', NEW_FROM)).memory_id;
    const ids = (rs: any[]) => rs.map((r) => r.id);
    return {
      purple, cyan, atlas, borealis,
      colour: ids(await mem(s, 'query', 'favourite colour')),
      server: ids(await mem(s, 'query', 'which server does the web app run on')),
      serverThen: ids(await mem(s, 'query', 'which server does the web app run on', '--as-of', BETWEEN)),
      serverLater: ids(await mem(s, 'query', 'which server does the web app run on', '--as-of', '2026-07-01T00:00:00Z')),
      atlasRecord: await mem(s, 'recall', String(atlas)),
    };
  };
  const on = await run(true);
  assert.notEqual(on.purple, on.cyan, 'two values are two memories');
  assert.deepEqual(on.colour, [on.cyan], 'the older value is superseded: not returned by default');
  assert.deepEqual(on.server, [on.borealis]);
  assert.deepEqual(on.serverThen, [on.atlas], 'as of March, the value of then');
  assert.deepEqual(on.serverLater, [on.borealis]);
  assert.deepEqual([on.atlasRecord.superseded_by, on.atlasRecord.valid_to], [on.borealis, NEW_FROM]);
  // Control: the rule off, both stay current and the stale value ranks first (issue 39's finding).
  const off = await run(false);
  assert.equal(off.colour[0], off.purple);
  assert.equal(off.server[0], off.atlas);
  assert.equal(off.atlasRecord.valid_to, null);
});

type Call = (name: string, args: Record<string, unknown>) => Promise<any>;
async function session(t: TestContext, s: Site, id: string, agent: string): Promise<Call> {
  const logger = createLogger({ redact: (x) => x, level: 'warn', stderr: { write: () => {} } });
  const mcp = await serveSessionMemory(loadConfig(path.join(s.dir, 'nightshift.yaml')), { PATH: process.env.PATH }, logger, id, '1.2.3', null, agent);
  const client = new Client({ name: 'nightshift-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { requestInit: { headers: { Authorization: `Bearer ${mcp.token}` } } }));
  t.after(async () => {
    await client.close();
    await mcp.close();
  });
  return async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(JSON.stringify(r.content));
    return r.structuredContent;
  };
}

test("over a session's MCP server: its own update ends its own memory; its update of a shared one only outdates it for its agent (ended: PERMISSION); the operator's ends it for all; with the rule off the stale values rank first", async (t) => {
  const run = async (updates: boolean) => {
    const s = site(t, updates);
    const sharedOld = (await mem(s, 'observe', 'The deploy key for the blog lives in the ops vault', '--valid-from', OLD_FROM)).memory_id;
    const alpha = await session(t, s, 'S-alpha-1', 'alpha');
    const ids = async (call: Call, query: string, as_of?: string) => (await call('query', { query, ...(as_of ? { as_of } : {}) })).results;
    // Its own memory, then its own update of it.
    const vim = (await alpha('observe', { text: 'My editor of choice is Vim', valid_from: OLD_FROM })).memory_id;
    const helix = (await alpha('observe', { text: 'My editor of choice is Helix', valid_from: NEW_FROM })).memory_id;
    // Its update of the operator's shared fact.
    const mine = (await alpha('observe', { text: 'The deploy key for the blog lives in the personal vault', valid_from: NEW_FROM })).memory_id;
    const attempt = await alpha('link', { from: mine, to: sharedOld, type: 'supersedes' }).then(() => null, (e: Error) => e.message);
    const beta = await session(t, s, 'S-beta-1', 'beta');
    const out = {
      vim, helix, mine, sharedOld, attempt,
      editor: await ids(alpha, 'editor of choice'),
      editorThen: await ids(alpha, 'editor of choice', BETWEEN),
      keyAlpha: await ids(alpha, 'where is the deploy key for the blog'),
      keyAlphaThen: await ids(alpha, 'where is the deploy key for the blog', BETWEEN),
      keyBeta: await ids(beta, 'where is the deploy key for the blog'),
      sharedRecord: await beta('recall', { id: sharedOld }),
    };
    // The operator's update of the shared fact: ended for every agent.
    const operators = (await mem(s, 'observe', 'The deploy key for the blog lives in the team vault', '--valid-from', '2026-09-01T00:00:00Z')).memory_id;
    return { ...out, operators, keyBetaAfter: await ids(beta, 'where is the deploy key for the blog'), keyBetaAugust: await ids(beta, 'where is the deploy key for the blog', '2026-08-01T00:00:00Z') };
  };
  const on = await run(true);
  // Its own: ended; as of before, the older answers.
  // (Other memories of the session follow through its edges; the two values are what is checked.)
  const pick = (rs: any[], ...want: number[]) => rs.filter((r) => want.includes(r.id)).map((r) => [r.id, r.possibly_outdated ?? false]);
  assert.deepEqual(pick(on.editor, on.vim, on.helix), [[on.helix, false]]);
  assert.equal(on.editor[0].id, on.helix);
  assert.deepEqual(pick(on.editorThen, on.vim, on.helix), [[on.vim, false]]);
  // The shared one: its own update first, the shared value still there, marked, below it.
  assert.equal(on.keyAlpha[0].id, on.mine);
  assert.deepEqual(pick(on.keyAlpha, on.mine, on.sharedOld), [[on.mine, false], [on.sharedOld, true]]);
  assert.deepEqual(pick(on.keyAlphaThen, on.mine, on.sharedOld), [[on.sharedOld, false]], 'as of before its update, not outdated');
  // A session may still not end a shared memory.
  assert.match(String(on.attempt), /PERMISSION: #\d+ is shared: superseding it would change what every agent sees/);
  // Beta's view is as it was: the shared value, current, unmarked.
  assert.deepEqual(pick(on.keyBeta, on.mine, on.sharedOld), [[on.sharedOld, false]]);
  assert.equal(on.keyBeta[0].id, on.sharedOld);
  assert.deepEqual([on.sharedRecord.superseded_by, on.sharedRecord.valid_to], [null, null]);
  // The operator's update ends it for beta too; as of August the shared value still answered.
  assert.equal(on.keyBetaAfter[0].id, on.operators);
  assert.ok(!on.keyBetaAfter.some((r: any) => r.id === on.sharedOld));
  assert.equal(on.keyBetaAugust[0].id, on.sharedOld);
  // Control: the rule off, each view ranks the stale value first.
  const off = await run(false);
  assert.equal(off.editor[0].id, off.vim);
  assert.equal(off.keyAlpha[0].id, off.sharedOld);
  assert.equal(off.keyBetaAfter[0].id, off.sharedOld);
  assert.match(String(off.attempt), /PERMISSION/);
});

// Told later about the past: the claim written last held earlier, so the one written first stays
// current and the later-written one ends where the current began. Through a session's MCP server
// and the operator's CLI, the paths that write claims.
// mutation: the claim written last wins (memory/store/updates.ts ignores valid_from), caught here.
test('told later about the past, over a session\'s MCP server and the CLI: the later-valid claim stays current; the one written last ends where it began to be replaced', async (t) => {
  const s = site(t, true);
  const alpha = await session(t, s, 'S-alpha-2', 'alpha');
  const helix = (await alpha('observe', { text: 'My editor of choice is Helix', valid_from: NEW_FROM })).memory_id;
  const vim = (await alpha('observe', { text: 'My editor of choice is Vim', valid_from: OLD_FROM })).memory_id;
  const ids = async (query: string, as_of?: string) => ((await alpha('query', { query, ...(as_of ? { as_of } : {}) })).results as any[]).map((r) => r.id).filter((id) => id === vim || id === helix);
  assert.deepEqual(await ids('editor of choice'), [helix]);
  assert.deepEqual(await ids('editor of choice', BETWEEN), [vim]);
  const vimRecord = await alpha('recall', { id: vim });
  const helixRecord = await alpha('recall', { id: helix });
  assert.deepEqual([vimRecord.superseded_by, vimRecord.valid_to], [helix, NEW_FROM]);
  assert.deepEqual([helixRecord.superseded_by, helixRecord.valid_to], [null, null]);
  // The operator's CLI, the same order.
  const borealis = (await mem(s, 'observe', 'The web app runs on borealis-two', '--valid-from', NEW_FROM)).memory_id;
  const atlas = (await mem(s, 'observe', 'The web app runs on atlas-one', '--valid-from', OLD_FROM)).memory_id;
  const server = (await mem(s, 'query', 'which server does the web app run on')).map((r: any) => r.id);
  assert.deepEqual(server, [borealis]);
  assert.deepEqual((await mem(s, 'query', 'which server does the web app run on', '--as-of', BETWEEN)).map((r: any) => r.id), [atlas]);
  const atlasRecord = await mem(s, 'recall', String(atlas));
  assert.deepEqual([atlasRecord.superseded_by, atlasRecord.valid_to], [borealis, NEW_FROM]);
});

// Every text the same direction: the gate's cosine says "the same", so only the words decide.
const SAME: Embedder = { model: 'same-vector', dim: 4, embed: async (texts: string[]) => texts.map(() => new Float32Array([1, 0, 0, 0])) };

test('no merge joins two values: a near-identical vector and words merge only with the rule off', async (t) => {
  const dir = tempDir(t, 'nightshift-updates-merge-');
  const go = async (knowledgeUpdates: boolean) => {
    const s = MemoryStore.open(path.join(dir, `m-${knowledgeUpdates}.db`), { embedder: SAME, knowledgeUpdates });
    try {
      const a = await s.observe({ text: 'The staging database for the billing team listens on port 5432' }, CLI);
      const b = await s.observe({ text: 'The staging database for the billing team listens on port 6432' }, CLI);
      const same = await s.observe({ text: 'The staging database for the billing team listens on port 6432!' }, CLI);
      return { a: a.memory_id, b: b.memory_id, bDecision: b.decision, same: same.memory_id, sameDecision: same.decision };
    } finally {
      s.close();
    }
  };
  const on = await go(true);
  assert.notEqual(on.a, on.b);
  assert.equal(on.bDecision, 'link');
  assert.deepEqual([on.same, on.sameDecision], [on.b, 'merge'], 'the same value still merges');
  const off = await go(false);
  assert.deepEqual([off.b, off.bDecision], [off.a, 'merge'], 'control: two values in one memory');
});

test('the dream over values stored before: dated (the older ended where the newer began), never merged; one time with two values is a contradiction, never picked; with the rule off it changes nothing', async (t) => {
  const dir = tempDir(t, 'nightshift-updates-dream-');
  const go = async (knowledgeUpdates: boolean) => {
    const file = path.join(dir, `d-${knowledgeUpdates}.db`);
    // Stored as before updates existed.
    const before = MemoryStore.open(file, { knowledgeUpdates: false });
    const purple = (await before.observe({ text: 'My favourite colour is purple', valid_from: OLD_FROM }, CLI)).memory_id;
    const cyan = (await before.observe({ text: 'My favourite colour is cyan', valid_from: NEW_FROM }, CLI)).memory_id;
    const east = (await before.observe({ text: 'The backup host for the wiki is nas-east', valid_from: OLD_FROM, speaker: 'alice' }, CLI)).memory_id;
    const west = (await before.observe({ text: 'The backup host for the wiki is nas-west', valid_from: OLD_FROM, speaker: 'bob' }, CLI)).memory_id;
    before.close();
    const s = MemoryStore.open(file, { knowledgeUpdates });
    try {
      const r = await dream(s, { actor: CLI });
      const ids = async (q: string, as_of?: string) => (await s.query(q, as_of ? { as_of } : {})).map((x) => x.id);
      return {
        purple, cyan, east, west,
        phase: r.phases.updates,
        colour: await ids('favourite colour'),
        colourThen: await ids('favourite colour', BETWEEN),
        texts: [s.recall(purple).text, s.recall(cyan).text],
        purpleEnd: s.recall(purple).valid_to,
        host: await ids('backup host for the wiki'),
        candidates: s.contradictionCandidates('candidate').map((c) => [c.a, c.b]),
      };
    } finally {
      s.close();
    }
  };
  const on = await go(true);
  assert.equal(on.phase.ok, true);
  assert.deepEqual(on.colour, [on.cyan]);
  assert.deepEqual(on.colourThen, [on.purple]);
  assert.equal(on.purpleEnd, NEW_FROM);
  assert.deepEqual(on.texts, ['My favourite colour is purple', 'My favourite colour is cyan'], 'both values kept, each its own');
  // Two sources, one time, two values: both stay current, surfaced as a candidate.
  assert.deepEqual(on.host.slice().sort(), [on.east, on.west].sort());
  assert.deepEqual(on.candidates, [[on.east, on.west]]);
  const off = await go(false);
  assert.equal(off.colour[0], off.purple, 'control: the stale value first');
  assert.equal(off.purpleEnd, null);
  assert.deepEqual(off.candidates, []);
});
