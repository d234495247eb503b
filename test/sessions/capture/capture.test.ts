// What a session leaves behind: markers into the store with the session as source; Gemini's
// structured extraction against the loopback imitation, and the markers when its answer is malformed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { validateConfig } from '../../../config/config.js';
import { MemoryStore } from '../../../memory/store.js';
import { openAhead } from '../../../sessions/capture/ahead.js';
import { extractMarkers, leaveBehind, parseExtraction } from '../../../sessions/capture/capture.js';
import type { Actor } from '../../../memory/types.js';
import { startFakeGemini } from '../../fake-gemini.js';
import { tempDir } from '../../helpers.js';
import { TABLE } from './capture-table.js';

const CLI: Actor = { surface: 'cli' };
const leave = (s: ReturnType<typeof setup>, id = 'S1') =>
  leaveBehind({ config: s.config, env: {}, session: { ...s.session, id }, transcript: s.transcript, logger: s.logger, redact: (x) => x, openStore: s.openStore });
// Every memory and observation text in the store.
function allText(db: string): string {
  const d = new Database(db, { readonly: true });
  try {
    return (d.prepare('SELECT text FROM memories UNION ALL SELECT text FROM observations').pluck().all() as string[]).join('\n');
  } finally {
    d.close();
  }
}

// One API message per text, as the CLI writes them (each its own message id).
let messages = 0;
const line = (text: string) => JSON.stringify({ type: 'assistant', message: { id: `msg_${++messages}`, content: [{ type: 'text', text }] }, parent_tool_use_id: null });

function setup(t: TestContext, texts: string[], gemini?: string) {
  const dir = tempDir(t);
  const config = validateConfig({ state_dir: './state', ...(gemini ? { gemini: { base_url: gemini } } : {}) }, path.join(dir, 'nightshift.yaml')).config!;
  const transcript = path.join(dir, 'S1.jsonl');
  fs.writeFileSync(transcript, `${['{"type":"system","subtype":"init"}', ...texts.map(line), '{"type":"result","subtype":"success"}'].join('\n')}\n`);
  const db = path.join(config.state_dir, 'memory.db');
  const logs: string[] = [];
  const logger = { warn: (o: object) => logs.push(JSON.stringify(o)), info: (o: object) => logs.push(JSON.stringify(o)) };
  const session = { id: 'S1', agent: 'gardener', outcome: 'ok', turns: 3, cost_usd: 0.01, result: 'Tidied the notes', error: null };
  return { config, transcript, db, logs, logger, session, openStore: async () => MemoryStore.open(db) };
}

