import assert from 'node:assert/strict';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { MemoryStore, type StoreOptions } from '../../memory/store.js';
import { MemoryError, type Actor, type Embedder, type ObserveResult } from '../../memory/types.js';
import { tempDir } from '../helpers.js';

const CLI: Actor = { surface: 'cli' };
const IMPORT: Actor = { surface: 'import' };

function open(t: TestContext, opts: StoreOptions = {}): MemoryStore {
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), opts);
  t.after(() => s.close());
  return s;
}

const ok = (r: ObserveResult | MemoryError): ObserveResult => {
  if (r instanceof MemoryError) throw r;
  return r;
};

test('a repeated claim merges into the first memory, and the result lists both sources', async (t) => {
  const s = open(t);
  const a = await s.observe({ text: 'Caroline went to the LGBTQ support group on Sunday.', source: 'D1:3' }, CLI);
  const b = await s.observe({ text: 'caroline went to the LGBTQ support group on sunday', source: 'D7:2' }, CLI);
  assert.equal(a.decision, 'novel');
  assert.equal(a.prediction_error, 1);
  assert.equal(b.decision, 'merge');
  assert.equal(b.memory_id, a.memory_id);
  assert.equal(b.prediction_error, 0);
  const [r] = await s.query('support group');
  assert.equal(r.id, a.memory_id);
  assert.deepEqual(r.sources, ['D1:3', 'D7:2']);
  const m = s.recall(a.memory_id);
  assert.equal(m.access_count, 1);
  assert.ok(m.salience > 0.5, 'seen again, it is more salient');
  assert.equal(s.stats().memories, 1);
  assert.equal(s.stats().observations, 2);
});

test('a related claim becomes a new memory linked to its neighbour by similarity', async (t) => {
  const s = open(t);
  const a = await s.observe({ text: 'the cat sat on the mat today' }, CLI);
  const b = await s.observe({ text: 'the cat sat on the mat yesterday evening' }, CLI);
  assert.equal(b.decision, 'link');
  assert.equal(b.linked_to, a.memory_id);
  assert.notEqual(b.memory_id, a.memory_id);
  const edge = s.recall(b.memory_id).edges.find((e) => e.type === 'relates_to');
  assert.deepEqual(edge && { to: edge.to, direction: edge.direction }, { to: a.memory_id, direction: 'out' });
  assert.ok(edge!.weight > 0.5 && edge!.weight < 0.9);
  const c = await s.observe({ text: 'quarterly revenue forecast for the bakery' }, CLI);
  assert.equal(c.decision, 'novel');
});

test('every observation is findable at once, by its own words', async (t) => {
  const s = open(t);
  await s.observe({ text: 'Melanie signed up for a pottery class' }, CLI);
  // Merged: the memory keeps the first wording, the new words live in the observation.
  const m = await s.observe({ text: 'Melanie signed up for a pottery class!!', source: 'x' }, CLI);
  assert.equal(m.decision, 'merge');
  assert.deepEqual((await s.query('pottery')).map((r) => r.id), [m.memory_id]);
  assert.deepEqual(await s.query('saxophone'), []);
  assert.deepEqual(await s.query('the of and'), [], 'stop words alone match nothing');
});

test('thresholds come from the options: merge 1 keeps near-duplicates apart', async (t) => {
  const s = open(t, { thresholds: { merge: 1, link: 0.3 } });
  await s.observe({ text: 'the cat sat on the mat' }, CLI);
  const b = await s.observe({ text: 'the cat sat on the mat, again' }, CLI);
  assert.equal(b.decision, 'link');
  assert.throws(() => open(t, { thresholds: { merge: 0.2, link: 0.5 } }), /at most gate\.merge/);
});

test('a tombstoned claim is refused with the reason and the tombstone named', async (t) => {
  const s = open(t);
  s.tombstone('Paris is the capital of Germany', 'wrong: it is Berlin', { surface: 'mcp', sessionId: 's1' });
  await assert.rejects(
    s.observe({ text: '  paris is the capital of GERMANY. ' }, CLI),
    (err: unknown) => err instanceof MemoryError && err.code === 'TOMBSTONED' && /wrong: it is Berlin/.test(err.message) && /tombstone [0-9a-f]{12}/.test(err.message),
  );
  assert.equal(s.stats().observations, 0);
  assert.equal(s.stats().tombstones, 3, 'three keys: the folded words, the same words glued, and the near key (memory/tombstone-key.ts)');
});

