// What the ticks will really do (issue 29, point 6): the budget's cap, holds and an earlier
// always-due rule are in the answer of `next` and `status`, and the tick's own skip names the hold.
// Pure: plain data in, no ledger, no process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Hold } from '../../../budget/holds.js';
import { decide, type Rule } from '../../../daemon/schedule/dispatch.js';
import { forecast, type ForecastInput } from '../../../daemon/schedule/forecast.js';

const NOW = new Date('2026-12-01T15:20:00Z');
const H = 3_600_000;
const input = (o: Partial<ForecastInput> = {}): ForecastInput => ({
  now: NOW, timezone: 'UTC', rules: [{ agent: 'gardener' }], history: {}, limits: {}, holds: {}, broken: {},
  today: { sessions: 0, costUsd: 0, reservedUsd: 0, byAgent: {} },
  budget: { maxSessionsPerDay: 12, maxUsdPerDay: 10, maxUsdPerSession: 2, minSessionUsd: 0.05 },
  windows: [], windowLimit: 0.8, ...o,
});
const hold = (until: string): Hold => ({ kind: 'backoff', until, reason: 'backed off after 3 failures in a row (last: error)', failures: 3, session: 'S3' });

test('a due rule with the day\'s cap reached: nothing starts now, the agent runs when the next budget day begins', () => {
  const f = forecast(input({ today: { sessions: 12, costUsd: 1, reservedUsd: 0, byAgent: { gardener: { sessions: 12, costUsd: 1 } } } }));
  assert.equal(f.tick.agent, 'gardener');
  assert.equal(f.tick.starts, false);
  assert.match(f.tick.reason, /^rule 0 \(gardener\) is due, but nothing starts: budget\.max_sessions_per_day reached: 12 of 12 sessions today$/);
  assert.equal(f.agents.gardener?.toISOString(), '2026-12-02T00:00:00.000Z');
  // Negative control: below the cap it starts now.
  const free = forecast(input());
  assert.equal(free.tick.starts, true);
  assert.equal(free.agents.gardener?.getTime(), NOW.getTime());
});

test('the money cap too', () => {
  const f = forecast(input({ today: { sessions: 2, costUsd: 10, reservedUsd: 0, byAgent: {} } }));
  assert.equal(f.tick.starts, false);
  assert.match(f.tick.reason, /budget\.max_usd_per_day reached/);
  assert.equal(f.agents.gardener?.toISOString(), '2026-12-02T00:00:00.000Z');
});

test('a held agent runs when its hold ends, not now; the tick\'s skip names the hold and its end', () => {
  const holds = { gardener: hold('2026-12-01T19:16:00Z') };
  const f = forecast(input({ holds }));
  assert.equal(f.tick.starts, false);
  assert.equal(f.tick.agent, null);
  assert.equal(f.tick.reason, 'no rule is due: rule 0 (gardener) is held until 2026-12-01T19:16:00Z: backed off after 3 failures in a row (last: error)');
  assert.equal(f.agents.gardener?.toISOString(), '2026-12-01T19:16:00.000Z');
  // The tick's own decision says the same (it is decide's reason).
  assert.match(decide(NOW, 'UTC', [{ agent: 'gardener' }], {}, {}, holds).reason, /held until 2026-12-01T19:16:00Z/);
  // Negative control: a rule not due for its own terms says only that.
  assert.equal(decide(NOW, 'UTC', [{ agent: 'gardener', hours: [3] }], {}, {}, holds).reason, 'no rule is due');
});

test('a rule an earlier always-due rule shadows never runs, and says why', () => {
  const rules: Rule[] = [{ agent: 'researcher' }, { agent: 'gardener', hours: [18] }];
  const f = forecast(input({ rules }));
  assert.equal(f.agents.researcher?.getTime(), NOW.getTime());
  assert.equal(f.agents.gardener, null);
  assert.equal(f.why.gardener, 'shadowed: rule [0] researcher is due first at every tick');
  // Negative control: with a min_interval the first rule leaves ticks free, and gardener runs at 18:00.
  const spaced = forecast(input({ rules: [{ agent: 'researcher', min_interval: 4 * H }, { agent: 'gardener', hours: [18] }] }));
  assert.equal(spaced.agents.gardener?.toISOString(), '2026-12-01T18:00:00.000Z');
  assert.equal(spaced.why.gardener, undefined);
});

test('starts are counted: an agent with max_runs_per_day 1 after an always-due one gets the ticks it leaves', () => {
  const rules: Rule[] = [{ agent: 'content', max_runs_per_day: 1 }, { agent: 'maintenance' }];
  const f = forecast(input({ rules }));
  assert.equal(f.agents.content?.getTime(), NOW.getTime());
  // content took the tick at 15:20; the next tick (16:00) is maintenance's.
  assert.equal(f.agents.maintenance?.toISOString(), '2026-12-01T16:00:00.000Z');
});

test('a usage window past its share holds every start until it resets', () => {
  const windows = [{ name: '5h', utilization: 0.9, resets_at: '2026-12-01T17:30:00Z', seen_at: NOW.toISOString() }];
  const f = forecast(input({ windows }));
  assert.equal(f.tick.starts, false);
  assert.match(f.tick.reason, /but nothing starts: budget\.max_window_utilization/);
  assert.equal(f.agents.gardener?.toISOString(), '2026-12-01T17:30:00.000Z');
});
