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
    { text: 'Alice, your visit to the shelter sounds lovely', source: 'b2', speaker: 'Bob' },
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

test('on a LoCoMo dev conversation the speaker prior and the rare-word links each lift recall@10; switched off, lower', { skip: NO_DATA }, async () => {
  const r = (await memoryRecall({ files: ['26.json'] }))!;
  assert.ok(r.full.at[10] > r.no_speaker.at[10], `Expected the speaker prior to lift @10: ${r.full.at[10]} vs off ${r.no_speaker.at[10]}`);
  assert.ok(r.with_links.at[20] > r.full.at[20], `Expected the links to lift @20: ${r.with_links.at[20]} vs off ${r.full.at[20]}`);
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
    const s = open(t, { weights: { link_cap: cap } });
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