test('a tombstone holds against punctuation, symbol, invisible and Unicode variants of the claim', async (t) => {
  const s = open(t);
  s.tombstone("Bob's bank PIN is 4921", 'a secret', CLI);
  for (const variant of ['Bob\u2019s bank PIN is 4921', "Bob's bank PIN is: 4921", "Bob's bank-PIN is 4921", "Bob's bank PIN is 4921 \u{1F642}", "Bob's bank\u200bPIN is 4921", "Bob's bank PIN is 4,921", 'ＢＯＢ’Ｓ BANK PIN IS ４９２１']) {
    await assert.rejects(s.observe({ text: variant }, CLI), (e: unknown) => e instanceof MemoryError && e.code === 'TOMBSTONED', JSON.stringify(variant));
  }
  // A lone surrogate is not text: refused at the boundary (memory/text-hygiene.ts), never hashed.
  await assert.rejects(s.observe({ text: 'Erin\ud800 badge PIN is 5512' }, CLI), (e: unknown) => e instanceof MemoryError && e.code === 'INVALID');
  // A different claim with the same words in another order is not the same claim.
  // (Refused, observe would reject above; here it resolves with the claim stored.)
  const reordered = await s.observe({ text: "Is 4921 Bob's bank PIN" }, CLI);
  assert.equal(s.recall(reordered.memory_id).text, "Is 4921 Bob's bank PIN");
});

test('full-width and compatibility forms are found by their plain spelling', async (t) => {
  const s = open(t);
  const a = await s.observe({ text: 'ＡＰＩ ｔｏｋｅｎ rotates ｍｏｎｔｈｌｙ' }, CLI);
  const b = await s.observe({ text: 'ﬁnance team budget ２０２４' }, CLI);
  assert.equal((await s.query('API token monthly'))[0]?.id, a.memory_id);
  assert.equal((await s.query('finance 2024'))[0]?.id, b.memory_id);
});

test('a forget that lands while an observe is embedding still refuses that observe', async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const slow: Embedder = { model: 'slow', dim: 2, embed: async (texts) => (await gate, texts.map(() => new Float32Array([1, 0]))) };
  const server = MemoryStore.open(file, { embedder: slow });
  const cli = MemoryStore.open(file);
  t.after(() => (server.close(), cli.close()));
  const first = await cli.observe({ text: 'Dave keeps the root password in passwords.txt' }, CLI);
  const late = server.observe({ text: 'Dave keeps the root password in passwords.txt on the NAS' }, CLI);
  cli.deleteForever([first.memory_id], 'a secret', CLI);
  cli.tombstone('Dave keeps the root password in passwords.txt on the NAS', 'a secret', CLI);
  release();
  await assert.rejects(late, (e: unknown) => e instanceof MemoryError && e.code === 'TOMBSTONED');
  assert.deepEqual(await cli.query('root password NAS', { include_faded: true }), []);
});

test('a forgotten memory cannot come back, through observe or import; other lines still import', async (t) => {
  const s = open(t);
  const a = await s.observe({ text: 'The deploy key lives in the wiki' }, CLI);
  s.forget(a.memory_id, 'leaked secret location', CLI);
  assert.equal(s.recall(a.memory_id).faded, true);
  await assert.rejects(s.observe({ text: 'the deploy key lives in the wiki' }, CLI), /leaked secret location/);
  const out = await s.observeMany([{ text: 'The deploy key lives in the wiki.' }, { text: 'lunch is at noon' }, { text: '' }], IMPORT);
  assert.equal(out.length, 3);
  assert.ok(out[0] instanceof MemoryError && out[0].code === 'TOMBSTONED');
  assert.equal(ok(out[1]).decision, 'novel');
  assert.ok(out[2] instanceof MemoryError && out[2].code === 'INVALID');
});

