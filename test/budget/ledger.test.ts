import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { dayOf } from '../../budget/day.js';
import { Ledger, type OpenSession } from '../../budget/ledger.js';
import { canStart, type DayTotals } from '../../budget/policy.js';
import { InternalError } from '../../daemon/errors.js';
import { tempDir } from '../helpers.js';

const open = (id: string, agent = 'a', day = '2026-11-30', pid = 1): OpenSession => ({
  id, agent, day, started_at: `${day}T10:00:00.000Z`, transcript: null, model: 'sonnet', supervisor_pid: pid, supervisor_start: 'x',
});
const settlement = (cost: number, outcome = 'ok') => ({
  outcome, ended_at: '2026-11-30T10:01:00.000Z', duration_ms: 60_000, cost_usd: cost, cost_estimated: false, turns: 3,
  exit_code: outcome === 'ok' ? 0 : 1, result: 'done', error: null, input_tokens: 10, output_tokens: 5,
});

describe('ledger', () => {
  test('a session counts from the moment it is opened, and its cost when settled', (t) => {
    const l = Ledger.open(path.join(tempDir(t), 'l.db'));
    l.open(open('s1'));
    assert.equal(l.dayTotals('2026-11-30').sessions, 1);
    l.progress('s1', 0.5, 2);
    assert.equal(l.dayTotals('2026-11-30').costUsd, 0.5);
    l.settle(open('s1'), settlement(0.75));
    l.open(open('s2', 'b'));
    const d = l.dayTotals('2026-11-30');
    assert.equal(d.sessions, 2);
    assert.equal(d.costUsd, 0.75);
    assert.deepEqual(d.byAgent.b, { sessions: 1, costUsd: 0 });
    assert.equal(l.get('s1')?.status, 'settled');
    assert.equal(l.dayTotals('2026-12-01').sessions, 0);
    l.close();
  });

  test('sessions of a dead supervisor are abandoned, keeping their recorded spend; live ones are left alone', (t) => {
    const l = Ledger.open(path.join(tempDir(t), 'l.db'));
    l.open(open('dead', 'a', '2026-11-30', 111));
    l.progress('dead', 0.2, 1);
    l.open(open('live', 'a', '2026-11-30', 222));
    const orphans = l.orphans((pid) => pid === 222);
    assert.deepEqual(orphans.map((r) => r.id), ['dead']);
    l.abandon(orphans[0], new Date('2026-11-30T10:05:00Z'));
    const row = l.get('dead')!;
    assert.equal(row.outcome, 'abandoned');
    assert.equal(row.cost_usd, 0.2);
    assert.equal(row.cost_estimated, 1);
    assert.equal(row.duration_ms, 300_000);
    assert.equal(l.get('live')?.status, 'running');
    assert.equal(l.dayTotals('2026-11-30').sessions, 2);
    l.close();
  });

  test('charging at settle (the negative control) does not count an open session', (t) => {
    const l = Ledger.open(path.join(tempDir(t), 'l.db'), { chargeOn: 'settle' });
    l.open(open('s1'));
    assert.equal(l.dayTotals('2026-11-30').sessions, 0);
    l.settle(open('s1'), settlement(0.1));
    assert.equal(l.dayTotals('2026-11-30').sessions, 1);
    l.close();
  });

  test('a corrupt file is a clear error that names it', (t) => {
    const file = path.join(tempDir(t), 'l.db');
    fs.writeFileSync(file, 'this is not a database, just garbage bytes '.repeat(200));
    assert.throws(() => Ledger.open(file), (err: unknown) => err instanceof InternalError && err.message.includes(file) && /move it aside/.test(err.message));
    assert.match(fs.readFileSync(file, 'utf8'), /^this is not a database/, 'the file is left as it was');
  });

  test('two handles on one file see each other\'s writes (WAL, busy timeout)', (t) => {
    const file = path.join(tempDir(t), 'l.db');
    const a = Ledger.open(file);
    const b = Ledger.open(file);
    for (let i = 0; i < 50; i++) (i % 2 ? a : b).open(open(`s${i}`));
    assert.equal(a.dayTotals('2026-11-30').sessions, 50);
    assert.equal(a.integrity(), 'ok');
    a.close();
    b.close();
  });
});

describe('budget policy', () => {
  const limits = { maxSessionsPerDay: 3, maxUsdPerDay: 10, maxRunsPerDay: 1 };
  const day = (sessions: number, costUsd: number, mine = 0): DayTotals => ({ sessions, costUsd, byAgent: mine ? { me: { sessions: mine, costUsd: 0 } } : {} });
  for (const [name, today, expected] of [
    ['under every limit', day(0, 0), null],
    ['the session count reached', day(3, 0), 'max_sessions_per_day'],
    ['the day\'s USD reached', day(1, 10), 'max_usd_per_day'],
    ['the agent\'s runs reached', day(1, 1, 1), 'max_runs_per_day'],
  ] as const) {
    test(`${name}: ${expected ?? 'ok'}`, () => {
      const v = canStart('me', today, limits);
      assert.equal(v.ok ? null : v.limit, expected);
    });
  }
  test('no per-agent limit means only the day\'s limits apply', () => {
    assert.equal(canStart('me', day(1, 1, 5), { ...limits, maxRunsPerDay: null }).ok, true);
  });
});

describe('day', () => {
  test('a day is the calendar date in the configured time zone', () => {
    const at = new Date('2026-11-30T23:30:00Z');
    assert.equal(dayOf(at, 'UTC'), '2026-11-30');
    assert.equal(dayOf(at, 'Europe/Berlin'), '2026-12-01');
    assert.equal(dayOf(at, 'America/Los_Angeles'), '2026-11-30');
  });
});
