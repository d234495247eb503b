import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { LOCOMO_DEV, memoryRecall } from '../../../bench/memory-recall.js';
import { dream } from '../../../memory/dream/dream.js';
import { spreadActivation } from '../../../memory/recall/rank.js';
import { openDatabase } from '../../../memory/store/schema.js';
import { DEFAULT_WEIGHTS, MemoryStore, type StoreOptions } from '../../../memory/store.js';
import { parseImportLine } from '../../../memory/text/jsonl.js';
import { transcriptSpeaker } from '../../../memory/text/speaker.js';
import type { Actor, ObserveInput } from '../../../memory/types.js';
import { tempDir } from '../../helpers.js';

const IMPORT: Actor = { surface: 'import', sessionId: null };
const NO_DATA = fs.existsSync(path.join(LOCOMO_DEV, '26.json')) ? false : `no LoCoMo dev data at ${LOCOMO_DEV}`;

function open(t: Parameters<typeof tempDir>[0], opts: StoreOptions = {}): MemoryStore {
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), opts);
  t!.after(() => s.close());
  return s;
}

const sharesOf = (s: MemoryStore, id: number) => s.recall(id).edges.filter((e) => e.type === 'shares');

// Filler sessions so that a word in a handful of memories is rare by the store's measure.
function filler(n: number): ObserveInput[] {
  const words = ['kettle', 'window', 'garden', 'letter', 'bridge', 'market', 'candle', 'ladder', 'pillow', 'violin', 'carpet', 'tunnel'];
  return Array.from({ length: n }, (_, i) => ({
    text: `note ${i}: the ${words[i % 12]} and the ${words[(i * 5 + 3) % 12]} by the ${words[(i * 7 + 1) % 12]} ${i}`,
    source: `f${i}`,
    created_at: new Date(Date.UTC(2024, 0, 1 + (i % 40))).toISOString(),
  }));
}

test('a transcript line names its speaker on import; a given speaker wins; prose does not', () => {
  assert.equal(transcriptSpeaker('Caroline: I went to the support group.'), 'Caroline');
  assert.equal(transcriptSpeaker('Jon Smith: the studio opens Monday'), 'Jon Smith');
  assert.equal(transcriptSpeaker('the plan: ship on Monday'), null);
  assert.equal(transcriptSpeaker('Caroline:no space'), null);
  const p = parseImportLine(JSON.stringify({ text: 'Gina: hello', source: 'D1:1' }));
  assert.equal(p?.ok && p.input.speaker, 'Gina');
  const q = parseImportLine(JSON.stringify({ text: 'Gina: hello', source: 'D1:1', speaker: 'operator' }));
  assert.equal(q?.ok && q.input.speaker, 'operator');
});

test('a query naming a speaker prefers what that speaker said or what is about them; with the prior off it does not', async (t) => {
  const lines: ObserveInput[] = [
    { text: 'I liked the shelter cat so much I adopted the cat', source: 'b1', speaker: 'Bob' },
    { text: 'a cat at the shelter', source: 'a1', speaker: 'Alice' },
    { text: 'I hear Alice went to the shelter, lovely', source: 'b2', speaker: 'Bob' },
  ];
  const on = open(t);
  await on.observeMany(lines, IMPORT);
  const question = 'Which shelter cat did Alice like?';
  const ranked = (await on.query(question, { limit: 3 })).map((r) => r.sources[0]);
  assert.equal(ranked.at(-1), 'b1', `Expected Bob's own cat last, got ${ranked.join(', ')}`);
  // Bob's remark about Alice is about her: it keeps its score, Bob's own cat does not.
  assert.ok(ranked.indexOf('b2') < ranked.indexOf('b1'), `Expected b2 above b1, got ${ranked.join(', ')}`);
  const off = open(t, { weights: { speaker: 0 } });
  await off.observeMany(lines, IMPORT);
  const control = (await off.query(question, { limit: 3 })).map((r) => r.sources[0]);
  assert.ok(control.indexOf('b1') < control.indexOf('a1'), `the negative control: with the prior off Bob's cat is above Alice's, got ${control.join(', ')}`);
  // A query that names nobody is ranked alike by both.
  const plain = async (s: MemoryStore) => (await s.query('grey cat shelter', { limit: 3 })).map((r) => r.id);
  assert.deepEqual(await plain(on), await plain(off));
});

