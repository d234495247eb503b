// What a fire did, in words and an exit code (daemon/tick/fire-words.ts): pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PassedOver } from '../../../budget/fires.js';
import { dispatchPassedOver, fireWords, type FireFacts } from '../../../daemon/tick/fire-words.js';
import { decide } from '../../../daemon/schedule/dispatch.js';

const NOW = new Date('2026-12-01T10:00:00Z');
const invalid: PassedOver = { rule: 0, agent: 'broken', cause: 'invalid', why: 'the agent file is invalid: /p/broken.md: model: Required' };
const skip = (reason: string, limit: string | null = null) => ({ action: 'skip' as const, reason, limit, session: null, dream: null, exit: 0 });
const facts = (f: Partial<FireFacts> & Pick<FireFacts, 'dispatch'> & ({ result: any } | { error: any })): FireFacts => ({ kind: 'tick', chosen: null, charged: null, ...f } as FireFacts);

test('a due rule passed over for an invalid file: the skip exits 78 and names the agent', () => {
  const w = fireWords(facts({ dispatch: [invalid], result: skip('no rule is due: rule 0 (broken) is passed over: …') }));
  assert.equal(w.action, 'skip');
  assert.equal(w.exit_code, 78);
  assert.deepEqual(w.passed_over, [invalid]);
  // Control: nothing passed over, the same skip exits 0.
  assert.equal(fireWords(facts({ dispatch: [], result: skip('no rule is due') })).exit_code, 0);
});

test('another agent ran ok while a due rule was passed over for its invalid file: 78; a failed session keeps its 1', () => {
  const ran = (exit: number) => ({ action: 'session' as const, reason: 'rule 1 (worker) is due', limit: null, session: { id: 's1', outcome: exit ? 'error' : 'ok' }, dream: null, exit });
  const ok = fireWords(facts({ dispatch: [invalid], chosen: { agent: 'worker', rule: 1 }, charged: 's1', result: ran(0) }));
  assert.deepEqual([ok.action, ok.session, ok.outcome, ok.exit_code, ok.agent], ['session', 's1', 'ok', 78, 'worker']);
  assert.match(ok.reason, /session s1 ended ok \(exit 78: a due rule was passed over for an invalid agent file: broken\)/);
  assert.equal(fireWords(facts({ dispatch: [invalid], result: ran(1) })).exit_code, 1);
  assert.equal(fireWords(facts({ dispatch: [], result: ran(0) })).exit_code, 0);
});

test('a held agent\'s rule is a passed-over skip that exits 0; the budget\'s and a window\'s refusals name the agent chosen', () => {
  const held: PassedOver = { rule: 1, agent: 'h', cause: 'held', why: 'held until 2026-12-01T12:00:00Z: rate limited' };
  const h = fireWords(facts({ dispatch: [held], result: skip('no rule is due: rule 1 (h) is held until …') }));
  assert.deepEqual([h.action, h.exit_code, h.passed_over], ['skip', 0, [held]]);
  const b = fireWords(facts({ dispatch: [], chosen: { agent: 'c', rule: 2 }, result: skip('max_sessions_per_day reached (1 of 1)', 'max_sessions_per_day') }));
  assert.deepEqual(b.passed_over, [{ rule: 2, agent: 'c', cause: 'budget', why: 'max_sessions_per_day reached (1 of 1)' }]);
  assert.equal(b.exit_code, 0);
  const w = fireWords(facts({ dispatch: [], chosen: { agent: 'c', rule: 2 }, result: skip('window 5h at 97%', 'max_window_utilization') }));
  assert.equal(w.passed_over[0].cause, 'window');
});

test('locked: 0 for a tick, 75 for run; run refuses what a tick skips', () => {
  assert.deepEqual(((w) => [w.action, w.exit_code])(fireWords(facts({ dispatch: [], result: skip('locked: another supervisor is running', 'lock') }))), ['locked', 0]);
  assert.deepEqual(((w) => [w.action, w.exit_code])(fireWords(facts({ kind: 'run', dispatch: [], result: skip('locked: …', 'lock') }))), ['locked', 75]);
  assert.deepEqual(((w) => [w.action, w.exit_code])(fireWords(facts({ kind: 'run', dispatch: [], result: skip('max_usd_per_day reached', 'max_usd_per_day') }))), ['refused', 75]);
});

test('a thrown error: refused (75, 77, 78) or failed to start (70); after the charge it is the session\'s fire', () => {
  const err = (exitCode: number, charged: string | null = null) => fireWords(facts({ dispatch: [], charged, error: { message: 'why', exitCode } }));
  assert.deepEqual([err(75).action, err(78).action, err(77).action, err(70).action], ['refused', 'refused', 'refused', 'failed to start']);
  assert.equal(err(70).exit_code, 70);
  const after = err(70, 's9');
  assert.deepEqual([after.action, after.session], ['session', 's9']);
  assert.match(after.reason, /the session s9 was charged, then the tick failed: why/);
});

test('dispatch: a broken agent\'s rule is passed over only when its terms made it due', () => {
  const broken = { broken: '/p/broken.md: model: Required' };
  const due = decide(NOW, 'UTC', [{ agent: 'broken' }, { agent: 'worker' }], {}, {}, {}, broken);
  assert.equal(due.agent, 'worker');
  assert.deepEqual(dispatchPassedOver(due.rules).map((p) => [p.agent, p.cause]), [['broken', 'invalid']]);
  assert.match(due.rules[0].why, /the agent file is invalid: \/p\/broken\.md.*the tick passes it over and exits 78/);
  // Control: not its hour: no passed-over rule (and no 78), the file still named.
  const later = decide(NOW, 'UTC', [{ agent: 'broken', hours: [3] }, { agent: 'worker' }], {}, {}, {}, broken);
  assert.deepEqual(dispatchPassedOver(later.rules), []);
  assert.match(later.rules[0].why, /^not at hour 10 \(hours: 3\); the agent file is invalid/);
  // Nothing else due: the skip's reason names it.
  const alone = decide(NOW, 'UTC', [{ agent: 'broken' }], {}, {}, {}, broken);
  assert.match(alone.reason, /^no rule is due: rule 0 \(broken\) is passed over: the agent file is invalid: \/p\/broken\.md/);
});
