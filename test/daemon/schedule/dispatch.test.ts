import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decide, localTime, withFleetHistory, type AgentHistory, type Rule } from '../../../daemon/schedule/dispatch.js';
import { parseDays, parseHours } from '../../../config/schedule-spec.js';

const rules = (): Rule[] => [
  { agent: 'strategist', days: parseDays(['mon']) as number[], hours: parseHours([10]) as number[] },
  { agent: 'trader', days: parseDays('mon-fri') as number[], hours: parseHours('14-21') as number[], min_interval: 3 * 3_600_000 },
  { agent: 'content', max_runs_per_day: 1 },
  { agent: 'maintenance' },
];
const none: Record<string, AgentHistory> = {};
const limits = {};
const at = (iso: string) => new Date(iso);

// [name, now, timezone, history, expected agent, expected reason fragment for a rule before it]
const CASES: Array<[string, string, string, Record<string, AgentHistory>, string | null, RegExp | null]> = [
  ['monday 10:00 UTC: the strategist', '2026-11-30T10:05:00Z', 'UTC', none, 'strategist', null],
  ['monday 11:00: not the strategist\'s hour, the trader is not in hours yet', '2026-11-30T11:00:00Z', 'UTC', none, 'content', /not at hour 11 \(hours: 14,15,16,17,18,19,20,21\)/],
  ['tuesday 15:00: the trader', '2026-12-01T15:00:00Z', 'UTC', none, 'trader', /not on tue \(days: mon\)/],
  ['the trader ran 1h ago: min_interval holds it back', '2026-12-01T15:00:00Z', 'UTC', { trader: { today: 1, lastStartedAt: at('2026-12-01T14:00:00Z') } }, 'content', /last session began 60m ago \(min_interval 180m\)/],
  ['the trader ran 3h ago: due again', '2026-12-01T17:00:00Z', 'UTC', { trader: { today: 1, lastStartedAt: at('2026-12-01T14:00:00Z') } }, 'trader', null],
  ['saturday: no trader; content already ran: maintenance', '2026-12-05T15:00:00Z', 'UTC', { content: { today: 1, lastStartedAt: at('2026-12-05T01:00:00Z') } }, 'maintenance', /ran 1 of max_runs_per_day 1 today \(every session started counts, a failed one too\)/],
  // Europe/Berlin is UTC+1 in winter: 09:30 UTC on Monday is 10:30 there.
  ['a non-UTC zone: 09:30 UTC is 10:30 in Berlin', '2026-11-30T09:30:00Z', 'Europe/Berlin', none, 'strategist', null],
  // 23:30 UTC Sunday is already Monday 00:30 in Berlin: the day boundary follows the zone.
  ['day boundary: Sunday 23:30 UTC is Monday in Berlin', '2026-11-29T23:30:00Z', 'Europe/Berlin', none, 'content', /not at hour 0/],
  ['day boundary: Monday 00:30 in Los Angeles is still Sunday there', '2026-11-30T07:30:00Z', 'America/Los_Angeles', none, 'content', /not on sun/],
  // DST: Europe/Berlin springs forward on 2026-03-29 at 01:00 UTC (02:00 -> 03:00 local).
  ['DST spring forward: 00:59 UTC is 01:59 CET', '2026-03-29T00:59:00Z', 'Europe/Berlin', none, 'content', /not on sun/],
  ['DST spring forward: 01:00 UTC is 03:00 CEST', '2026-03-29T01:00:00Z', 'Europe/Berlin', none, 'content', /not on sun/],
];