test('each mutation writes one audit row with its surface and session id; the log is append-only', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'memory.db');
  const s = MemoryStore.open(file, { now: () => new Date('2026-01-02T03:04:05Z') });
  const a = await s.observe({ text: 'alpha beta gamma' }, { surface: 'mcp', sessionId: 'sess-1' });
  const b = await s.observe({ text: 'delta epsilon zeta' }, { surface: 'session', sessionId: 'sess-2' });
  await s.observeMany([{ text: 'eta theta' }, { text: 'iota kappa' }], IMPORT);
  s.link(a.memory_id, b.memory_id, 'supports', 0.7, CLI);
  s.fade(a.memory_id, CLI);
  s.supersede(a.memory_id, b.memory_id, { surface: 'mcp', sessionId: 'sess-1' });
  s.tombstone('omicron', 'no', { surface: 'session', sessionId: 'sess-3' });
  await s.query('alpha');
  s.recall(a.memory_id);
  s.stats();
  const log = s.auditLog();
  assert.deepEqual(
    log.map((r) => [r.surface, r.session_id, r.action]),
    [
      ['mcp', 'sess-1', 'observe'],
      ['session', 'sess-2', 'observe'],
      ['import', null, 'observe'],
      ['import', null, 'observe'],
      ['cli', null, 'link'],
      ['cli', null, 'fade'],
      ['mcp', 'sess-1', 'supersede'],
      ['session', 'sess-3', 'tombstone'],
    ],
  );
  assert.equal(log[0].at, '2026-01-02T03:04:05.000Z');
  assert.deepEqual(log[5].before, { faded: false });
  assert.deepEqual(log[5].after, { faded: true });
  s.close();
  const db = new Database(file);
  t.after(() => db.close());
  assert.throws(() => db.prepare("UPDATE audit SET action = 'x'").run(), /append-only/);
  assert.throws(() => db.prepare('DELETE FROM audit').run(), /append-only/);
});

test('faded and superseded memories come back only when asked, labelled', async (t) => {
  const s = open(t);
  const a = await s.observe({ text: 'the server runs Debian 11' }, CLI);
  const b = await s.observe({ text: 'the server runs Debian 12 since March' }, CLI);
  const c = await s.observe({ text: 'a server room smells of ozone' }, CLI);
  s.supersede(a.memory_id, b.memory_id, CLI);
  s.fade(c.memory_id, CLI);
  assert.deepEqual((await s.query('server')).map((r) => r.id), [b.memory_id]);
  const all = await s.query('server', { include_faded: true });
  assert.deepEqual(all.map((r) => r.id).sort(), [a.memory_id, b.memory_id, c.memory_id].sort());
  const label = Object.fromEntries(all.map((r) => [r.id, [r.faded, r.superseded]]));
  assert.deepEqual(label[a.memory_id], [false, true]);
  assert.deepEqual(label[b.memory_id], [false, false]);
  assert.deepEqual(label[c.memory_id], [true, false]);
  assert.equal(s.recall(a.memory_id).superseded_by, b.memory_id);
  s.fade(c.memory_id, CLI, false);
  assert.equal((await s.query('ozone')).length, 1);
});

test('consecutive import lines with the same time are linked as follows; a new time starts a new chain', async (t) => {
  const s = open(t);
  const at1 = '2023-05-08T13:56:00Z';
  const at2 = '2023-05-25T09:00:00Z';
  const out = (await s.observeMany(
    [
      { text: 'Mel: how was the trip to the coast?', created_at: at1 },
      { text: 'Caro: windy, we flew kites all afternoon', created_at: at1 },
      { text: 'Mel: lovely', created_at: at1 },
      { text: 'Caro: hello again after two weeks', created_at: at2 },
      { text: 'no time given' },
    ],
    IMPORT,
  )).map(ok);
  const follows = (id: number) => s.recall(id).edges.filter((e) => e.type === 'follows' && e.direction === 'out').map((e) => e.to);
  assert.deepEqual(follows(out[0].memory_id), [out[1].memory_id]);
  assert.deepEqual(follows(out[1].memory_id), [out[2].memory_id]);
  assert.deepEqual(follows(out[2].memory_id), [], 'a different time is a different conversation');
  assert.deepEqual(follows(out[3].memory_id), []);
  assert.equal(s.recall(out[0].memory_id).created_at, '2023-05-08T13:56:00.000Z');
});

test("a session's observations follow each other; other sessions' do not join the chain", async (t) => {
  const s = open(t);
  const a = await s.observe({ text: 'first step: read the issue' }, { surface: 'mcp', sessionId: 'A' });
  const x = await s.observe({ text: 'unrelated note from elsewhere' }, { surface: 'mcp', sessionId: 'B' });
  const b = await s.observe({ text: 'second step: write the migration' }, { surface: 'mcp', sessionId: 'A' });
  const outs = (id: number) => s.recall(id).edges.filter((e) => e.type === 'follows' && e.direction === 'out').map((e) => e.to);
  assert.deepEqual(outs(a.memory_id), [b.memory_id]);
  assert.deepEqual(outs(x.memory_id), []);
});

