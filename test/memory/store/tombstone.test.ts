// Forgetting that holds: variants of a forgotten claim are refused on every write route, true
// claims on the same topics are not, and after a forget the text is gone from the file.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { MemoryStore, type StoreOptions } from '../../../memory/store.js';
import { tombstoneKeys as legacyKeys } from '../../../memory/text/text.js';
import { exactKeysOf, fold, nearMatch, parseNear, sequenceDice, tombstoneKeysOf } from '../../../memory/text/tombstone-key.js';
import { redactStateFiles, redactStateText, redactValue, stateCopies } from '../../../memory/store/forget-redact.js';
import { MemoryError, type Actor } from '../../../memory/types.js';
import { resultRecord } from '../../../sessions/capture/capture.js';
import { tempDir } from '../../helpers.js';
import { FORGOTTEN, TRUE_CLAIMS, VARIANTS, type Variant } from './tombstone-variants.js';

const CLI: Actor = { surface: 'cli' };
const SESSION: Actor = { surface: 'session', sessionId: 'sess-9' };

type World = { s: MemoryStore; prediction: number; thread: number; a: number; b: number; member: number };

// A store whose six claims were forgotten for good, with a prediction, a thread and memories to
// resolve, contradict and abstract against.
async function world(t: TestContext, opts: StoreOptions = {}): Promise<World> {
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), opts);
  t.after(() => s.close());
  const ids = [];
  for (const c of FORGOTTEN) ids.push((await s.observe({ text: c }, CLI)).memory_id);
  s.deleteForever(ids, 'test', CLI);
  const prediction = (await s.predict({ text: 'The release ships on Friday' }, CLI)).id;
  const thread = (await s.openThread({ text: 'Why does the nightly job stall?' }, CLI)).id;
  const a = (await s.observe({ text: 'The cache is warmed at boot' }, CLI)).memory_id;
  const b = (await s.observe({ text: 'Nothing warms the cache' }, CLI)).memory_id;
  const member = (await s.observe({ text: 'Invoices are mailed on the first' }, CLI)).memory_id;
  return { s, prediction, thread, a, b, member };
}

// Writes `v` the way its route does.
async function write(w: World, v: Variant): Promise<unknown> {
  const { s } = w;
  const text = v.text;
  switch (v.route) {
    case 'observe': return s.observe({ text }, SESSION);
    case 'believe': return s.believe({ text }, SESSION);
    case 'import': {
      const [r] = await s.observeMany([{ text }], { surface: 'import' });
      if (r instanceof MemoryError) throw r;
      return r;
    }
    case 'tags': return s.observe({ text: 'A note about the week', tags: ['ops', text] }, SESSION);
    case 'tags-split': {
      const words = text.split(' ');
      return s.observe({ text: 'A note about the week', tags: [words.slice(0, 4).join(' '), words.slice(4).join(' ')] }, SESSION);
    }
    case 'source': return s.observe({ text: 'A note about the week', source: text }, SESSION);
    case 'predict': return s.predict({ text }, SESSION);
    case 'prediction-note': return s.resolvePrediction(w.prediction, 'wrong', text, SESSION);
    case 'thread': return s.openThread({ text }, SESSION);
    case 'thread-resolution': return s.resolveThread(w.thread, text, SESSION);
    case 'contradiction-note': return s.contradict(w.a, w.b, text, SESSION);
    case 'session-result': {
      const r = resultRecord({ id: 'sess-9', agent: 'night', outcome: 'ok', turns: 3, cost_usd: 0.01, result: text, error: null });
      return s.observe({ text: r.text, tags: r.tags, category: r.category, salience: r.salience, source: 'sess-9' }, SESSION);
    }
    case 'abstraction': return s.addAbstraction(text, [w.member], CLI);
  }
}

const refused = async (w: World, v: Variant) => {
  try {
    await write(w, v);
    return false;
  } catch (err) {
    if (err instanceof MemoryError && err.code === 'TOMBSTONED') return true;
    throw err;
  }
};

test(`all ${VARIANTS.length} variants of forgotten claims are refused, whatever field or route carries them`, async (t) => {
  assert.ok(VARIANTS.length >= 40);
  const w = await world(t);
  const through: string[] = [];
  for (const v of VARIANTS) if (!(await refused(w, v))) through.push(`${v.kind}/${v.route}: ${JSON.stringify(v.text)}`);
  assert.deepEqual(through, []);
  // Nothing of them was stored, and the prediction and thread are still open.
  assert.equal(w.s.threads({ open: true }).length, 1);
  assert.equal(w.s.stats().predictions_open, 1);
});

