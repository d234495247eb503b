// Whose memory it is (issue 30, part 4): an agent's session reads its own and the shared memories
// by every route, never another agent's private ones; under `memory.scope: shared` (the control) or
// as the operator it finds them.
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
import { viewOf } from '../../../memory/store/scope.js';
import { StateView } from '../../../memory/store/state-view.js';
import { MemoryStore } from '../../../memory/store.js';
import { MemoryError, type Actor } from '../../../memory/types.js';
import { parseImportLine } from '../../../memory/text/jsonl.js';
import { applyLeft } from '../../../sessions/capture/capture.js';
import { gatherState } from '../../../sessions/state/state-data.js';
import { configYaml, nightshift, tempDir } from '../../helpers.js';

const CLI: Actor = { surface: 'cli' };
const MCP: Actor = { surface: 'mcp', sessionId: 'S-alpha-1' };
const T0 = new Date('2026-03-01T10:00:00Z');
const LATER = new Date('2027-06-01T10:00:00Z');
const WORD = 'QUARTZWREN';
const PRIVATE_TEXT = `${WORD} the alpha deploy key rotates every Tuesday at the lighthouse depot`;

type Seeded = { file: string; ids: Record<string, number> };

// Alpha's private memories of every kind, shared ones around them, and edges that would carry a
// walk through alpha's memory from a shared one to another.
async function seed(file: string): Promise<Seeded> {
  const op = MemoryStore.open(file, { now: () => T0 });
  const alpha = op.as('alpha');
  const ids: Record<string, number> = {};
  try {
    ids.shared = (await op.observe({ text: 'The shared staging host is called lighthouse and runs the nightly backups' }, CLI)).memory_id;
    ids.private = (await alpha.observe({ text: PRIVATE_TEXT, category: 'value', salience: 1 }, CLI)).memory_id;
    ids.bridge = (await op.observe({ text: 'The harbour generator manual sits in the blue binder' }, CLI)).memory_id;
    op.link(ids.shared, ids.private, 'relates_to', 1, CLI);
    op.link(ids.private, ids.bridge, 'relates_to', 1, CLI);
    ids.thread = (await alpha.openThread({ text: `${WORD} rotate the depot key before Friday`, solo: true }, MCP)).id;
    ids.belief = (await alpha.believe({ text: `${WORD} depot keys are best rotated early in the week`, confidence: 0.9 }, CLI)).id;
    ids.prediction = (await alpha.predict({ text: `${WORD} the depot key rotation will fail once`, confidence: 0.9 }, MCP)).id;
    alpha.resolvePrediction(ids.prediction, 'wrong', null, MCP);
    ids.claim = (await alpha.observe({ text: `${WORD} the depot gate code is 4411` }, MCP)).memory_id;
    alpha.contradict(ids.private, ids.claim, null, MCP);
    ids.sharedByAlpha = (await alpha.observe({ text: 'Everyone: the VPN gateway moved to port 51821', shared: true }, MCP)).memory_id;
  } finally {
    op.close();
  }
  return { file, ids };
}

async function seeded(t: TestContext): Promise<Seeded> {
  return seed(path.join(tempDir(t), 'memory.db'));
}

const privateIds = (ids: Record<string, number>) => [ids.private, ids.thread, ids.belief, ids.prediction, ids.claim];
const notFound = (fn: () => unknown) => assert.throws(fn, (e: unknown) => e instanceof MemoryError && e.code === 'NOT_FOUND');

test("an agent's memories are written as its own; shared when asked; the operator's always shared", async (t) => {
  const { file, ids } = await seeded(t);
  const op = MemoryStore.open(file);
  t.after(() => op.close());
  assert.equal(op.recall(ids.private).scope, 'alpha');
  assert.equal(op.recall(ids.thread).scope, 'alpha');
  assert.equal(op.recall(ids.sharedByAlpha).scope, null);
  assert.equal(op.recall(ids.shared).scope, null);
  assert.equal((op.auditLog().find((a) => a.action === 'observe' && a.target === `memory:${ids.private}`)!.after as { scope: string }).scope, 'alpha');
});

