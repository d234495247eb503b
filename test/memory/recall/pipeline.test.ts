// The query pipeline over a RecallSource made of plain data: no store, no SQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoMs, rankMemories, type RecallSource } from '../../../memory/recall/pipeline.js';
import { DEFAULT_WEIGHTS } from '../../../memory/store.js';
import { namedPeriods, within } from '../../../memory/text/periods.js';
import { mentions } from '../../../memory/text/speaker.js';
import { asksMostly, queryTerms, tokens } from '../../../memory/text/text.js';
import type { RankWeights } from '../../../memory/recall/rank.js';

type Row = { id: number; text: string; speaker?: string; at?: string };
const AT = '2024-01-01T00:00:00.000Z';

// A source over `rows`: the lexical arm scores a row by how many of the query's terms it holds
// (a plain stand-in for BM25), no edges, no vectors, every row equally old and salient.
function source(rows: Row[], weights: Partial<RankWeights> = {}): RecallSource & { asked: string[] } {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const asked: string[] = [];
  return {
    asked,
    weights: { ...DEFAULT_WEIGHTS, ...weights },
    now: new Date('2024-06-01T00:00:00.000Z'),
    selective: (terms) => terms,
    lexical: (q) => {
      const terms = [...q.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
      asked.push(...terms);
      const memories = rows
        .map((r) => ({ id: r.id, s: terms.filter((t) => tokens(r.text).includes(t)).length }))
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s || a.id - b.id);
      return { memories, evidence: [] };
    },
    vectorTop: () => [],
    edgesAround: () => [],
    states: (ids) => ids.map((id) => ({ id, text: byId.get(id)!.text, salience: 0.5, last_seen: byId.get(id)!.at ?? AT, faded: 0, superseded_by: null, speaker: byId.get(id)!.speaker ?? null, valid_from: byId.get(id)!.at ?? AT, valid_to: null, outdated: 0 })),
    speakers: () => [...new Set(rows.flatMap((r) => (r.speaker ? [r.speaker] : [])))],
    texts: (ids) => ids.map((id) => ({ id, text: byId.get(id)!.text, category: 'observation' as const, faded: 0, superseded_by: null })),
    sourcesOf: (ids) => new Map(ids.map((id) => [id, [`s${id}`]])),
  };
}

const order = (src: RecallSource, q: string) => rankMemories(src, q, null, { limit: 10 }).map((r) => r.id);

test('a name said to someone is not said of them: vocatives do not count as mentions', () => {
  assert.equal(mentions('Thanks, Caroline! That means a lot.', 'Caroline'), false);
  assert.equal(mentions('Hey Jon, how was the fair?', 'Jon'), false);
  assert.equal(mentions('Wow, Caroline, your group sounds great', 'Caroline'), false);
  assert.equal(mentions('I went to the fair with Caroline last week.', 'Caroline'), true);
  assert.equal(mentions("Caroline's painting was the best one there", 'Caroline'), true);
  // One real mention beside a vocative still counts.
  assert.equal(mentions('Thanks, Jon! I told Jon about it yesterday.', 'Jon'), true);
});

test('a query naming one speaker: the other speaker addressing them keeps the speaker penalty; a remark about them does not', () => {
  const rows: Row[] = [
    { id: 1, text: 'Bob: Thanks, Alice! Your pottery class sign-up went through', speaker: 'Bob' },
    { id: 2, text: 'Alice: I joined a pottery class', speaker: 'Alice' },
    { id: 3, text: 'Bob: I think Alice loved her pottery class', speaker: 'Bob' },
  ];
  const q = 'Which pottery class did Alice sign up for?';
  // Bob's thanks holds the most query words; it is Bob's own news, said to Alice, not of her.
  const got = order(source(rows), q);
  assert.ok(got.indexOf(2) < got.indexOf(1) && got.indexOf(3) < got.indexOf(1), `Expected Alice's own words and Bob's remark about her above Bob's thanks, got ${got.join(', ')}`);
  // The control: with the prior off, Bob's thanks ranks first.
  const off = order(source(rows, { speaker: 0 }), q);
  assert.equal(off[0], 1, `Expected the control to put Bob's thanks first, got ${off.join(', ')}`);
});

test("a question's frame is not its topic: 'what kind of', 'how many' leave the query's terms", () => {
  assert.deepEqual(queryTerms('What kind of art does Alice make?'), ['art', 'alice', 'make']);
  assert.deepEqual(queryTerms('How many types of pottery has she made?'), ['pottery', 'made']);
  assert.deepEqual(queryTerms('How long did the trip take?'), ['trip', 'take']);
  // Outside the frame the words stay: a kind word, a long trip.
  assert.deepEqual(queryTerms('Who said a kind word on the long trip?'), ['said', 'kind', 'word', 'long', 'trip']);
  const rows: Row[] = [
    { id: 1, text: 'Alice: that was so kind of you, make yourself at home', speaker: 'Alice' },
    { id: 2, text: 'Alice: I make abstract art', speaker: 'Alice' },
  ];
  const src = source(rows);
  assert.deepEqual(order(src, 'What kind of art does Alice make?'), [2, 1]);
  assert.ok(!src.asked.includes('kind'), `Expected "kind" out of the lexical query, asked ${src.asked.join(' ')}`);
});

