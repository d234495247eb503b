// Whose memory it is, attacked as another agent's session would (issue 30, part 4): over the real
// session server, beta's session probes for what alpha's private writes left behind in what beta
// may see. Each with the control that shows the harm where the scope is off.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ledger } from '../../../budget/ledger.js';
import { loadConfig, validateConfig } from '../../../config/config.js';
import { createLogger } from '../../../logs/logger.js';
import { serveSessionMemory } from '../../../memory/mcp/session-server.js';
import { MemoryStore } from '../../../memory/store.js';
import { gatherState } from '../../../sessions/state/state-data.js';
import { renderState } from '../../../sessions/state/state.js';
import { configYaml, tempDir } from '../../helpers.js';

const WORD = 'QUARTZWREN';
const SHARED = 'The staging host lighthouse runs the nightly backups at two';
const SECRET_SOURCE = 'https://alpha.example/secret-runbook';

type Call = (name: string, args: Record<string, unknown>) => Promise<any>;

// A site whose sessions get their own memory servers over one store; `scope` is memory.scope.
function site(t: TestContext) {
  const dir = tempDir(t, 'nightshift-scope-attack-');
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  const logger = createLogger({ redact: (x) => x, level: 'warn', stderr: { write: () => {} } });
  const session = async (scope: 'agent' | 'shared', id: string, agent: string): Promise<Call> => {
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), `${configYaml()}memory:\n  scope: ${scope}\n`);
    const config = loadConfig(path.join(dir, 'nightshift.yaml'));
    const mem = await serveSessionMemory(config, { PATH: process.env.PATH }, logger, id, '1.2.3', null, agent);
    const client = new Client({ name: 'nightshift-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mem.url), { requestInit: { headers: { Authorization: `Bearer ${mem.token}` } } }));
    t.after(async () => {
      await client.close();
      await mem.close();
    });
    return async (name, args) => {
      const r = await client.callTool({ name, arguments: args });
      assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
      return r.structuredContent;
    };
  };
  return { session, file: path.join(dir, 'state', 'memory.db') };
}

test("a private near-duplicate of a shared memory is never folded into it: beta's session finds none of its words, source or tags", async (t) => {
  const { session, file } = site(t);
  const beta0 = await session('agent', 'S-beta-0', 'beta');
  const shared = (await beta0('observe', { text: SHARED, shared: true })).memory_id;
  const alpha = await session('agent', 'S-alpha-1', 'alpha');
  const mine = await alpha('observe', { text: `${SHARED} ${WORD}`, source: SECRET_SOURCE });

  // A belief is observed through the same gate: alpha's is its own, the shared memory keeps its kind.
  // (Said before the claim: "<claim> for sure" beside "<claim> <WORD>" would read as one value
  // changed, and end alpha's own memory; docs/memory.md, Updates.)
  assert.notEqual((await alpha('believe', { text: `For sure: ${SHARED}`, confidence: 0.95 })).id, shared);
  const beta = await session('agent', 'S-beta-1', 'beta');
  assert.deepEqual((await beta('query', { query: WORD, include_faded: true })).results, []);
  const kept = await beta('recall', { id: shared });
  assert.equal(kept.category, 'observation');
  assert.equal(kept.confidence, 0.5);
  assert.deepEqual((await beta('query', { query: 'secret runbook alpha example' })).results.filter((r: any) => r.id !== shared), []);
  const rec = await beta('recall', { id: shared });
  assert.doesNotMatch(JSON.stringify(rec), /alpha/);
  assert.deepEqual(rec.sources, ['S-beta-0']);
  assert.equal(rec.access_count, 0, 'alpha\'s write did not confirm the shared memory');
  assert.notEqual(mine.memory_id, shared, 'a memory of its own for alpha');
  assert.equal(mine.decision, 'link');
  assert.equal(mine.linked_to, shared);
  // Within one scope the gate still merges: alpha's own near-duplicate joins alpha's memory.
  assert.equal((await alpha('observe', { text: `${SHARED} ${WORD} again` })).memory_id, mine.memory_id);
  const op = MemoryStore.open(file);
  t.after(() => op.close());
  assert.ok(![...op.as('beta').exportAll()].some((l) => l.text.includes(WORD)), "beta's view exports none of alpha's words");
  // Control: what beta finds when alpha's writes are shared (memory.scope shared, the behaviour
  // before scopes): the same write merged into the shared memory, its word and source beta's to see.
  const { session: session2 } = site(t);
  const b0 = await session2('shared', 'S-beta-0', 'beta');
  const s2 = (await b0('observe', { text: SHARED })).memory_id;
  const a2 = await session2('shared', 'S-alpha-1', 'alpha');
  assert.equal((await a2('observe', { text: `${SHARED} ${WORD}`, source: SECRET_SOURCE })).decision, 'merge');
  const b2 = await session2('shared', 'S-beta-1', 'beta');
  assert.deepEqual((await b2('query', { query: WORD })).results.map((r: any) => r.id), [s2]);
  assert.match(JSON.stringify(await b2('recall', { id: s2 })), /secret-runbook/);
});