test("another agent's view finds none of an agent's private memories by any route of the store; the operator and the control find them", async (t) => {
  const { file, ids } = await seeded(t);
  const op = MemoryStore.open(file, { now: () => LATER });
  t.after(() => op.close());
  const beta = op.as('beta');
  const alpha = op.as('alpha');
  const hidden = new Set(privateIds(ids));
  const leaks = (xs: number[]) => xs.filter((x) => hidden.has(x));

  // query: by its words, and with faded and superseded ones too.
  for (const q of [`${WORD} depot key`, 'lighthouse depot Tuesday', 'depot gate code']) {
    assert.deepEqual(leaks((await beta.query(q, { include_faded: true, limit: 50 })).map((r) => r.id)), [], q);
  }
  // Control: the operator and alpha find it.
  assert.ok((await op.query(`${WORD} depot key`)).some((r) => r.id === ids.private));
  assert.ok((await alpha.query(`${WORD} depot key`)).some((r) => r.id === ids.private));
  // Shared ones, alpha's own shared write included, are everyone's.
  assert.ok((await beta.query('VPN gateway port')).some((r) => r.id === ids.sharedByAlpha));

  // The walk: from a shared memory through alpha's private one to another shared one.
  const walk = 'staging host lighthouse nightly backups';
  assert.ok((await op.query(walk, { limit: 20 })).some((r) => r.id === ids.bridge), 'control: the operator reaches the bridge through the private memory');
  const betaWalk = (await beta.query(walk, { limit: 20, explain: true })).map((r) => r.id);
  assert.deepEqual(leaks(betaWalk), []);
  assert.ok(!betaWalk.includes(ids.bridge), 'beta never walks through alpha\'s memory');

  // recall, and the edges of what it may see.
  for (const id of hidden) notFound(() => beta.recall(id));
  assert.deepEqual(leaks(beta.recall(ids.shared).edges.map((e) => e.to)), []);
  assert.ok(op.recall(ids.shared).edges.some((e) => e.to === ids.private));

  // Writes that name a private memory.
  notFound(() => beta.link(ids.shared, ids.private, 'supports', 0.5, MCP));
  notFound(() => beta.contradict(ids.private, ids.shared, null, MCP));
  notFound(() => beta.review(ids.private, 'good', MCP));
  notFound(() => beta.resolveThread(ids.thread, 'done', MCP));
  notFound(() => beta.resolvePrediction(ids.prediction, 'correct', null, MCP));
  assert.deepEqual(beta.gradeSession({ sessionId: 'S-beta', outcome: 'ok', recalledIds: [ids.private], usedIds: [ids.private] }), []);

  // The lists the state is made of.
  assert.deepEqual(leaks(beta.threads({ limit: 100 }).map((x) => x.id)), []);
  assert.deepEqual(leaks(beta.topBeliefs(50).map((x) => x.id)), []);
  assert.deepEqual(leaks(beta.surprisesSince('', 50).map((x) => x.id)), []);
  assert.deepEqual(leaks(beta.overdue(LATER, 50).map((x) => x.id)), []);
  assert.deepEqual(beta.contradictionCandidates(null, 50).filter((c) => hidden.has(c.a) || hidden.has(c.b)), []);
  assert.ok(alpha.threads({ limit: 100 }).some((x) => x.id === ids.thread), 'control: alpha sees its thread');
  assert.ok(op.overdue(LATER, 50).some((x) => x.id === ids.private), 'control: overdue by then');
  assert.ok(alpha.contradictionCandidates(null, 50).some((c) => c.a === ids.private || c.b === ids.private));
  const sv = StateView.open(file, 'beta')!;
  t.after(() => sv.close());
  assert.deepEqual(leaks(sv.identityCandidates(50).map((x) => x.id)), []);

  // wander: no step, and no bridge, over a private memory, whatever the seed.
  for (let seed = 0; seed < 40; seed++) assert.deepEqual(leaks(beta.wander({ steps: 20, seed }).path.map((p) => p.id)), [], `seed ${seed}`);
  assert.ok(Array.from({ length: 40 }, (_, seed) => op.wander({ steps: 20, seed }).path).flat().some((p) => hidden.has(p.id)), 'control: the operator wanders there');

  // The control of the config: under memory.scope shared, beta's view is the whole store.
  const off = op.as(viewOf({ memory: { scope: 'shared' } }, 'beta'));
  assert.ok((await off.query(`${WORD} depot key`)).some((r) => r.id === ids.private));
  assert.equal(off.recall(ids.private).id, ids.private);
});

