import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decide, type Rule } from '../../../daemon/schedule/dispatch.js';
import { tickPlan } from '../../../daemon/schedule/tick-plan.js';

const at = new Date('2026-12-07T10:00:00Z');
const rules: Rule[] = ['a', 'b', 'c', 'd', 'e'].map((agent) => ({ agent })) as Rule[];
const decideWith = (busy: Record<string, string>) => (taken: Record<string, string>) => decide(at, 'UTC', rules, {}, {}, {}, {}, { ...busy, ...taken });

test('the first free slots start, in dispatch order; the rest wait at capacity', () => {
  const p = tickPlan(decideWith({}), 3, { limit: 3 });
  assert.deepEqual(p.start.map((s) => s.agent), ['a', 'b', 'c']);
  assert.deepEqual(p.wait.map((w) => [w.agent, w.why]), [['d', 'at capacity: sessions.max_concurrent 3'], ['e', 'at capacity: sessions.max_concurrent 3']]);
});

test('an agent running now is neither started nor waiting; no slot free: every due agent waits', () => {
  const p = tickPlan(decideWith({ b: 'b is running' }), 0, { limit: 2 });
  assert.deepEqual(p.start, []);
  assert.deepEqual(p.wait.map((w) => w.agent), ['a', 'c', 'd', 'e']);
});

test('agents sharing a vault where sessions take turns: the second waits for the first', () => {
  const p = tickPlan(decideWith({}), 5, { limit: 5, turnsWith: (agent, started) => (agent === 'c' && started.includes('a') ? 'a' : null) });
  assert.deepEqual(p.start.map((s) => s.agent), ['a', 'b', 'd', 'e']);
  assert.equal(p.wait[0].agent, 'c');
  assert.match(p.wait[0].why, /shared with a/);
});