test("beta's stats count none of alpha's private memories, threads, predictions or beliefs; alpha's and the scope-off control do", async (t) => {
  const { session, file } = site(t);
  const beta = await session('agent', 'S-beta-1', 'beta');
  await beta('observe', { text: 'Everyone: the VPN gateway moved to port 51821', shared: true });
  await beta('observe', { text: 'Beta keeps its own notes about the kettle in room four' });
  const before = await beta('stats', {});
  const alpha = await session('agent', 'S-alpha-1', 'alpha');
  const alphaBefore = await alpha('stats', {});
  const p = await alpha('observe', { text: `${WORD} the alpha deploy key rotates every Tuesday at the depot` });
  const q = await alpha('observe', { text: `${WORD} the depot gate code is never 4411` });
  await alpha('link', { from: p.memory_id, to: q.memory_id, type: 'supports' });
  await alpha('threads', { action: 'open', text: `${WORD} rotate the depot key before Friday`, solo: true });
  const pr = await alpha('predict', { text: `${WORD} the depot key rotation will fail once`, confidence: 0.9 });
  await alpha('resolve', { id: pr.id, outcome: 'wrong' });
  await alpha('believe', { text: `${WORD} depot keys are best rotated early in the week`, confidence: 0.9 });
  await alpha('review', { id: p.memory_id, grade: 'good' });
  await alpha('contradict', { id: p.memory_id, other_id: q.memory_id });
  const counts = (x: any) => ({ ...x, file: undefined, retrievability: undefined });
  assert.deepEqual(counts(await beta('stats', {})), counts(before), 'nothing of alpha\'s moved beta\'s counts');
  // Control: alpha counts its own; the operator counts all; so does beta with the scope off.
  const alphaAfter = await alpha('stats', {});
  assert.ok(alphaAfter.memories >= alphaBefore.memories + 5 && alphaAfter.threads_open === alphaBefore.threads_open + 1 && alphaAfter.by_category.belief === 1);
  const op = MemoryStore.open(file);
  t.after(() => op.close());
  assert.equal(op.stats().memories, alphaAfter.memories + 1, 'the operator: alpha\'s and shared, and beta\'s own');
  const off = await (await session('shared', 'S-beta-2', 'beta'))('stats', {});
  assert.equal(off.memories, op.stats().memories);
  assert.equal(off.threads_open, 1);
});