test('on a LoCoMo dev conversation the speaker prior, the rare-word links, the asking and the period priors each lift recall@10; switched off, lower', { skip: NO_DATA }, async () => {
  const r = (await memoryRecall({ files: ['26.json'] }))!;
  assert.ok(r.full.at[10] > r.no_speaker.at[10], `Expected the speaker prior to lift @10: ${r.full.at[10]} vs off ${r.no_speaker.at[10]}`);
  assert.ok(r.full.at[10] > r.no_links.at[10], `Expected the links to lift @10: ${r.full.at[10]} vs off ${r.no_links.at[10]}`);
  assert.ok(r.full.at[10] > r.no_asking.at[10], `Expected the asking prior to lift @10: ${r.full.at[10]} vs off ${r.no_asking.at[10]}`);
  assert.ok(r.full.at[10] > r.no_period.at[10], `Expected the period prior to lift @10: ${r.full.at[10]} vs off ${r.no_period.at[10]}`);
});

test('rare-word links are made at observe, across sessions only', async (t) => {
  const s = open(t, { weights: { link_cap: 5 } });
  await s.observeMany(filler(300), IMPORT);
  const a = await s.observe({ text: 'we visited the Wenceslas observatory', created_at: '2024-03-01T10:00:00.000Z' }, { surface: 'mcp', sessionId: 's1' });
  const same = await s.observe({ text: 'the Wenceslas observatory dome was shut', created_at: '2024-03-01T10:05:00.000Z' }, { surface: 'mcp', sessionId: 's1' });
  assert.deepEqual(sharesOf(s, same.memory_id), [], 'no link inside one session');
  const b = await s.observe({ text: 'a postcard from the Wenceslas observatory arrived', created_at: '2024-05-01T10:00:00.000Z' }, { surface: 'mcp', sessionId: 's2' });
  const linked = (sharesOf(s, b.memory_id)).map((e) => e.to).sort();
  assert.deepEqual(linked, [a.memory_id, same.memory_id].sort());
});

test('a memory never gets more rare-word links than the cap, at either end; uncapped it would', async (t) => {
  const run = async (cap: number) => {
    // Twelve texts the same but for a number read as updates of one fact (docs/memory.md), each
    // ending the one before; this test is about the cap, so they stay twelve current memories.
    const s = open(t, { weights: { link_cap: cap }, knowledgeUpdates: false });
    await s.observeMany(filler(1200), IMPORT);
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await s.observe({ text: `session ${i} talked about the Zanzibar quokka festival`, created_at: new Date(Date.UTC(2025, 0, 1 + i)).toISOString() }, IMPORT);
      ids.push(r.memory_id);
    }
    return Math.max(...ids.map((id) => sharesOf(s, id).length));
  };
  assert.equal(await run(5), 5);
  assert.ok((await run(50)) > 5, 'the negative control: without the cap a memory takes more');
});

test('a rare-word link carries a quarter of what a follows edge does, and a dream keeps the links', async (t) => {
  assert.equal(DEFAULT_WEIGHTS.edges.shares, DEFAULT_WEIGHTS.edges.follows / 4);
  const adj = new Map([[1, [{ to: 2, weight: 1, type: 'shares' as const }, { to: 3, weight: 1, type: 'follows' as const }]]]);
  const got = spreadActivation(new Map([[1, 1]]), adj, { hops: 1, decay: 0.5, edges: DEFAULT_WEIGHTS.edges });
  assert.equal(got.get(2)! * 4, got.get(3));

  const s = open(t, { weights: { link_cap: 5 } });
  await s.observeMany(filler(300), IMPORT);
  const a = await s.observe({ text: 'the Quillfeather regatta was rained off', created_at: '2024-03-01T10:00:00.000Z' }, IMPORT);
  const b = await s.observe({ text: 'next year the Quillfeather regatta moves to June', created_at: '2024-06-01T10:00:00.000Z' }, IMPORT);
  assert.deepEqual((sharesOf(s, b.memory_id)).map((e) => e.to), [a.memory_id]);
  await dream(s);
  assert.deepEqual((sharesOf(s, b.memory_id)).map((e) => e.to), [a.memory_id]);
});

test('a rare-word link is walked one hop: what it reaches is a candidate, the neighbours of that are not; through another edge type they are', async (t) => {
  const run = async (type: 'shares' | 'relates_to') => {
    const s = open(t);
    await s.observeMany(filler(50), IMPORT);
    const seed = await s.observe({ text: 'the heron nested by the weir', created_at: '2024-03-01T10:00:00.000Z' }, IMPORT);
    const linked = await s.observe({ text: 'a grey wader stood in the shallows', created_at: '2024-04-01T10:00:00.000Z' }, IMPORT);
    const beyond = await s.observe({ text: 'then it rained all afternoon', created_at: '2024-04-01T10:00:00.000Z' }, IMPORT);
    s.link(linked.memory_id, beyond.memory_id, 'follows', 1, { surface: 'cli' });
    s.link(seed.memory_id, linked.memory_id, type, 1, { surface: 'cli' });
    return (await s.query('heron weir', { limit: 20 })).map((r) => r.id).filter((id) => id !== seed.memory_id);
  };
  const ids = await run('shares');
  assert.equal(ids.length, 1, `Expected only the linked memory besides the seed, got ${ids.join(', ')}`);
  const control = await run('relates_to');
  assert.equal(control.length, 2, `the negative control: a relates_to edge is walked on to the next hop, got ${control.join(', ')}`);
});