test("capture's merge targets: a session's item is never folded into another agent's private memory, and is its own agent's", async (t) => {
  const { file, ids } = await seeded(t);
  const op = MemoryStore.open(file);
  t.after(() => op.close());
  const count = () => op.stats().memories;
  const item = { text: PRIVATE_TEXT, category: 'value' as const, salience: 0.5, tags: [] };
  const before = count();
  await applyLeft(op, { session: 'S-beta-1', agent: 'beta', kind: 'store', item });
  assert.equal(count(), before + 1, 'a memory of its own for beta');
  const mine = op.auditLog().filter((a) => a.action === 'observe' && a.session_id === 'S-beta-1').at(-1)!.after as { memory_id: number; linked_to: number | null; scope: string };
  assert.notEqual(mine.memory_id, ids.private);
  assert.notEqual(mine.linked_to, ids.private);
  assert.equal(op.recall(mine.memory_id).scope, 'beta');
  // Control: alpha's own capture merges into it.
  await applyLeft(op, { session: 'S-alpha-2', agent: 'alpha', kind: 'store', item });
  assert.equal(count(), before + 1);
  // A spool written before scopes (no agent): the whole store, written shared.
  await applyLeft(op, { session: 'S-old', kind: 'store', item: { ...item, text: 'An old spooled note about the kettle in room four' } });
  const old = op.auditLog().filter((a) => a.session_id === 'S-old').at(-1)!.after as { memory_id: number };
  assert.equal(op.recall(old.memory_id).scope, null);
  // A shared write is never merged into a private memory either.
  const r = await op.as('alpha').observe({ text: PRIVATE_TEXT, shared: true }, MCP);
  assert.notEqual(r.decision, 'merge');
  assert.equal(op.recall(r.memory_id).scope, null);
});

test("the state of another agent's session holds nothing of an agent's private memory; with memory.scope shared it does", async (t) => {
  const dir = tempDir(t);
  const mk = (scope: 'agent' | 'shared') => validateConfig({ state_dir: './state', git: { enabled: false }, memory: { scope } }, path.join(dir, 'nightshift.yaml')).config!;
  const config = mk('agent');
  fs.mkdirSync(config.state_dir, { recursive: true });
  await seed(path.join(config.state_dir, 'memory.db'));
  const ledger = Ledger.open(path.join(dir, 'ledger.db'));
  t.after(() => ledger.close());
  const state = async (c: typeof config, name: string) =>
    JSON.stringify(await gatherState({ config: c, agent: { name, maxRunsPerDay: null }, sessionId: null, unattended: true, ledger, now: LATER, redact: (x) => x }));
  assert.doesNotMatch(await state(config, 'beta'), new RegExp(WORD));
  assert.match(await state(config, 'alpha'), new RegExp(WORD), 'its own agent sees it');
  assert.match(await state(mk('shared'), 'beta'), new RegExp(WORD), 'control: scope off');
});

async function connect(t: TestContext, url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'nightshift-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  t.after(() => client.close());
  return client;
}

test("over a session's own MCP server the agent is the supervisor's: beta's session never finds alpha's private memory; with scope off it does", async (t) => {
  const dir = tempDir(t, 'nightshift-scope-mcp-');
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  const cfg = (scope: string) => {
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), `${configYaml()}memory:\n  scope: ${scope}\n`);
    return loadConfig(path.join(dir, 'nightshift.yaml'));
  };
  const logger = createLogger({ redact: (x) => x, level: 'warn', stderr: { write: () => {} } });
  const session = async (config: ReturnType<typeof cfg>, id: string, agent: string) => {
    const mem = await serveSessionMemory(config, { PATH: process.env.PATH }, logger, id, '1.2.3', null, agent);
    t.after(() => mem.close());
    return connect(t, mem.url, mem.token);
  };
  const out = (r: any) => r.structuredContent as any;
  const config = cfg('agent');
  const a = await session(config, 'S-alpha', 'alpha');
  const mine = out(await a.callTool({ name: 'observe', arguments: { text: PRIVATE_TEXT } })).memory_id;
  const everyone = out(await a.callTool({ name: 'observe', arguments: { text: 'Everyone: the VPN gateway moved to port 51821', shared: true } })).memory_id;
  assert.ok(out(await a.callTool({ name: 'query', arguments: { query: `${WORD} depot key` } })).results.some((r: any) => r.id === mine));

  const b = await session(config, 'S-beta', 'beta');
  // No argument names the agent: the server's schema has none, and a stray one is refused.
  const stray = await b.callTool({ name: 'query', arguments: { query: `${WORD} depot key`, agent: 'alpha' } });
  assert.equal(stray.isError, true);
  assert.deepEqual(out(await b.callTool({ name: 'query', arguments: { query: `${WORD} depot key`, include_faded: true } })).results.filter((r: any) => r.id === mine), []);
  assert.ok(out(await b.callTool({ name: 'query', arguments: { query: 'VPN gateway port' } })).results.some((r: any) => r.id === everyone));
  const rec = await b.callTool({ name: 'recall', arguments: { id: mine } });
  assert.equal(rec.isError, true);
  assert.match((rec.content as any)[0].text, /NOT_FOUND/);
  for (let seed = 0; seed < 10; seed++) assert.ok(!out(await b.callTool({ name: 'wander', arguments: { steps: 10, seed } })).path.some((p: any) => p.id === mine));

  // Control: the same store under memory.scope shared; beta's next session finds it.
  const c = await session(cfg('shared'), 'S-beta-2', 'beta');
  assert.ok(out(await c.callTool({ name: 'query', arguments: { query: `${WORD} depot key` } })).results.some((r: any) => r.id === mine));
});