test("beta's session state names alpha's last session, never its result or error (alpha's private memory holds them); alpha's own and the scope-off control show them", async (t) => {
  const dir = tempDir(t, 'nightshift-scope-state-');
  const mk = (scope: 'agent' | 'shared') => validateConfig({ state_dir: './state', git: { enabled: false }, memory: { scope } }, path.join(dir, 'nightshift.yaml')).config!;
  fs.mkdirSync(mk('agent').state_dir, { recursive: true });
  const ledger = Ledger.open(path.join(dir, 'ledger.db'));
  t.after(() => ledger.close());
  const NOW = new Date('2026-03-02T10:00:00Z');
  const ran = (id: string, outcome: string, result: string | null, error: string | null) => {
    const open = { id, agent: 'alpha', day: '2026-03-02', started_at: new Date(NOW.getTime() - 3_600_000).toISOString(), transcript: null, model: 'sonnet', supervisor_pid: 1, supervisor_start: null };
    ledger.open(open);
    ledger.settle(open, { outcome, ended_at: NOW.toISOString(), duration_ms: 1000, cost_usd: 0.25, cost_estimated: false, turns: 4, exit_code: 0, result, error, input_tokens: 1, output_tokens: 1 });
  };
  ran('S-alpha-ok', 'ok', `Rotated the ${WORD} depot key; the new code is 9137`, null);
  ran('S-alpha-err', 'error', null, `${WORD} gate refused code 4411`);
  const state = async (scope: 'agent' | 'shared', name: string) =>
    renderState(await gatherState({ config: mk(scope), agent: { name, maxRunsPerDay: null }, sessionId: null, unattended: true, ledger, now: NOW, redact: (x) => x }), 12_000).text;
  const beta = await state('agent', 'beta');
  assert.doesNotMatch(beta, new RegExp(WORD));
  assert.match(beta, /alpha: ok, 4 turns/, 'that alpha ran is still shown');
  assert.match(await state('agent', 'alpha'), new RegExp(`${WORD} depot key`), 'its own agent sees its words');
  assert.match(await state('shared', 'beta'), new RegExp(`${WORD} depot key`), 'control: scope off');
});

// An observation merged into a memory later was its evidence at every time, so a query as of before
// it was made found the memory by the later words alone. As of a time, evidence is what was
// observed by then (the first observation always: it is the memory's beginning).
test('as of a time, a memory is not found by words only a later observation of it holds', async (t) => {
  let now = new Date('2025-01-01T00:00:00Z');
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => now });
  t.after(() => s.close());
  const text = 'The deploy script pushes the site to the lighthouse host over rsync';
  const first = (await s.observe({ text }, { surface: 'cli' })).memory_id;
  now = new Date('2027-01-01T00:00:00Z');
  assert.equal((await s.observe({ text: `${text} ZEPHYRQUILL`, source: 'S-2027' }, { surface: 'cli' })).memory_id, first);
  assert.ok((await s.query('ZEPHYRQUILL')).some((r) => r.id === first), 'control: now it is found by the later word');
  assert.deepEqual(await s.query('ZEPHYRQUILL', { as_of: '2026-01-01T00:00:00Z' }), []);
  assert.ok((await s.query('lighthouse rsync', { as_of: '2026-01-01T00:00:00Z' })).some((r) => r.id === first), 'its own words of then still find it');
});