test('a follows neighbour of a hit is recalled through spreading activation, and explain says so', async (t) => {
  const s = open(t);
  const at = '2023-06-01T10:00:00Z';
  const [q, ans] = (await s.observeMany(
    [
      { text: 'Jon: what got you into ballroom dancing?', source: 'D1:1', created_at: at },
      { text: 'Gina: my grandmother taught me when I was six', source: 'D1:2', created_at: at },
    ],
    IMPORT,
  )).map(ok);
  await s.observe({ text: 'an unrelated remark about the weather', source: 'Z' }, CLI);
  const r = await s.query('ballroom dancing', { explain: true });
  assert.deepEqual(r.map((x) => x.id), [q.memory_id, ans.memory_id]);
  assert.equal(r[1].explain!.lexical, 0);
  assert.ok(r[1].explain!.activation > 0);
  assert.ok(r[0].explain!.lexical > 0);
  assert.deepEqual(r[1].sources, ['D1:2']);

  // The same two lines without the shared time: no edge, so the answer is not recalled.
  const plain = open(t);
  await plain.observeMany([{ text: 'Jon: what got you into ballroom dancing?' }, { text: 'Gina: my grandmother taught me when I was six' }], IMPORT);
  assert.equal((await plain.query('ballroom dancing')).length, 1);
});

test('link joins two memories, and refuses unknown ids, types and weights', async (t) => {
  const s = open(t);
  const a = await s.observe({ text: 'alpha' }, CLI);
  const b = await s.observe({ text: 'omega' }, CLI);
  assert.deepEqual(s.link(a.memory_id, b.memory_id, 'contradicts', 0.4, CLI), { from: a.memory_id, to: b.memory_id, type: 'contradicts', weight: 0.4 });
  assert.deepEqual(s.recall(b.memory_id).edges, [{ type: 'contradicts', to: a.memory_id, weight: 0.4, direction: 'in' }]);
  assert.throws(() => s.link(a.memory_id, 999, 'supports', 1, CLI), (e: unknown) => e instanceof MemoryError && e.code === 'NOT_FOUND' && /999/.test(e.message));
  assert.throws(() => s.link(a.memory_id, b.memory_id, 'likes' as never, 1, CLI), /edge type/);
  assert.throws(() => s.link(a.memory_id, b.memory_id, 'supports', 2, CLI), /between 0 and 1/);
  assert.throws(() => s.recall(12345), (e: unknown) => e instanceof MemoryError && e.code === 'NOT_FOUND');
});

test('bad input is refused with a message naming the field', async (t) => {
  const s = open(t);
  await assert.rejects(s.observe({ text: '   ' }, CLI), /`text`/);
  await assert.rejects(s.observe({ text: 'x', salience: 3 }, CLI), /`salience`/);
  await assert.rejects(s.observe({ text: 'x', category: 'gossip' as never }, CLI), /`category`/);
  await assert.rejects(s.observe({ text: 'x', created_at: 'yesterday' }, CLI), /`created_at`/);
  await assert.rejects(s.observe({ text: 'x' }, { surface: 'web' as never }), /surface/);
  await assert.rejects(s.query('x', { limit: 0 }), /limit/);
  assert.equal(s.stats().observations, 0);
});

test('export writes import lines that rebuild the same memories elsewhere', async (t) => {
  const s = open(t);
  const at = '2023-01-01T00:00:00.000Z';
  await s.observeMany(
    [
      { text: 'a: hello there', source: 'D1:1', created_at: at, tags: ['greeting'] },
      { text: 'b: general kenobi', source: 'D1:2', created_at: at, category: 'entity' },
      { text: 'a: hello there!', source: 'D1:3', created_at: at },
    ],
    IMPORT,
  );
  const lines = [...s.exportAll()].map((l) => JSON.parse(JSON.stringify(l)));
  assert.equal(lines.length, 3);
  assert.deepEqual(lines[1], { text: 'b: general kenobi', source: 'D1:2', created_at: at, category: 'entity' });
  const copy = open(t);
  await copy.observeMany(lines, IMPORT);
  const pick = (x: MemoryStore) => ({ ...x.stats(), file: null });
  assert.deepEqual(pick(copy), pick(s));
  assert.deepEqual((await copy.query('hello'))[0].sources, ['D1:1', 'D1:3']);
});

