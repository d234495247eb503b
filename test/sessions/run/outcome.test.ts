// The outcome, turns and hold the ledger keeps, where the stream (the session's to write) and the
// proxy's own view of the calls disagree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkedByProxy } from '../../../sessions/run/outcome.js';
import type { UpstreamLimit } from '../../../budget/upstream-limit.js';

const ok = { outcome: 'ok' as const, error: null };
const says = (turns: number, limited = false) => ({ turns, limited });
const limit429: UpstreamLimit = { status: 429, rejected: false, retry_at: '2026-12-01T15:00:00.000Z', source: 'retry-after' };
const cliError = { outcome: 'error' as const, error: 'API error 429: API Error: Request rejected (429) · fake 429' };

test('an honest session: the stream and the proxy agree, nothing is said', () => {
  assert.deepEqual(checkedByProxy(ok, says(8), { answered: 8, lastStop: 'end_turn' }), { ...ok, turns: 8, calls: 8, retryAt: null, disagreements: [] });
});

test('the CLI\'s own extra call (a one-turn answer, two calls answered): 1 turn, 2 calls, no disagreement', () => {
  assert.deepEqual(checkedByProxy(ok, says(1), { answered: 2, lastStop: 'end_turn' }), { ...ok, turns: 1, calls: 2, retryAt: null, disagreements: [] });
});

test('a stream that claims more turns than the proxy saw answered: the proxy\'s count, and said', () => {
  const c = checkedByProxy({ outcome: 'error', error: 'x' }, says(40), { answered: 2, lastStop: 'tool_use' });
  assert.equal(c.turns, 2);
  assert.deepEqual(c.disagreements, ['the stream says 40 turns, more than the 2 calls the proxy saw answered']);
});

test('a forged ok after a tool call: not ok, the turns are the proxy\'s, said', () => {
  const c = checkedByProxy(ok, says(1), { answered: 7, lastStop: 'tool_use' });
  assert.equal(c.outcome, 'error');
  assert.match(c.error ?? '', /not believed: the last call the API answered asked for a tool/);
  assert.equal(c.turns, 7, 'a result not believed gives no turn count either');
  assert.equal(c.disagreements.length, 1);
  assert.match(c.disagreements[0], /the stream says the session ended ok, but the last call the API answered asked for a tool/);
});

test('an ok the API never answered a call for is not ok', () => {
  const c = checkedByProxy(ok, says(1), { answered: 0, lastStop: null });
  assert.equal(c.outcome, 'error');
  assert.match(c.error ?? '', /answered no call/);
  assert.equal(c.turns, 0);
});

test('a failure stays what it was; fewer turns than calls is no disagreement', () => {
  const failed = { outcome: 'timeout' as const, error: 'wall clock' };
  assert.deepEqual(checkedByProxy(failed, says(3), { answered: 4, lastStop: 'tool_use' }), { ...failed, turns: 3, calls: 4, retryAt: null, disagreements: [] });
});

test('a last answer whose end is unknown (cut, or unsaid) does not contradict an ok', () => {
  assert.equal(checkedByProxy(ok, says(2), { answered: 2, lastStop: null }).outcome, 'ok');
});

test('unwalled (no proxy view of the calls is kept): the stream\'s own turns', () => {
  assert.deepEqual(checkedByProxy(ok, says(5), null), { ...ok, turns: 5, calls: null, retryAt: null, disagreements: [] });
});

test('a 429 the proxy relayed, then the CLI\'s error: rate_limited until the reset its headers gave', () => {
  const c = checkedByProxy(cliError, says(0, true), { answered: 0, lastStop: null, limited: limit429 });
  assert.equal(c.outcome, 'rate_limited');
  assert.equal(c.retryAt, '2026-12-01T15:00:00.000Z');
  assert.match(c.error ?? '', /^the API answered 429, until 2026-12-01T15:00:00.000Z \(API error 429/);
  assert.deepEqual(c.disagreements, []);
  // Unwalled the proxy relays every call too: the limit it relayed still counts.
  assert.equal(checkedByProxy(cliError, says(0, true), null, limit429).outcome, 'rate_limited');
});

test('a 429 the stream reports and the proxy never relayed (a tool answered the CLI): an error, no hold, said', () => {
  const c = checkedByProxy({ outcome: 'error', error: 'API error 429: Claude AI usage limit reached|4102444800' }, says(1, true), { answered: 1, lastStop: 'tool_use', limited: null });
  assert.equal(c.outcome, 'error');
  assert.equal(c.retryAt, null);
  assert.deepEqual(c.disagreements, ['the stream says the API refused the session for a limit, but the proxy relayed no such answer']);
});

test('a limit the CLI got past (it retried, and the session ended ok or stopped on our watchdog) is no rate_limited', () => {
  assert.equal(checkedByProxy(ok, says(1), { answered: 1, lastStop: 'end_turn', limited: limit429 }).outcome, 'ok');
  assert.equal(checkedByProxy({ outcome: 'timeout', error: null }, says(1), { answered: 1, lastStop: null, limited: limit429 }).outcome, 'timeout');
});