test("alpha's session cannot supersede a shared memory over MCP: refused, beta still finds it now and as of later; with the scope off beta loses it", async (t) => {
  const FACT = 'The harbour ferry to the island leaves from pier two';
  const NEWER = 'The harbour ferry to the island now leaves from pier nine';
  const attempt = async (scope: 'agent' | 'shared') => {
    const { session } = site(t);
    const beta0 = await session(scope, 'S-beta-0', 'beta');
    const shared = (await beta0('observe', { text: FACT, valid_from: '2025-01-01T00:00:00Z', shared: true })).memory_id;
    const alpha = await session(scope, 'S-alpha-1', 'alpha');
    const mine = (await alpha('observe', { text: NEWER, valid_from: '2026-01-01T00:00:00Z' })).memory_id;
    const linked = await alpha('link', { from: mine, to: shared, type: 'supersedes' }).then(() => true, (e: Error) => e);
    const beta = await session(scope, 'S-beta-1', 'beta');
    const found = async (args: Record<string, unknown>) => (await beta('query', { query: 'harbour ferry island pier', ...args })).results.some((r: any) => r.id === shared);
    return { linked, now: await found({}), later: await found({ as_of: '2026-06-01T00:00:00Z' }), record: await beta('recall', { id: shared }) };
  };
  const scoped = await attempt('agent');
  assert.ok(scoped.linked instanceof Error);
  assert.match(scoped.linked.message, /PERMISSION: #\d+ is shared: superseding it would change what every agent sees/);
  assert.deepEqual([scoped.now, scoped.later, scoped.record.superseded_by, scoped.record.valid_to], [true, true, null, null]);
  // Control: where the scope is off, the same call ends the shared fact for beta.
  const off = await attempt('shared');
  assert.equal(off.linked, true);
  assert.deepEqual([off.now, off.later, off.record.valid_to], [false, false, '2026-01-01T00:00:00.000Z']);
});

test("alpha's session cannot contradict, grade or resolve shared memories over MCP: PERMISSION, and beta's ranking, confidence and threads stay; with the scope off they move", async (t) => {
  const attempt = async (scope: 'agent' | 'shared') => {
    const { session, file } = site(t);
    const beta0 = await session(scope, 'S-beta-0', 'beta');
    const fact = (await beta0('observe', { text: 'The lighthouse host runs the nightly backup at two', shared: true })).memory_id;
    // The operator's prediction and solo thread, shared as everything the operator writes.
    const op = MemoryStore.open(file);
    const prediction = (await op.predict({ text: 'The lighthouse backup will finish before three tonight', confidence: 0.9 }, { surface: 'cli' })).id;
    const thread = (await op.openThread({ text: 'Find out why the lighthouse backup was slow', solo: true }, { surface: 'cli' })).id;
    op.close();
    const betaSees = async () => {
      const beta = await session(scope, `S-beta-${Math.random()}`, 'beta');
      return {
        // The shared memories' places and scores (under the scope off beta sees alpha's too).
        ranking: (await beta('query', { query: 'lighthouse backup' })).results.filter((r: any) => [fact, prediction, thread].includes(r.id)).map((r: any) => [r.id, r.score]),
        confidence: (await beta('recall', { id: fact })).confidence,
        threads: (await beta('threads', { action: 'list' })).threads.map((x: any) => x.id),
      };
    };
    const before = await betaSees();
    const alpha = await session(scope, 'S-alpha-1', 'alpha');
    const mine = (await alpha('observe', { text: 'Last night no backup ran on the lighthouse host' })).memory_id;
    const calls: Array<[string, Record<string, unknown>]> = [
      ['contradict', { id: fact, other_id: mine }],
      ['review', { id: fact, grade: 'again' }],
      ['resolve', { id: prediction, outcome: 'wrong' }],
    ];
    const errors: Array<Error | null> = [];
    for (const [name, args] of calls) errors.push(await alpha(name, args).then(() => null, (e: Error) => e));
    // What it may do instead goes through, and beta never sees it.
    if (scope === 'agent') await alpha('link', { from: mine, to: fact, type: 'contradicts' });
    return { errors, before, after: await betaSees(), ids: { fact, thread } };
  };
  const scoped = await attempt('agent');
  for (const e of scoped.errors) assert.match(String(e?.message), /PERMISSION: #\d+ is shared: .* so only the operator may; .* instead/);
  assert.deepEqual(scoped.after, scoped.before);
  assert.ok(scoped.before.ranking.some(([id]: number[]) => id === scoped.ids.fact) && scoped.before.threads.includes(scoped.ids.thread), 'control: beta sees both');
  // Control: with the scope off (the session's view is the operator's) every call lands on beta.
  const off = await attempt('shared');
  assert.deepEqual(off.errors, [null, null, null]);
  assert.ok(off.after.confidence < off.before.confidence);
  assert.notDeepEqual(off.after.ranking, off.before.ranking);
});
