// The outcome and turns the ledger keeps, where the stream (the session's to write) and the
// proxy's own view of the calls disagree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkedByProxy } from '../../../sessions/run/outcome.js';

const ok = { outcome: 'ok' as const, error: null };

test('an honest session: the stream and the proxy agree, nothing is said', () => {
  assert.deepEqual(checkedByProxy(ok, 8, { answered: 8, lastStop: 'end_turn' }), { ...ok, turns: 8, disagreements: [] });
});

test('a forged ok after a tool call: not ok, the turns are the proxy\'s, both named', () => {
  const c = checkedByProxy(ok, 1, { answered: 7, lastStop: 'tool_use' });
  assert.equal(c.outcome, 'error');
  assert.match(c.error ?? '', /not believed: the last call the API answered asked for a tool/);
  assert.equal(c.turns, 7);
  assert.equal(c.disagreements.length, 2);
  assert.match(c.disagreements[0], /stream says 1 turn\(s\), the proxy saw 7/);
});

test('an ok the API never answered a call for is not ok', () => {
  const c = checkedByProxy(ok, 1, { answered: 0, lastStop: null });
  assert.equal(c.outcome, 'error');
  assert.match(c.error ?? '', /answered no call/);
  assert.equal(c.turns, 0);
});

test('a failure stays what it was; only the turns follow the proxy', () => {
  const failed = { outcome: 'timeout' as const, error: 'wall clock' };
  assert.deepEqual(checkedByProxy(failed, 3, { answered: 4, lastStop: 'tool_use' }), { ...failed, turns: 4, disagreements: ['the stream says 3 turn(s), the proxy saw 4 call(s) answered'] });
});

test('a last answer whose end is unknown (cut, or unsaid) does not contradict an ok', () => {
  assert.equal(checkedByProxy(ok, 2, { answered: 2, lastStop: null }).outcome, 'ok');
});

test('unwalled (no proxy view is kept): the stream\'s own', () => {
  assert.deepEqual(checkedByProxy(ok, 5, null), { ...ok, turns: 5, disagreements: [] });
});