test('`memory query --agent NAME` shows what that agent may see; without it the operator sees all', async (t) => {
  const dir = tempDir(t, 'nightshift-scope-cli-');
  for (const d of ['vault', 'prompts', 'state']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
  const { ids } = await seed(path.join(dir, 'state', 'memory.db'));
  const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const q = async (...extra: string[]) => {
    const r = await nightshift(['memory', 'query', `${WORD} depot key`, '--json', ...extra], env, dir);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as Array<{ id: number }>).map((x) => x.id);
  };
  assert.ok((await q()).includes(ids.private));
  assert.ok((await q('--agent', 'alpha')).includes(ids.private));
  assert.ok(!(await q('--agent', 'beta')).includes(ids.private));
  const bad = await nightshift(['memory', 'query', 'x', '--agent', 'No Such'], env, dir);
  assert.equal(bad.code, 64, bad.stderr);
  assert.match(bad.stderr, /--agent/);
});

test('export and import keep whose a memory is; only the operator places a memory in a scope by name', async (t) => {
  const { file, ids } = await seeded(t);
  const op = MemoryStore.open(file);
  t.after(() => op.close());
  const lines = [...op.exportAll()];
  assert.equal(lines.find((l) => l.text === PRIVATE_TEXT)?.scope, 'alpha');
  assert.equal(lines.find((l) => l.text.startsWith('Everyone: the VPN'))?.scope, undefined);
  // What an agent's view exports is what it sees.
  assert.ok(![...op.as('beta').exportAll()].some((l) => l.text.includes(WORD)));
  const copy = MemoryStore.open(path.join(tempDir(t), 'memory.db'));
  t.after(() => copy.close());
  const r = await copy.observeMany(lines.map((l) => parseImportLine(JSON.stringify({ ...l, source: l.source ?? 'x' })))
    .map((p) => (assert.ok(p?.ok), p.input)), { surface: 'import', sessionId: null });
  const privateCopy = (r.find((x, i) => lines[i].text === PRIVATE_TEXT) as { memory_id: number }).memory_id;
  assert.equal(copy.recall(privateCopy).scope, 'alpha');
  assert.ok(!(await copy.as('beta').query(`${WORD} depot key`)).some((x) => x.id === privateCopy));
  await assert.rejects(async () => op.as('beta').observe({ text: 'A note placed in another scope', scope: 'alpha' }, MCP), /scope/);
  assert.equal(parseImportLine(JSON.stringify({ text: 'x', source: 'y', scope: 'Not An Agent' }))?.ok, false);
});

// Supersession ends the older memory's validity for everyone who sees it, so a view may make one
// only over what it owns (memory/store/scope.ts supersedeProblem).
const FERRY_OLD = 'The harbour ferry to the island leaves from pier two';
const FERRY_NEW = 'The harbour ferry to the island now leaves from pier nine';
const FERRY_Q = 'harbour ferry island pier';