test('importing 10k lines stores every one, in batches, with progress', async (t) => {
  const s = open(t);
  const words = 'river stone maple copper lantern harbor violet thunder meadow falcon cedar ember quartz willow canyon orbit'.split(' ');
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const lines = Array.from({ length: 10_000 }, (_, i) => ({
    text: `note ${i}: ${Array.from({ length: 8 }, () => words[Math.floor(rnd() * words.length)]).join(' ')}`,
    source: `L${i}`,
    created_at: `2024-01-${String(1 + (Math.floor(i / 50) % 28)).padStart(2, '0')}T00:00:00Z`,
  }));
  const progress: number[] = [];
  const out = await s.observeMany(lines, IMPORT, (n) => progress.push(n));
  assert.equal(out.filter((r) => !(r instanceof MemoryError)).length, 10_000);
  assert.equal(s.stats().observations, 10_000);
  assert.equal(progress.at(-1), 10_000);
  assert.ok(progress.length >= 10, 'one progress call per batch');
  const hit = await s.query('note 9876', { limit: 5 });
  assert.ok(hit.some((r) => r.sources.includes('L9876')));
});

// A deterministic toy embedder: each word maps to a concept axis, so synonyms share a direction.
function conceptEmbedder(model = 'concepts-v1', fail = false): Embedder & { calls: number; kinds: string[] } {
  const axes: Record<string, number> = { car: 0, automobile: 0, vehicle: 0, dog: 1, puppy: 1, hound: 1, rain: 2, drizzle: 2, storm: 2 };
  const e = {
    model,
    dim: 4,
    calls: 0,
    kinds: [] as string[],
    async embed(texts: string[], kind?: string) {
      e.calls++;
      e.kinds.push(kind ?? 'none');
      if (fail) throw new Error('embedding service down');
      return texts.map((t) => {
        const v = new Float32Array(4);
        v[3] = 0.05;
        for (const w of t.toLowerCase().split(/\W+/)) if (w in axes) v[axes[w]] += 1;
        return v;
      });
    },
  };
  return e;
}

test('the vector arm recalls a memory that shares no word with the query', async (t) => {
  const embedder = conceptEmbedder();
  const s = open(t, { embedder });
  const a = await s.observe({ text: 'I washed the automobile on Saturday' }, CLI);
  await s.observe({ text: 'the puppy chewed a shoe' }, CLI);
  const r = await s.query('car', { explain: true });
  assert.equal(r[0].id, a.memory_id);
  assert.ok(r[0].explain!.vector > 0.9);
  assert.equal(r[0].explain!.lexical, 0);
  assert.equal(s.stats().embedded, 2);
  assert.equal(s.stats().embedding_model, 'concepts-v1');
  assert.deepEqual(embedder.kinds, ['document', 'document', 'query'], 'queries are embedded as queries');

  // Without the embedder, lexical only: nothing shares a word with "car".
  const lexical = open(t);
  await lexical.observe({ text: 'I washed the automobile on Saturday' }, CLI);
  assert.deepEqual(await lexical.query('car'), []);
});

test('vectors of another model are never mixed in; reembed fills the new space', async (t) => {
  const file = path.join(tempDir(t), 'memory.db');
  const s1 = MemoryStore.open(file, { embedder: conceptEmbedder('model-a') });
  await s1.observe({ text: 'the automobile is blue' }, CLI);
  s1.close();
  const s2 = MemoryStore.open(file, { embedder: conceptEmbedder('model-b') });
  t.after(() => s2.close());
  assert.equal(s2.stats().embedded, 0);
  assert.deepEqual(await s2.query('vehicle'), [], 'model-a vectors are not searched with a model-b query');
  assert.equal(await s2.reembed(), 1);
  assert.equal((await s2.query('vehicle')).length, 1);
  assert.equal(await s2.reembed(), 0);
});