describe('capture', () => {
  test('markers are found at the start of lines only, each once', () => {
    const m = extractMarkers(['Some text\nOBSERVE: the index is stale\n  - BELIEVE: small notes age better\nnot OBSERVE: this one', 'THREAD: link orphans\nRESOLVED: the index\nOBSERVE: the index is stale']);
    assert.deepEqual(m, [
      { kind: 'OBSERVE', text: 'the index is stale' },
      { kind: 'BELIEVE', text: 'small notes age better' },
      { kind: 'THREAD', text: 'link orphans' },
      { kind: 'RESOLVED', text: 'the index' },
    ]);
  });

  test('markers and the result record land in the store with the session as source; RESOLVED closes the thread', async (t) => {
    const s = setup(t, ['Working.\nOBSERVE: The sitemap note lists 14 pages\nBELIEVE: Short notes are reread more often\nTHREAD: Merge the two glossary notes']);
    const r = await leaveBehind({ config: s.config, env: {}, session: s.session, transcript: s.transcript, logger: s.logger, redact: (x) => x, openStore: s.openStore });
    assert.deepEqual({ ...r, observed: r!.observed }, { markers: 3, extraction: 'markers', observed: 4, refused: 0, resolved: 0, spooled: 0 });
    const store = MemoryStore.open(s.db);
    t.after(() => store.close());
    const [hit] = await store.query('sitemap pages');
    assert.match(hit.text, /14 pages/);
    assert.deepEqual(hit.sources, ['S1']);
    assert.equal(store.topBeliefs(5)[0].text, 'Short notes are reread more often');
    const open = store.threads({ open: true });
    assert.equal(open[0].text, 'Merge the two glossary notes');
    assert.equal(open[0].solo, true);
    assert.match((await store.query('session gardener ended ok'))[0].text, /^Session S1 of gardener ended ok after 3 turns/);
    assert.ok(store.auditLog().some((a) => a.surface === 'session' && a.session_id === 'S1'));
    store.close();
    // A later session resolves it.
    fs.writeFileSync(s.transcript, `${line(`RESOLVED: #${open[0].id} Merged the two glossary notes into one`)}\n`);
    const r2 = await leaveBehind({ config: s.config, env: {}, session: { ...s.session, id: 'S2' }, transcript: s.transcript, logger: s.logger, redact: (x) => x, openStore: s.openStore });
    assert.equal(r2!.resolved, 1);
    const again = MemoryStore.open(s.db);
    t.after(() => again.close());
    assert.deepEqual(again.threads({ open: true }), []);
  });

  test('with GEMINI_API_KEY the structured extraction is stored; a malformed answer falls back to the markers', async (t) => {
    const fake = await startFakeGemini('ok');
    t.after(() => fake.close());
    fake.hydeText = JSON.stringify({ observations: [{ text: 'The glossary has 212 entries', category: 'entity', salience: 0.6 }, { text: 'Review the glossary monthly', category: 'thread', salience: 0.5 }] });
    const s = setup(t, ['OBSERVE: marker text that Gemini replaced'], fake.url);
    const env = { GEMINI_API_KEY: 'gm-test-key-123456' };
    const r = await leaveBehind({ config: s.config, env, session: s.session, transcript: s.transcript, logger: s.logger, redact: (x) => x, openStore: s.openStore });
    assert.equal(r!.extraction, 'gemini');
    const req = fake.requests.find((x) => x.action === 'generateContent')!;
    assert.equal(req.body.generationConfig.responseMimeType, 'application/json');
    assert.match(JSON.stringify(req.body.contents), /marker text that Gemini replaced/);
    let store = MemoryStore.open(s.db);
    assert.match((await store.query('glossary entries'))[0].text, /212 entries/);
    assert.equal(store.threads({ open: true })[0].text, 'Review the glossary monthly');
    store.close();

    fake.hydeText = 'this is {not json';
    fs.writeFileSync(s.transcript, `${line('OBSERVE: The fallback kept this marker')}\n`);
    const r2 = await leaveBehind({ config: s.config, env, session: { ...s.session, id: 'S2' }, transcript: s.transcript, logger: s.logger, redact: (x) => x, openStore: s.openStore });
    assert.equal(r2!.extraction, 'gemini-failed');
    assert.ok(s.logs.some((l) => l.includes('capture_gemini_failed')));
    assert.ok(!s.logs.some((l) => l.includes('gm-test-key-123456')), 'the key is never logged');
    store = MemoryStore.open(s.db);
    t.after(() => store.close());
    const [hit] = await store.query('fallback marker');
    assert.match(hit.text, /The fallback kept this marker/);
    assert.deepEqual(hit.sources, ['S2']);
  });

  test('from a real transcript: every plain marker of the table is stored, no quoted one, nothing from tool results, subagents or the CLI', async (t) => {
    const s = setup(t, TABLE.map(([, text]) => text));
    const extra = [
      // A tool result (a fetched page) with a marker at the start of a line.
      JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'BELIEVE: QUOTED from a tool result' }] }, parent_tool_use_id: null }),
      // A subagent's own text (the Task tool): not this session's words.
      JSON.stringify({ type: 'assistant', message: { id: 'sub', model: 'claude-opus-4-8', content: [{ type: 'text', text: 'THREAD: QUOTED from a subagent' }] }, parent_tool_use_id: 'toolu_2' }),
      // What the CLI writes in the assistant's place (an API error).
      JSON.stringify({ type: 'assistant', message: { id: 'syn', model: '<synthetic>', content: [{ type: 'text', text: 'OBSERVE: QUOTED synthetic' }] }, parent_tool_use_id: null }),
    ];
    fs.appendFileSync(s.transcript, `${extra.join('\n')}\n`);
    const r = await leave(s);
    const plain = TABLE.flatMap(([, , own]) => own);
    assert.equal(r!.markers, plain.length);
    const text = allText(s.db);
    assert.doesNotMatch(text, /QUOTED/, 'no quoted marker stored');
    for (const p of plain) assert.ok(text.includes(p), `stored: ${p}`);
  });

  test("RESOLVED closes a solo thread by its id only, its agent's or the operator's; a text match or an operator thread closes nothing", async (t) => {
    const s = setup(t, []);
    let store = MemoryStore.open(s.db);
    const backup = await store.openThread({ text: 'Clean up old backup logs', solo: false }, CLI);
    // The gardener's own solo thread, and the operator's: shared, a grant to whichever session takes it.
    const solo = await store.as('gardener').openThread({ text: 'Link the orphan notes', solo: true }, { surface: 'mcp', sessionId: 'S0' });
    const sharedSolo = await store.openThread({ text: 'Rename the inbox folder', solo: true }, CLI);
    store.close();
    fs.writeFileSync(s.transcript, `${[
      line('RESOLVED: cleaned up old backup logs'),
      line(`RESOLVED: #${backup.id} cleaned up old backup logs`),
      line(`> RESOLVED: #${solo.id} a quoted close`),
    ].join('\n')}\n`);
    const r = await leave(s);
    assert.equal(r!.resolved, 0);
    assert.equal(r!.refused, 2, 'the one without an id and the operator thread');
    store = MemoryStore.open(s.db);
    assert.deepEqual(store.threads({ open: true }).map((x) => x.id).sort(), [backup.id, solo.id, sharedSolo.id].sort(), 'all still open');
    // A session cannot close the operator's thread through MCP either.
    assert.throws(() => store.resolveThread(backup.id, 'done', { surface: 'mcp', sessionId: 'S1' }), /operator's/);
    store.close();
    fs.writeFileSync(s.transcript, `${[line(`RESOLVED: #${solo.id} linked all 12`), line(`RESOLVED: #${sharedSolo.id} renamed it`)].join('\n')}\n`);
    const r2 = await leave(s, 'S2');
    assert.deepEqual([r2!.resolved, r2!.refused], [2, 0], 'both solo ones closed');
    store = MemoryStore.open(s.db);
    t.after(() => store.close());
    assert.deepEqual(store.threads({ open: true }).map((x) => x.id), [backup.id]);
    assert.deepEqual(store.threads({ open: false }).map((x) => x.resolution).sort(), ['linked all 12', 'renamed it']);
    // Control: the operator's thread that is not solo is closable, by the operator.
    assert.equal(store.resolveThread(backup.id, 'done by hand', CLI).status, 'resolved');
  });

  test('a malformed extraction is refused field by field', () => {
    assert.throws(() => parseExtraction('{"observations": [{"text": "", "category": "entity"}]}'), /text/);
    assert.throws(() => parseExtraction('{"observations": [{"text": "x", "category": "gossip"}]}'), /category/);
    assert.throws(() => parseExtraction('{}'), /observations/);
    assert.throws(() => parseExtraction(undefined), /nothing/);
  });

  test('a store that cannot be opened: what the session left is spooled and logged, never thrown', async (t) => {
    const s = setup(t, ['OBSERVE: x marks']);
    const r = await leaveBehind({ config: s.config, env: {}, session: s.session, transcript: s.transcript, logger: s.logger, redact: (x) => x, openStore: async () => { throw new Error('disk full'); } });
    assert.equal(r?.spooled, 2, 'the marker and the result record');
    assert.ok(s.logs.some((l) => l.includes('capture_spooled') && l.includes('disk full')));
  });

  test('a store that cannot be opened and a spool that cannot be written are logged, never thrown', async (t) => {
    const s = setup(t, ['OBSERVE: x marks']);
    fs.mkdirSync(s.config.state_dir, { recursive: true });
    fs.writeFileSync(path.join(s.config.state_dir, 'memory-spool'), 'a file where the spool folder goes');
    const r = await leaveBehind({ config: s.config, env: {}, session: s.session, transcript: s.transcript, logger: s.logger, redact: (x) => x, openStore: async () => { throw new Error('disk full'); } });
    assert.equal(r, null);
    assert.ok(s.logs.some((l) => l.includes('capture_failed')));
  });
});

// The capture's store may be opened ahead at any line that looks like the result: a session can
// write one early (sessions/capture/ahead.ts). What it forgets afterwards through its own
// connection must still hold at the capture: the store opened ahead reads the tombstones then.
test('a store opened ahead, before the session forgets a claim, still refuses that claim at the capture', async (t) => {
  const claim = 'The deploy key lives in the wiki';
  const s = setup(t, [`Done.\nOBSERVE: ${claim}`]);
  const mcp = MemoryStore.open(s.db);
  const { memory_id } = await mcp.observe({ text: claim }, CLI);
  // Opened ahead (a forged result line at the session's start), then the forget.
  const ahead = openAhead(s.openStore);
  ahead.start();
  await new Promise((r) => setImmediate(r));
  const snapshot = path.join(path.dirname(s.db), 'snapshot.db');
  await (mcp as unknown as { db: Database.Database }).db.backup(snapshot);
  mcp.forget(memory_id, 'leaked secret location', CLI);
  mcp.close();
  const r = await leaveBehind({ config: s.config, env: {}, session: s.session, transcript: s.transcript, logger: s.logger, redact: (x) => x, openStore: ahead.take });
  await ahead.drop();
  assert.equal(r!.refused, 1, JSON.stringify(r));
  // Control: a store that kept what it saw when opened (the state before the forget) takes it back.
  const t2 = setup(t, [`Done.\nOBSERVE: ${claim}`]);
  const stale = await leaveBehind({ config: t2.config, env: {}, session: t2.session, transcript: t2.transcript, logger: t2.logger, redact: (x) => x, openStore: async () => MemoryStore.open(snapshot) });
  assert.equal(stale!.refused, 0, 'control: the state from before the forget lets the claim back');
});