test("an agent's `supersedes` link on a shared memory is refused and changes nothing another agent sees; with the scope off it hides it from beta now and as of then", async (t) => {
  const op = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => T0 });
  t.after(() => op.close());
  const alpha = op.as('alpha');
  const beta = op.as('beta');
  const shared = (await op.observe({ text: FERRY_OLD, valid_from: '2025-01-01' }, CLI)).memory_id;
  const mine = (await alpha.observe({ text: FERRY_NEW, valid_from: '2026-02-01', shared: false }, MCP)).memory_id;
  assert.equal(op.recall(mine).scope, 'alpha');
  const seenByBeta = async () => [(await beta.query(FERRY_Q)).map((r) => r.id), (await beta.query(FERRY_Q, { as_of: '2026-02-15' })).map((r) => r.id)];
  assert.deepEqual(await seenByBeta(), [[shared], [shared]]);

  for (const act of [() => alpha.link(mine, shared, 'supersedes', 0.5, MCP), () => alpha.supersede(shared, mine, MCP)]) {
    assert.throws(act, (e: unknown) => e instanceof MemoryError && e.code === 'PERMISSION' && new RegExp(`#${shared} is shared.*only the operator`).test(e.message));
  }
  const kept = beta.recall(shared);
  assert.deepEqual([kept.superseded_by, kept.valid_to, kept.edges.filter((e) => e.type === 'supersedes')], [null, null, []], 'no edge, no end of validity');
  // The one supersedes edge is the gate's mark from alpha's own memory (possibly outdated, in
  // alpha's view only; docs/memory.md, Updates): its validity is untouched.
  assert.deepEqual(op.recall(shared).edges.filter((e) => e.type === 'supersedes'), [{ type: 'supersedes', to: mine, weight: 1, direction: 'in' }]);
  assert.deepEqual(await seenByBeta(), [[shared], [shared]]);
  // Another agent's memory is not there to supersede.
  notFound(() => beta.link(shared, mine, 'supersedes', 0.5, MCP));

  // Control: the same link with the scope check off ends the shared memory for beta too, now and
  // as of any time after alpha's began, and beta cannot see what replaced it.
  const unchecked = MemoryStore.open(op.file, { now: () => T0, crossScopeStanding: true });
  t.after(() => unchecked.close());
  unchecked.as('alpha').link(mine, shared, 'supersedes', 0.5, MCP);
  assert.equal(op.recall(shared).valid_to, '2026-02-01T00:00:00.000Z');
  assert.deepEqual(await seenByBeta(), [[], []], 'beta lost the shared fact and cannot see what replaced it');
});

test("an agent's `supersedes` link on its own memory ends its validity when the newer began, as supersede does", async (t) => {
  // The gate would end it at observe (a changed value, docs/memory.md); this is the explicit link.
  const op = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => T0, knowledgeUpdates: false });
  t.after(() => op.close());
  const alpha = op.as('alpha');
  const older = (await alpha.observe({ text: FERRY_OLD, valid_from: '2025-01-01' }, MCP)).memory_id;
  const newer = (await alpha.observe({ text: FERRY_NEW, valid_from: '2026-02-01', shared: true }, MCP)).memory_id;
  // Control: before the link both hold now.
  assert.deepEqual((await alpha.query(FERRY_Q)).map((r) => r.id).sort(), [older, newer].sort());
  assert.deepEqual(alpha.link(newer, older, 'supersedes', 0.7, MCP), { from: newer, to: older, type: 'supersedes', weight: 0.7 });
  const r = alpha.recall(older);
  assert.deepEqual([r.superseded_by, r.valid_to], [newer, '2026-02-01T00:00:00.000Z']);
  assert.ok(r.edges.some((e) => e.type === 'supersedes' && e.to === newer && e.weight === 0.7 && e.direction === 'in'));
  assert.deepEqual((await alpha.query(FERRY_Q)).map((r) => r.id), [newer]);
  assert.deepEqual((await alpha.query(FERRY_Q, { as_of: '2025-06-01' })).map((r) => r.id), [older], 'it held before the newer began');
  alpha.link(newer, older, 'supersedes', 0.7, MCP);
  const audit = op.auditLog().filter((a) => a.target === `memory:${older}` && a.action === 'supersede');
  assert.equal(audit.length, 1, 'linked again: the same supersession, not a second one');
  assert.equal(audit[0].session_id, MCP.sessionId);
});

