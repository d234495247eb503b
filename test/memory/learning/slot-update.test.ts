// The slot-difference detector and the update relation, pure, on a table of pairs: one value
// changed (numbers, names, places, dates, colours, addresses, multi-word values, a predicate), and
// pairs that are not one fact with a changed value (the same claim, negation, two changes, other
// topics, passages, two speakers of themselves).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slotDifference, updateRelation, valueTokens } from '../../../memory/learning/slot-update.js';
import { UPDATE_PAIRS } from '../update-pairs.js';

const CHANGED: Array<[string, string, string, string]> = [
  ['My favourite colour is purple', 'My favourite colour is cyan', 'purple', 'cyan'],
  ['The deploy key for the blog lives in the ops vault', 'The deploy key for the blog lives in the personal vault', 'ops', 'personal'],
  ['The web app runs on atlas-one', 'The web app runs on borealis-two', 'atlas-one', 'borealis-two'],
  ['The team has 5 engineers.', 'The team has 12 engineers.', '5', '12'],
  ['Grafana is reachable at 10.0.3.17', 'Grafana is reachable at 10.0.8.40', '10.0.3.17', '10.0.8.40'],
  ['Alice owns the billing service', 'Bob owns the billing service', 'alice', 'bob'],
  ['The launch is planned for 12 May', 'The launch is planned for 9 June', '12 may', '9 june'],
  ['The accountant of the company is now Berger and Partner', 'The accountant of the company is now Nordlicht Tax', 'berger and partner', 'nordlicht tax'],
  ['The standup starts at 9:30', 'The standup now starts at 10:15', '9:30', '10:15'], // "now" added: a stop word
  ['The payments flag is off', 'The payments flag is on', 'off', 'on'], // stop words, as the predicate
  ['Ravi is vegetarian', 'Ravi is vegan', 'vegetarian', 'vegan'],
  ['The newsletter has 1,200 subscribers', 'The newsletter has 1,950 subscribers', '1,200', '1,950'],
  ['Dana lives in Lisbon.', 'dana LIVES in porto', 'lisbon', 'porto'], // case and punctuation do not count
];

const NOT: Array<[string, string, string]> = [
  ['My favourite colour is purple', 'My favourite colour is purple!', 'the same claim'],
  ['The server is in the rack', 'The server is in a rack', 'an article only'],
  ['The build passes', 'The build does not pass', 'negation'],
  ['The relay is online', 'The relay is not online', 'negation added'],
  ['Alice owns billing in Berlin', 'Bob owns billing in Paris', 'two values changed'],
  ['The web app runs on atlas-one', 'The cat sleeps on the sofa', 'another topic'],
  ['Thanks, Mel!', 'Thanks, Caroline!', 'too little shared'],
  ['The staging database listens on port 5432 since the migration', 'The staging database listens on port 6432 after the last big migration we ran', 'more than the value changed'],
  ['The deploy key lives in the ops vault', 'The deploy key lives in the ops vault and the backup key in the personal one', 'an addition, not a change'],
  ['The server was rebooted', 'The server is rebooted', 'tense: stop words mid-claim'],
  ['The pottery kiln fires stoneware at 1240 degrees', 'The pottery kiln fires stoneware glaze on Saturdays', 'a long slot in a short frame: different things added'],
];

test('slotDifference finds the one changed value, after normalisation', () => {
  for (const [a, b, from, to] of CHANGED) {
    const d = slotDifference(a, b);
    assert.ok(d, `expected a changed value in ${JSON.stringify(a)} / ${JSON.stringify(b)}`);
    assert.deepEqual([d.from, d.to], [from, to], `${a} / ${b}`);
    // Symmetric: the same slot read the other way.
    const r = slotDifference(b, a);
    assert.deepEqual(r && [r.from, r.to], [to, from], `${b} / ${a}`);
  }
});

test('slotDifference is null when the pair is not one fact with a changed value', () => {
  for (const [a, b, why] of NOT) assert.equal(slotDifference(a, b), null, `${why}: ${a} / ${b}`);
});

test('values keep their inner punctuation', () => {
  assert.deepEqual(valueTokens('Reach it at 10.0.3.17, port 5432 (atlas-one).'), ['reach', 'it', 'at', '10.0.3.17', 'port', '5432', 'atlas-one']);
});

test('every pair of the update set but one is seen as one changed value', () => {
  const missed = UPDATE_PAIRS.filter((p) => !slotDifference(p.old, p.new)).map((p) => p.old);
  // A three-word value in a three-word frame: too little shared to tell a change from an addition.
  assert.deepEqual(missed, ['Our accountant is Berger and Partner']);
  assert.ok(UPDATE_PAIRS.length >= 40);
});

test('updateRelation: the later valid_from is current, the same time is a contradiction, two speakers of themselves are two subjects', () => {
  const a = { text: 'My favourite colour is purple', valid_from: '2026-01-01T00:00:00.000Z', speaker: 'operator' };
  const b = { text: 'My favourite colour is cyan', valid_from: '2026-06-01T00:00:00.000Z', speaker: 'operator' };
  assert.equal(updateRelation(a, b)?.kind, 'current');
  // Told later about an earlier time: the stored one stays current.
  assert.equal(updateRelation(b, a)?.kind, 'earlier');
  assert.equal(updateRelation(a, { ...b, valid_from: a.valid_from })?.kind, 'contradiction');
  // "My ..." from two speakers: two people's favourite colours.
  assert.equal(updateRelation(a, { ...b, speaker: 'caroline' }), null);
  // Of the world, from two sources at two times: an update.
  const x = { text: 'The web app runs on atlas-one', valid_from: a.valid_from, speaker: 'operator' };
  const y = { text: 'The web app runs on borealis-two', valid_from: b.valid_from, speaker: 'ops-agent' };
  assert.equal(updateRelation(x, y)?.kind, 'current');
  assert.equal(updateRelation(x, { ...y, text: 'The web app runs on atlas-one' }), null);
});