test('HyDE: the expanded query feeds the vector arm only; the lexical arm keeps the asked words', async (t) => {
  const asked: string[] = [];
  // The guessed answer names a vehicle; the question itself shares no word or concept with it.
  const s = open(t, { embedder: conceptEmbedder(), expandQuery: async (q) => (asked.push(q), `${q}\nThe automobile was washed.`) });
  const a = await s.observe({ text: 'I washed the automobile on Saturday' }, CLI);
  const r = await s.query('what did I clean at the weekend', { explain: true });
  assert.deepEqual(asked, ['what did I clean at the weekend']);
  assert.equal(r[0]?.id, a.memory_id, 'found through the guessed passage');
  assert.equal(r[0].explain!.lexical, 0, 'the lexical arm did not search the guess');
  assert.ok(r[0].explain!.vector > 0.9, String(r[0].explain!.vector));
  // Without expansion the same question is far from the memory in the vector space.
  const plain = open(t, { embedder: conceptEmbedder() });
  await plain.observe({ text: 'I washed the automobile on Saturday' }, CLI);
  const p = await plain.query('what did I clean at the weekend', { explain: true });
  assert.ok((p[0]?.explain?.vector ?? 0) < 0.5, String(p[0]?.explain?.vector));
});

test('a vector alone links two different wordings but never merges them', async (t) => {
  const s = open(t, { embedder: conceptEmbedder() });
  const a = await s.observe({ text: 'car' }, CLI);
  const b = await s.observe({ text: 'automobile' }, CLI);
  assert.equal(b.decision, 'link', 'cosine 1, but no word in common');
  assert.equal(b.linked_to, a.memory_id);
  const c = await s.observe({ text: 'car!' }, CLI);
  assert.equal(c.decision, 'merge', 'the same words merge');
});

test('a failing embedder is logged and observe and query still work lexically', async (t) => {
  const warnings: unknown[] = [];
  const logger = { warn: (o: object, m?: string) => void warnings.push([o, m]), info: () => {} };
  const s = open(t, { embedder: conceptEmbedder('m', true), logger });
  const a = await s.observe({ text: 'a drizzle all morning' }, CLI);
  assert.equal(a.decision, 'novel');
  assert.deepEqual((await s.query('drizzle')).map((r) => r.id), [a.memory_id]);
  assert.ok(warnings.length >= 1);
  assert.match(String((warnings[0] as [object, string])[1]), /embedding failed/);
});

test('believing the words of an open thread or a prediction leaves them what they are; the belief is its own memory', async (t) => {
  const s = open(t);
  const thread = await s.openThread({ text: 'find out why the backup job fails on sundays', solo: true }, CLI);
  const b = await s.believe({ text: 'find out why the backup job fails on sundays', confidence: 0.9 }, CLI);
  assert.notEqual(b.id, thread.id);
  assert.equal(s.recall(thread.id).category, 'thread');
  assert.equal(s.recall(b.id).category, 'belief');
  assert.equal(s.threads({ open: true }).length, 1);
});

test('ids are never reused after a forget: the audit log and a dream\'s watermark keep meaning one claim', async (t) => {
  const s = open(t);
  for (const text of ['the red kettle is in the attic', 'the blue ladder is in the shed', 'the green tent is under the stairs']) await s.observe({ text }, CLI);
  const top = s.stats().memories;
  s.deleteForever([top], 'operator', CLI);
  const next = await s.observe({ text: 'the yellow bike is in the garage' }, CLI);
  assert.ok(next.memory_id > top, `memory id ${next.memory_id} reused ${top}`);
  assert.ok(next.observation_id > 3, `observation id ${next.observation_id} reused`);
  // Negative control: SQLite's own rowid choice would have handed the deleted top id out again.
  const db = new Database(':memory:');
  db.exec('CREATE TABLE m (id INTEGER PRIMARY KEY, t TEXT)');
  db.exec("INSERT INTO m (t) VALUES ('a'), ('b'), ('c'); DELETE FROM m WHERE id = 3");
  assert.equal(db.prepare("INSERT INTO m (t) VALUES ('d')").run().lastInsertRowid, 3);
  db.close();
});

// Nothing the query keeps between calls (df counts, the asking prior's verdicts) may hide a write.
test('a query after an observe finds the new memory; after a forget it is gone', async (t) => {
  const s = open(t);
  for (let i = 0; i < 20; i++) await s.observe({ text: `Filler note ${i} about the quarterly garden rota and compost` }, CLI);
  const before = await s.query('heron pond', { limit: 10 });
  assert.deepEqual(before, []);
  const o = await s.observe({ text: 'A grey heron visits the pond every morning' }, CLI);
  assert.deepEqual((await s.query('heron pond', { limit: 10 })).map((r) => r.id), [o.memory_id]);
  s.forget(o.memory_id, 'a test', CLI);
  assert.deepEqual(await s.query('heron pond', { limit: 10 }), []);
});