test(`none of ${TRUE_CLAIMS.length} different true claims on the same topics is refused`, async (t) => {
  assert.ok(TRUE_CLAIMS.length >= 40);
  const w = await world(t);
  const refusedClaims: string[] = [];
  for (const text of TRUE_CLAIMS) {
    try {
      await w.s.observe({ text, tags: ['ops'], source: 'sess-9' }, SESSION);
    } catch (err) {
      if (!(err instanceof MemoryError && err.code === 'TOMBSTONED')) throw err;
      refusedClaims.push(text);
    }
  }
  assert.deepEqual(refusedClaims, []);
});

test('negative control: with similarity off (1.0) the near copies get through, and the old keys miss the invisible and confusable variants', async (t) => {
  const w = await world(t, { forgetSimilarity: 1 });
  const near = VARIANTS.filter((v) => v.kind === 'near' && v.route === 'observe');
  let through = 0;
  for (const v of near) if (!(await refused(w, v))) through++;
  // Those that still hold the claim whole (an added word at an end, a trailing dot) stay refused.
  assert.ok(through >= near.length / 2, `${through} of ${near.length} near copies got through`);
  // The keys before this change (NFKC, lower case, words): most look-alikes pass them.
  const old = new Set(FORGOTTEN.flatMap(legacyKeys));
  const looks = VARIANTS.filter((v) => ['invisible', 'confusable'].includes(v.kind));
  const missed = looks.filter((v) => !legacyKeys(v.text).some((k) => old.has(k)));
  assert.ok(missed.length >= looks.length / 2, `old keys missed ${missed.length} of ${looks.length}`);
});

test('folding: invisible code points, compatibility forms, case and confusables fold to one spelling', () => {
  const plain = fold('The guardrail hook');
  for (const x of ['The guard\u200brail hook', 'THE GUARDRAIL HOOK', '\u0422he gu\u0430rdr\u0430il h\u03bf\u03bfk', '\uff34he guardrail hook', 'The guardrail ho\u00adok\ufe0f', 'ΤΗΕ GUARDRAIL HOOK']) {
    assert.equal(fold(x), plain, JSON.stringify(x));
  }
  assert.notEqual(fold('The guardrail hook'), fold('The guardrail book'));
});

test('the same words in another order are another claim; one word added or removed is a near copy', () => {
  const [near] = tombstoneKeysOf("Bob's bank PIN is 4921").filter((k) => k.startsWith('near:')).map((k) => ({ key: k, near: parseNear(k)! }));
  assert.equal(nearMatch("Is 4921 Bob's bank PIN", [near!], 0.8), null);
  assert.equal(nearMatch("Bob's bank PIN is still 4921", [near!], 0.8)?.how, 'near');
  assert.equal(nearMatch("Bob's PIN is 4921", [near!], 0.8)?.how, 'near');
  assert.equal(sequenceDice([1, 2, 3], [3, 2, 1]), 1 / 3);
});

test('the claim whole inside a longer text is found; a short claim is not searched inside others', () => {
  const keys = (c: string) => tombstoneKeysOf(c).filter((k) => k.startsWith('near:')).map((k) => ({ key: k, near: parseNear(k)! }));
  assert.equal(nearMatch('Session 4 of night ended ok after 12 turns ($0.8812): Dave keeps the root password in passwords.txt on the NAS, as the ticket said.', keys(FORGOTTEN[1]), 0.8)?.how, 'within');
  assert.equal(nearMatch('We said lunch is at noon and went on with the build of the release', keys('Lunch noon'), 0.8), null);
});

test('tombstone keys hold no text: hashes and one byte per word', () => {
  const keys = tombstoneKeysOf(FORGOTTEN[1]);
  assert.equal(keys.length, 3);
  for (const k of keys) for (const word of ['dave', 'root', 'password', 'nas']) assert.ok(!k.toLowerCase().includes(word), k);
  assert.deepEqual(exactKeysOf(FORGOTTEN[1]), keys.slice(0, 2));
});

// Every byte of the store's files (the database, its WAL and shared memory).
const fileBytes = (db: string) => Buffer.concat(['', '-wal', '-shm'].map((x) => (fs.existsSync(db + x) ? fs.readFileSync(db + x) : Buffer.alloc(0))));
const SECRET = 'Quokkaberry vault code is 58213 for the zanzibarian lantern';
const TOKENS = ['Quokkaberry', 'zanzibarian', '58213'];
const holds = (bytes: Buffer) => [SECRET, ...TOKENS].filter((s) => bytes.includes(Buffer.from(s)) || bytes.includes(Buffer.from(s.toLowerCase())));

async function secretStore(t: TestContext): Promise<{ file: string; s: MemoryStore; ids: number[] }> {
  const file = path.join(tempDir(t), 'memory.db');
  const s = MemoryStore.open(file);
  for (let i = 0; i < 30; i++) await s.observe({ text: `Filler note ${i} about the weekly build and its logs` }, CLI);
  const a = await s.observe({ text: SECRET, source: 'sess-1', tags: ['vault'] }, CLI);
  await s.observe({ text: `${SECRET}.` }, CLI);
  const p = await s.predict({ text: `${SECRET} until June` }, CLI);
  s.resolvePrediction(p.id, 'wrong', 'the Quokkaberry code changed', CLI);
  return { file, s, ids: [a.memory_id, p.id] };
}