describe('dispatch', () => {
  for (const [name, now, tz, history, agent, why] of CASES) {
    test(name, () => {
      const d = decide(at(now), tz, rules(), history, limits);
      assert.equal(d.agent, agent, JSON.stringify(d));
      if (agent) assert.equal(d.rules.at(-1)?.matched, true);
      if (why) assert.ok(d.rules.some((r) => !r.matched && why.test(r.why)), JSON.stringify(d.rules));
    });
  }

  test('the local hour follows DST: 2 local never happens on spring-forward day, happens twice on fall-back day', () => {
    const hours = (from: string, n: number) => Array.from({ length: n }, (_, i) => localTime(new Date(Date.parse(from) + i * 3_600_000), 'Europe/Berlin').hour);
    assert.deepEqual(hours('2026-03-28T23:00:00Z', 4), [0, 1, 3, 4]);
    assert.deepEqual(hours('2026-10-24T23:00:00Z', 5), [1, 2, 2, 3, 4]);
  });

  test('on fall-back day an hour-2 rule limited to one run a day runs once', () => {
    const r: Rule[] = [{ agent: 'night', hours: [2], max_runs_per_day: 1 }];
    const first = decide(at('2026-10-25T00:30:00Z'), 'Europe/Berlin', r, none, limits);
    assert.equal(first.agent, 'night');
    const second = decide(at('2026-10-25T01:30:00Z'), 'Europe/Berlin', r, { night: { today: 1, lastStartedAt: at('2026-10-25T00:30:00Z') } }, limits);
    assert.equal(localTime(at('2026-10-25T01:30:00Z'), 'Europe/Berlin').hour, 2);
    assert.equal(second.agent, null);
  });

  test('an agent\'s own max_runs_per_day applies when the rule sets none', () => {
    const d = decide(at('2026-12-01T15:00:00Z'), 'UTC', [{ agent: 'x' }], { x: { today: 2, lastStartedAt: null } }, { x: { maxRunsPerDay: 2 } });
    assert.equal(d.agent, null);
    assert.match(d.rules[0].why, /ran 2 of max_runs_per_day 2 today/);
  });

  test('a held agent is skipped with the hold as its reason, and the next rule runs', () => {
    const hold = { kind: 'backoff' as const, until: '2026-12-01T16:00:00Z', reason: 'backed off after 3 failures in a row (last: error)', failures: 3, session: 's1' };
    const r: Rule[] = [{ agent: 'x' }, { agent: 'y' }];
    const d = decide(at('2026-12-01T15:00:00Z'), 'UTC', r, none, limits, { x: hold });
    assert.equal(d.agent, 'y');
    assert.equal(d.rules[0].why, 'held until 2026-12-01T16:00:00Z: backed off after 3 failures in a row (last: error)');
    // Negative control: without the hold, x runs.
    assert.equal(decide(at('2026-12-01T15:00:00Z'), 'UTC', r, none, limits, {}).agent, 'x');
  });

  test('no rules: skip with a reason', () => {
    assert.deepEqual(decide(at('2026-12-01T15:00:00Z'), 'UTC', [], none, limits), { agent: null, rule: null, reason: 'no dispatch rules configured', rules: [] });
  });

  test('day and hour specs: names, ranges, wrap-around, and clear errors', () => {
    assert.deepEqual(parseDays('mon-fri'), [1, 2, 3, 4, 5]);
    assert.deepEqual(parseDays('fri-mon'), [0, 1, 5, 6]);
    assert.deepEqual(parseDays(['sun', 'Wednesday']), [0, 3]);
    assert.deepEqual(parseHours(['9', '14-16']), [9, 14, 15, 16]);
    assert.match(parseHours(25) as string, /Expected hours as numbers 0-23/);
    assert.match(parseHours('21-14') as string, /not rising/);
    assert.match(parseDays('funday') as string, /Expected days as names/);
  });

  test('a day list as a string means every day in it; unknown names are refused with the valid ones', () => {
    assert.deepEqual(parseDays('mon,tue'), [1, 2]);
    assert.deepEqual(parseDays('mon, wed-fri'), [1, 3, 4, 5]);
    assert.deepEqual(parseDays(['sat', 'sun,mon']), [0, 1, 6]);
    assert.deepEqual(parseHours('9,14-16'), [9, 14, 15, 16]);
    // `monkey` began with `mon` and was once taken as Monday.
    assert.match(parseDays(['monkey']) as string, /Expected days as names \(sun, mon, tue, wed, thu, fri, sat.*got `monkey`/);
    assert.match(parseDays('mond') as string, /got `mond`/);
    assert.match(parseDays([]) as string, /empty list/);
  });

  test('day numbers are 0-6 with 0 = sun, the range the message offers', () => {
    assert.deepEqual(parseDays([1]), [1]);
    assert.deepEqual(parseDays([0, 6]), [0, 6]);
    assert.deepEqual(parseDays('1-5'), [1, 2, 3, 4, 5]);
    assert.match(parseDays([7]) as string, /numbers 0-6 \(0 = sun\).*got `7`/);
    assert.match(parseHours([24]) as string, /got `24`/);
    assert.deepEqual(parseHours([0, 23]), [0, 23]);
  });
});

test('a fleet\'s history beside the host\'s own: the larger count today and the later start, per agent; an agent only one side knows is kept', () => {
  const at = (h: number) => new Date(Date.UTC(2026, 11, 7, h));
  const own = { gardener: { today: 1, lastStartedAt: at(3) }, scribe: { today: 2, lastStartedAt: at(1) } };
  const fleet = { gardener: { today: 3, lastStartedAt: at(5) }, scribe: { today: 1, lastStartedAt: null }, weeder: { today: 1, lastStartedAt: at(2) } };
  assert.deepEqual(withFleetHistory(own, fleet), {
    gardener: { today: 3, lastStartedAt: at(5) },
    scribe: { today: 2, lastStartedAt: at(1) },
    weeder: { today: 1, lastStartedAt: at(2) },
  });
  assert.deepEqual(withFleetHistory(own, {}), own);
});
