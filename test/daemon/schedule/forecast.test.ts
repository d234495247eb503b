// What the ticks will really do (issue 29, point 6): the budget's cap, holds and an earlier
// always-due rule are in the answer of `next` and `status`, and the tick's own skip names the hold.
// Pure: plain data in, no ledger, no process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Hold } from '../../../budget/holds.js';
import { decide, type Rule } from '../../../daemon/schedule/dispatch.js';
import { forecast, hourlyTicks, type ForecastInput } from '../../../daemon/schedule/forecast.js';
import { parseElapses } from '../../../daemon/schedule/calendar.js';

const NOW = new Date('2026-12-01T15:20:00Z');
const H = 3_600_000;
// The default timer (OnCalendar=hourly): the first tick after 15:20 is 16:00.
const input = (o: Partial<ForecastInput> = {}): ForecastInput => ({
  now: NOW, ticks: hourlyTicks(NOW), timezone: 'UTC', rules: [{ agent: 'gardener' }], history: {}, limits: {}, holds: {}, broken: {},
  today: { sessions: 0, costUsd: 0, reservedUsd: 0, byAgent: {} },
  budget: { maxSessionsPerDay: 12, maxUsdPerDay: 10, maxUsdPerSession: 2, minSessionUsd: 0.05 },
  windows: [], windowLimit: 0.8, ...o,
});
const hold = (until: string): Hold => ({ kind: 'backoff', until, reason: 'backed off after 3 failures in a row (last: error)', failures: 3, session: 'S3' });

test('a due rule with the day\'s cap reached: nothing starts at the next tick, the agent runs when the next budget day begins', () => {
  const f = forecast(input({ today: { sessions: 12, costUsd: 1, reservedUsd: 0, byAgent: { gardener: { sessions: 12, costUsd: 1 } } } }));
  assert.equal(f.tickAt?.toISOString(), '2026-12-01T16:00:00.000Z');
  assert.equal(f.tick.agent, 'gardener');
  assert.equal(f.tick.starts, false);
  assert.match(f.tick.reason, /^rule 0 \(gardener\) is due, but nothing starts: budget\.max_sessions_per_day reached: 12 of 12 sessions today$/);
  assert.equal(f.agents.gardener?.toISOString(), '2026-12-02T00:00:00.000Z');
  // Negative control: below the cap it starts at the next tick.
  const free = forecast(input());
  assert.equal(free.tick.starts, true);
  assert.equal(free.agents.gardener?.toISOString(), '2026-12-01T16:00:00.000Z');
});

test('the money cap too', () => {
  const f = forecast(input({ today: { sessions: 2, costUsd: 10, reservedUsd: 0, byAgent: {} } }));
  assert.equal(f.tick.starts, false);
  assert.match(f.tick.reason, /budget\.max_usd_per_day reached/);
  assert.equal(f.agents.gardener?.toISOString(), '2026-12-02T00:00:00.000Z');
});

test('a held agent runs at the first tick after its hold ends, not before; the tick\'s skip names the hold and its end', () => {
  const holds = { gardener: hold('2026-12-01T19:16:00Z') };
  const f = forecast(input({ holds }));
  assert.equal(f.tick.starts, false);
  assert.equal(f.tick.agent, null);
  assert.equal(f.tick.reason, 'no rule is due: rule 0 (gardener) is held until 2026-12-01T19:16:00Z: backed off after 3 failures in a row (last: error)');
  // The hold ends at 19:16; the timer's next tick is 20:00 (no tick comes at the hold's end).
  assert.equal(f.agents.gardener?.toISOString(), '2026-12-01T20:00:00.000Z');
  // The tick's own decision says the same (it is decide's reason).
  assert.match(decide(NOW, 'UTC', [{ agent: 'gardener' }], {}, {}, holds).reason, /held until 2026-12-01T19:16:00Z/);
  // Negative control: a rule not due for its own terms says only that.
  assert.equal(decide(NOW, 'UTC', [{ agent: 'gardener', hours: [3] }], {}, {}, holds).reason, 'no rule is due');
});

test('a rule an earlier always-due rule shadows never runs, and says why', () => {
  const rules: Rule[] = [{ agent: 'researcher' }, { agent: 'gardener', hours: [18] }];
  const f = forecast(input({ rules }));
  assert.equal(f.agents.researcher?.toISOString(), '2026-12-01T16:00:00.000Z');
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
  assert.equal(f.agents.content?.toISOString(), '2026-12-01T16:00:00.000Z');
  // content took the tick at 16:00; the next tick (17:00) is maintenance's.
  assert.equal(f.agents.maintenance?.toISOString(), '2026-12-01T17:00:00.000Z');
});

test('a usage window past its share holds every start until it resets', () => {
  const windows = [{ name: '5h', utilization: 0.9, resets_at: '2026-12-01T17:30:00Z', seen_at: NOW.toISOString() }];
  const f = forecast(input({ windows }));
  assert.equal(f.tick.starts, false);
  assert.match(f.tick.reason, /but nothing starts: budget\.max_window_utilization/);
  // The window resets at 17:30: the tick at 18:00 starts it.
  assert.equal(f.agents.gardener?.toISOString(), '2026-12-01T18:00:00.000Z');
});