test('after a forget the text is gone from the file: database, WAL and FTS index', async (t) => {
  const { file, s, ids } = await secretStore(t);
  assert.ok(holds(fileBytes(file)).length > 0, 'the secret is in the file before');
  const r = s.deleteForever(ids, 'a secret', CLI);
  assert.equal(r.checkpointed, true);
  assert.ok(r.audit_redacted >= 1, 'the resolve note in the audit log');
  assert.deepEqual(holds(fileBytes(file)), []);
  assert.equal(fs.statSync(`${file}-wal`).size, 0, 'the WAL is truncated');
  s.close();
  assert.deepEqual(holds(fileBytes(file)), []);
  // The store still works, and the claim is refused.
  const again = MemoryStore.open(file);
  t.after(() => again.close());
  await assert.rejects(again.observe({ text: SECRET }, CLI), (e: unknown) => e instanceof MemoryError && e.code === 'TOMBSTONED');
  assert.equal((await again.query('weekly build')).length > 0, true);
});

test('negative control: the same deletes without secure_delete, FTS merge and checkpoint leave the text in the file', async (t) => {
  const { file, s, ids } = await secretStore(t);
  s.close();
  const db = new Database(file);
  db.transaction(() => {
    for (const id of ids) {
      for (const sql of ['DELETE FROM reviews WHERE memory_id = @id', 'DELETE FROM predictions WHERE memory_id = @id', 'DELETE FROM edges WHERE from_id = @id OR to_id = @id', 'DELETE FROM observations WHERE memory_id = @id', 'DELETE FROM memories WHERE id = @id']) db.prepare(sql).run({ id });
    }
  })();
  assert.equal((db.prepare('SELECT count(*) AS n FROM memories WHERE text LIKE ?').get('%Quokkaberry%') as { n: number }).n, 0, 'deleted as far as SQL can tell');
  assert.ok(holds(fileBytes(file)).length > 0, 'yet the bytes remain');
  db.close();
});

test('state copies beside transcripts and in the vault are redacted; other files and lines are kept', async (t) => {
  const dir = tempDir(t);
  const logs = path.join(dir, 'logs');
  const vault = path.join(dir, 'vault');
  fs.mkdirSync(path.join(logs, 'transcripts'), { recursive: true });
  fs.mkdirSync(path.join(vault, '.nightshift'), { recursive: true });
  const state = [
    '# Identity',
    `- [belief] ${FORGOTTEN[0]} (#12, salience 0.70)`,
    '- [belief] Small commits are easier to review (#3, salience 0.60)',
    `- contradiction: #12 "${FORGOTTEN[0].slice(0, 20)}…" vs #4 "The hook is right"`,
    `- wander 1: ${FORGOTTEN[1].replace('root', 'r\u200boot')} (#120)`,
  ].join('\n');
  const beside = path.join(logs, 'transcripts', 'sess-1.state.md');
  const current = path.join(vault, '.nightshift', 'session-state.md');
  const transcript = path.join(logs, 'transcripts', 'sess-1.jsonl');
  for (const f of [beside, current]) fs.writeFileSync(f, state);
  fs.writeFileSync(transcript, '{"type":"assistant"}\n');
  const s = MemoryStore.open(path.join(dir, 'memory.db'));
  t.after(() => s.close());
  s.tombstone(FORGOTTEN[1], 'test', CLI);
  const files = stateCopies(logs, vault);
  assert.deepEqual(files.sort(), [beside, current].sort());
  assert.deepEqual(redactStateFiles(files, new Set([12]), (l) => s.isForgotten(l)).sort(), [beside, current].sort());
  for (const f of [beside, current]) {
    const text = fs.readFileSync(f, 'utf8');
    assert.equal(text, ['# Identity', '- [forgotten]', '- [belief] Small commits are easier to review (#3, salience 0.60)', '- [forgotten]', '- [forgotten]'].join('\n'));
  }
  assert.equal(redactStateText('nothing here (#1)', new Set([12]), () => false), null, '#1 is not #12');
});

test('audit values about a forgotten memory lose their text; other values stay', () => {
  const row = { outcome: 'wrong', note: 'see the wiki', touched: [3, 4], nested: { text: 'The old VPN hint' } };
  assert.deepEqual(redactValue(row, () => false, true), { outcome: 'wrong', note: '[forgotten]', touched: [3, 4], nested: { text: '[forgotten]' } });
  assert.deepEqual(redactValue(row, (x) => x.includes('VPN'), false), { ...row, nested: { text: '[forgotten]' } });
});