test('a memory that mostly asks ranks below one that tells; with the prior off, the more words win', () => {
  assert.equal(asksMostly('Gina: Hey Jon! What is your favorite style of dance?'), true);
  assert.equal(asksMostly('What time is it? [image: a clock on a wall. A cat.]'), true);
  assert.equal(asksMostly('Jon: Contemporary is my top pick. It is so expressive. Do you dance?'), false);
  assert.equal(asksMostly('The deploy key lives in the ops vault.'), false);
  const rows: Row[] = [
    { id: 1, text: 'Gina: What is your favorite style of dance, contemporary?', speaker: 'Gina' },
    { id: 2, text: 'Jon: Contemporary dance is my top pick, so expressive.', speaker: 'Jon' },
  ];
  const q = 'What is the favorite style of dance, contemporary?';
  assert.deepEqual(order(source(rows), q), [2, 1]);
  assert.deepEqual(order(source(rows, { asking: 0 }), q), [1, 2], 'the control: without the prior the question, holding more of the words, is first');
});

test('the periods a query names: a day, a month of a year; a month without its year names none', () => {
  const day = { from: '2023-10-13T00:00:00.000Z', to: '2023-10-14T00:00:00.000Z' };
  assert.deepEqual(namedPeriods('What did Mel show on October 13, 2023?'), [day]);
  assert.deepEqual(namedPeriods('what happened on 13 Oct 2023'), [day]);
  assert.deepEqual(namedPeriods('the 13th of October, 2023'), [day]);
  assert.deepEqual(namedPeriods('deploys since 2023-10-13'), [day]);
  assert.deepEqual(namedPeriods('What did they paint in July 2023?'), [{ from: '2023-07-01T00:00:00.000Z', to: '2023-08-01T00:00:00.000Z' }]);
  assert.deepEqual(namedPeriods('What did they do in July?'), []);
  assert.deepEqual(namedPeriods('February 30, 2023 never was'), []);
  assert.deepEqual(namedPeriods('I may 2023 go'), [{ from: '2023-05-01T00:00:00.000Z', to: '2023-06-01T00:00:00.000Z' }], 'a known limit: "may" before a year reads as the month');
  assert.equal(within('2023-10-13T13:56:00.000Z', [day], 1), true);
  assert.equal(within('2023-10-14T20:00:00.000Z', [day], 1), true, 'a day of slack');
  assert.equal(within('2023-10-16T00:00:00.000Z', [day], 1), false);
});

test('a query naming a day ranks what was said that day above what was said another day; with the prior off it does not', () => {
  const rows: Row[] = [
    { id: 1, text: 'Mel: here is my new painting of the lake at sunset', speaker: 'Mel', at: '2023-08-20T10:00:00.000Z' },
    { id: 2, text: 'Mel: here is a painting I did', speaker: 'Mel', at: '2023-10-13T13:56:00.000Z' },
  ];
  const q = 'What painting of the lake did Mel share on October 13, 2023?';
  assert.deepEqual(order(source(rows), q), [2, 1]);
  assert.deepEqual(order(source(rows, { period: 0 }), q), [1, 2], 'the control: without the prior the painting of the lake, more words, is first');
});

// The asking prior's verdict is kept per memory id with the text it was read from (pipeline.ts
// asksMemo): a memory of the same id whose text is now a statement must be scored as a statement.
test('the asking prior follows a memory\'s current text, not a verdict kept from an earlier query', () => {
  const q = 'when is the deploy';
  const score = (rows: Row[]) => rankMemories(source(rows), q, null, { limit: 10 })[0].score;
  const asked = score([{ id: 7, text: 'When is the deploy, on Friday?' }]);
  const statement = 'The deploy is on Friday.';
  const now = score([{ id: 7, text: statement }]);
  const fresh = score([{ id: 1_000_007, text: statement }]); // never seen: read afresh
  assert.ok(asked < fresh, `the question loses its share of the score (${asked} vs ${fresh})`);
  assert.equal(now, fresh);
});

test('isoMs reads every time as Date.parse does: the store\'s own form by its digits, anything else by Date.parse', () => {
  const cases: string[] = [];
  // The store's form, over four centuries, every month and day-of-month position, odd milliseconds.
  for (let i = 0; i < 20_000; i++) cases.push(new Date(Date.UTC(1900, 0, 1) + i * 7_919_993_117).toISOString());
  cases.push(
    // The 29th to the 32nd, in months that have them and months that do not.
    '2023-02-29T00:00:00.000Z', '2024-02-29T12:00:00.000Z', '2023-02-30T00:00:00.000Z', '2023-04-31T10:00:00.000Z', '2023-12-31T23:59:59.999Z', '2023-01-32T00:00:00.000Z',
    // Out of range fields and the two-digit-year trap of Date.UTC.
    '2023-13-01T00:00:00.000Z', '2023-00-10T00:00:00.000Z', '2023-01-00T00:00:00.000Z', '2023-01-10T24:00:00.000Z', '2023-01-10T23:60:00.000Z', '2023-01-10T23:59:60.000Z',
    '0050-06-15T00:00:00.000Z', '0099-12-01T00:00:00.000Z', '0100-01-01T00:00:00.000Z',
    // Same length, not digits; other forms.
    '2023-0a-10T00:00:00.000Z', '2023-01-10T0-:00:00.000Z', '2023-01-10 00:00:00.000Z', '2023-01-10T00:00:00.000+', '2023-05-08', '2023-05-08T13:56:00Z', '2023-05-08T13:56:00.000+02:00', '', 'yesterday',
  );
  for (const s of cases) assert.equal(Object.is(isoMs(s), Date.parse(s)), true, `${s}: isoMs ${isoMs(s)}, Date.parse ${Date.parse(s)}`);
});