test('the dream gives an old store its rare-word links in bounded batches; with the links off it adds none', async (t) => {
  const dir = tempDir(t);
  const lines = [
    ...filler(300),
    { text: 'we visited the Wenceslas observatory', source: 'w1', created_at: '2024-03-01T10:00:00.000Z' },
    { text: 'a postcard from the Wenceslas observatory arrived', source: 'w2', created_at: '2024-05-01T10:00:00.000Z' },
  ];
  const build = async (file: string) => {
    const old = MemoryStore.open(file, { weights: { link_cap: 0 } });
    await old.observeMany(lines, IMPORT);
    old.close();
  };
  const shares = (s: MemoryStore) => (s as unknown as { db: { prepare(q: string): { get(): { n: number } } } }).db.prepare("SELECT count(*) AS n FROM edges WHERE type = 'shares'").get().n;
  const idOf = async (s: MemoryStore, src: string) => (await s.query('Wenceslas observatory')).find((r) => r.sources.includes(src))!.id;

  const offFile = path.join(dir, 'off.db');
  await build(offFile);
  const off = MemoryStore.open(offFile, { weights: { link_cap: 0 } });
  t.after(() => off.close());
  const r0 = await dream(off, { linkBatch: 100 });
  assert.deepEqual([r0.phases.links.memories, r0.phases.links.through, shares(off)], [0, 0, 0], 'links off: nothing offered, nothing made');

  const file = path.join(dir, 'on.db');
  await build(file);
  const s = MemoryStore.open(file);
  t.after(() => s.close());
  assert.equal(shares(s), 0, 'the fixture: a store observed with the links off');
  const through: number[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await dream(s, { linkBatch: 100 });
    assert.ok((r.phases.links.memories as number) <= 100, `a dream offers at most its batch, got ${r.phases.links.memories}`);
    through.push(r.phases.links.through as number);
    if (r.phases.links.remaining === 0) break;
  }
  assert.equal(through.length, 4, `Expected 302 memories in four batches of 100, got ${through.join(', ')}`);
  assert.ok(through.every((x, i) => i === 0 || x > through[i - 1]), `each dream starts where the last stopped: ${through.join(', ')}`);
  const [w1, w2] = [await idOf(s, 'w1'), await idOf(s, 'w2')];
  assert.ok(s.recall(w2).edges.some((e) => e.type === 'shares' && e.to === w1), 'the two observatory memories are linked');
  const after = shares(s);
  assert.ok(after > 0);
  await dream(s, { linkBatch: 100 });
  assert.equal(shares(s), after, 'a caught-up store gains nothing from another dream');
});

test('a store of schema 7 migrates: rows keep their data, speakers start null, the new edge type is accepted', async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const v7 = openDatabase(file, 7);
  const at = '2024-01-01T00:00:00.000Z';
  v7.prepare("INSERT INTO memories (id, text, category, created_at, updated_at) VALUES (1, 'the harbour crane is teal', 'observation', ?, ?), (2, 'the crane was repainted', 'observation', ?, ?)").run(at, at, at, at);
  v7.prepare("INSERT INTO observations (text, source, created_at, salience, prediction_error, decision, memory_id) VALUES ('the harbour crane is teal', 'old', ?, 0.5, 1, 'novel', 1)").run(at);
  v7.prepare("INSERT INTO edges (from_id, to_id, type, weight, created_at) VALUES (1, 2, 'follows', 1, ?)").run(at);
  assert.throws(() => v7.prepare("INSERT INTO edges (from_id, to_id, type, weight, created_at) VALUES (2, 1, 'shares', 1, ?)").run(at), /CHECK/);
  v7.close();

  const s = MemoryStore.open(file);
  t.after(() => s.close());
  const m = s.recall(1);
  assert.equal(m.text, 'the harbour crane is teal');
  assert.deepEqual(m.sources, ['old']);
  assert.deepEqual(m.edges.map((e) => e.type), ['follows']);
  assert.equal((await s.query('teal crane'))[0].id, 1);
  s.link(2, 1, 'shares', 1, { surface: 'cli' });
  assert.ok(s.recall(1).edges.some((e) => e.type === 'shares'));
});