// A timer at 07:00 and 19:00 only (OnCalendar=*-*-* 07,19:00:00), as systemd-analyze lists it.
const twiceDaily = (from: Date) => Array.from({ length: 18 }, (_, k) => new Date(Date.parse('2026-12-01T07:00:00Z') + Math.floor(k / 2) * 24 * H + (k % 2) * 12 * H)).filter((t) => t >= from);

test('the ticks are the timer\'s: at 07:00 and 19:00 only, an agent due at hour 6 never runs and one due 8-20 runs at 19:00', () => {
  const rules: Rule[] = [{ agent: 'early', hours: [6] }, { agent: 'day', hours: [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20] }];
  const f = forecast(input({ rules, ticks: twiceDaily(NOW) }));
  assert.equal(f.tickAt?.toISOString(), '2026-12-01T19:00:00.000Z');
  assert.equal(f.agents.early, null);
  assert.equal(f.why.early, 'no tick falls in its hours: the timer fires at hours 7,19 on its days (UTC)');
  assert.equal(f.agents.day?.toISOString(), '2026-12-01T19:00:00.000Z');
  assert.equal(f.tick.agent, 'day');
  // Negative control: the same rules under hourly ticks, as the forecast once assumed for every timer.
  const hourly = forecast(input({ rules }));
  assert.equal(hourly.agents.early?.toISOString(), '2026-12-02T06:00:00.000Z');
  assert.equal(hourly.agents.day?.toISOString(), '2026-12-01T16:00:00.000Z');
  assert.equal(hourly.why.early, undefined);
});

test('a min_interval that ends between two ticks waits for the tick after', () => {
  const last = new Date('2026-12-01T07:00:00Z');
  const rules: Rule[] = [{ agent: 'day', min_interval: 13 * H }];
  const f = forecast(input({ rules, ticks: twiceDaily(NOW), history: { day: { today: 1, lastStartedAt: last } } }));
  // 07:00 + 13h is 20:00: the 19:00 tick is too early, the next is 07:00 tomorrow.
  assert.equal(f.tick.starts, false);
  assert.equal(f.agents.day?.toISOString(), '2026-12-02T07:00:00.000Z');
});

test('a timer that fires no tick within 8 days: nothing starts, and it says so', () => {
  const f = forecast(input({ ticks: [new Date('2027-06-01T00:00:00Z')] }));
  assert.equal(f.tickAt, null);
  assert.equal(f.tick.starts, false);
  assert.equal(f.tick.reason, 'the timer fires no tick within 8 days');
  assert.equal(f.agents.gardener, null);
});

test('systemd-analyze\'s elapses are read in UTC, from its "(in UTC)" lines away from UTC', () => {
  const berlin = [
    'Normalized form: *-*-* 07,19:00:00',
    '    Next elapse: Wed 2026-12-02 07:00:00 CET',
    '       (in UTC): Wed 2026-12-02 06:00:00 UTC',
    '       From now: 4h 40min left',
    '       Iter. #2: Wed 2026-12-02 19:00:00 CET',
    '       (in UTC): Wed 2026-12-02 18:00:00 UTC',
  ].join('\n');
  assert.deepEqual(parseElapses(berlin).map((d) => d.toISOString()), ['2026-12-02T06:00:00.000Z', '2026-12-02T18:00:00.000Z']);
  const utc = '    Next elapse: Wed 2026-12-02 07:00:00 UTC\n       From now: 4h left\n       Iter. #2: Wed 2026-12-02 19:00:00 UTC';
  assert.deepEqual(parseElapses(utc).map((d) => d.toISOString()), ['2026-12-02T07:00:00.000Z', '2026-12-02T19:00:00.000Z']);
});

// Control: without `waits` (the forecast's old shape) an agent that runs later says only when.
test('an agent that runs later says why not sooner: its max_runs_per_day used up (a failed run counts), a hold, the day\'s cap; its own hours are no reason', () => {
  const used = forecast(input({ rules: [{ agent: 'gardener', max_runs_per_day: 1 }], history: { gardener: { today: 1, lastStartedAt: new Date('2026-12-01T09:00:00Z') } } }));
  assert.equal(used.agents.gardener?.toISOString(), '2026-12-02T00:00:00.000Z');
  assert.equal(used.waits.gardener, 'ran 1 of max_runs_per_day 1 today (every session started counts, a failed one too)');
  // The agent file's own max_runs_per_day, the same.
  const own = forecast(input({ limits: { gardener: { maxRunsPerDay: 1 } }, history: { gardener: { today: 1, lastStartedAt: null } } }));
  assert.match(own.waits.gardener, /^ran 1 of max_runs_per_day 1 today/);
  assert.match(forecast(input({ holds: { gardener: hold('2026-12-01T19:16:00Z') } })).waits.gardener, /^held until 2026-12-01T19:16:00Z: backed off/);
  assert.match(forecast(input({ today: { sessions: 12, costUsd: 1, reservedUsd: 0, byAgent: {} } })).waits.gardener, /^budget\.max_sessions_per_day reached: 12 of 12/);
  // Not before its hours, by its own rule: no reason to give; and one that runs at the next tick has none.
  const later = forecast(input({ rules: [{ agent: 'gardener', hours: [18] }] }));
  assert.equal(later.agents.gardener?.toISOString(), '2026-12-01T18:00:00.000Z');
  assert.deepEqual(later.waits, {});
  assert.deepEqual(forecast(input()).waits, {});
});