test("the operator supersedes a shared memory for every agent, but never by a memory some of its readers cannot see", async (t) => {
  const op = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => T0 });
  t.after(() => op.close());
  const shared = (await op.observe({ text: FERRY_OLD, valid_from: '2025-01-01' }, CLI)).memory_id;
  const alphas = (await op.as('alpha').observe({ text: FERRY_NEW, valid_from: '2026-02-01' }, MCP)).memory_id;
  assert.throws(() => op.link(alphas, shared, 'supersedes', 1, CLI), (e: unknown) => e instanceof MemoryError && e.code === 'INVALID' && /everyone who sees #\d+ \(shared\) sees, got #\d+ \(alpha's own\)/.test(e.message));
  assert.deepEqual((await op.as('beta').query(FERRY_Q)).map((r) => r.id), [shared], 'beta keeps the fact it would have lost with nothing in its place');
  const everyones = (await op.observe({ text: 'From March the island ferry sails from the new pier nine terminal', valid_from: '2026-03-01' }, CLI)).memory_id;
  op.link(everyones, shared, 'supersedes', 1, CLI);
  assert.equal(op.recall(shared).valid_to, '2026-03-01T00:00:00.000Z');
  for (const agent of ['alpha', 'beta']) assert.ok(!(await op.as(agent).query(FERRY_Q)).some((r) => r.id === shared), agent);
});

// The gate never supersedes (merge, link or novel): no write of an agent's view but an explicit
// supersession of its own ends a memory's validity, so none reaches a shared one.
test("no automatic write of an agent's view ends a shared memory's validity: near-duplicates, updates and contradictions leave it held for beta", async (t) => {
  const op = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => T0 });
  t.after(() => op.close());
  const alpha = op.as('alpha');
  const shared = (await op.observe({ text: FERRY_OLD, valid_from: '2025-01-01' }, CLI)).memory_id;
  const writes = [
    await alpha.observe({ text: FERRY_OLD }, MCP),
    await alpha.observe({ text: `${FERRY_OLD} again today` }, MCP),
    await alpha.observe({ text: FERRY_NEW, valid_from: '2026-02-01' }, MCP),
    await alpha.observe({ text: 'The harbour ferry to the island no longer leaves from pier two' }, MCP),
  ];
  assert.ok(writes.every((w) => w.memory_id !== shared), 'never folded into the shared memory');
  await alpha.believe({ text: `${FERRY_NEW} for certain`, confidence: 0.9 }, MCP);
  // A contradiction of the shared memory is refused (test/memory/store/standing.test.ts); alpha links its own.
  assert.throws(() => alpha.contradict(shared, writes[3].memory_id, null, MCP), (e: unknown) => e instanceof MemoryError && e.code === 'PERMISSION');
  alpha.link(writes[3].memory_id, shared, 'contradicts', 1, MCP);
  const r = op.recall(shared);
  assert.deepEqual([r.superseded_by, r.valid_to, r.faded], [null, null, false]);
  assert.ok((await op.as('beta').query(FERRY_Q)).some((x) => x.id === shared));
  // (Alpha's FERRY_NEW does end alpha's own copy of the old words, writes[0]: its own memory.)
  assert.ok(!op.auditLog().some((a) => a.action === 'supersede' && a.target === `memory:${shared}`), 'nothing shared was superseded');
  // Control: these checks see a supersession when there is one.
  op.supersede(shared, (await op.observe({ text: 'The island ferry sails from the new terminal from March', valid_from: '2026-03-01' }, CLI)).memory_id, CLI);
  assert.notEqual(op.recall(shared).valid_to, null);
  assert.ok(!(await op.as('beta').query(FERRY_Q)).some((x) => x.id === shared));
});

test('`memory link FROM TO supersedes`: the operator ends a shared memory for every agent from the command line', async (t) => {
  const dir = tempDir(t, 'nightshift-link-cli-');
  for (const d of ['vault', 'prompts', 'state']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
  const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const run = (...args: string[]) => nightshift(['memory', ...args], env, dir);
  const id = async (text: string, from: string) => JSON.parse((await run('observe', text, '--valid-from', from, '--json')).stdout).memory_id as number;
  const older = await id(FERRY_OLD, '2025-01-01');
  const newer = await id('From March the island ferry sails from the new pier nine terminal', '2026-03-01');
  const r = await run('link', String(newer), String(older), 'supersedes', '--json');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { from: newer, to: older, type: 'supersedes', weight: 0.5 });
  const rec = JSON.parse((await run('recall', String(older), '--json')).stdout);
  assert.deepEqual([rec.superseded_by, rec.valid_to], [newer, '2026-03-01T00:00:00.000Z']);
  const q = JSON.parse((await run('query', FERRY_Q, '--agent', 'beta', '--json')).stdout).map((x: { id: number }) => x.id);
  assert.ok(!q.includes(older));
  const bad = await run('link', String(newer), String(older), 'replaces');
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /edge type/);
  const weight = await run('link', String(newer), String(older), 'relates_to', '--weight', '2');
  assert.equal(weight.code, 64);
  assert.match(weight.stderr, /--weight/);
});
