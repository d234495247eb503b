import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { dayOf } from '../../config/day.js';
import { Ledger, type OpenSession } from '../../budget/ledger.js';
import { canStart, type DayTotals } from '../../budget/policy.js';
import { reservationFor } from '../../budget/reservation.js';
import { InternalError } from '../../core/errors.js';
import { FIXTURES, tempDir } from '../helpers.js';

const open = (id: string, agent = 'a', day = '2026-11-30', pid = 1): OpenSession => ({
  id, agent, day, started_at: `${day}T10:00:00.000Z`, transcript: null, model: 'sonnet', supervisor_pid: pid, supervisor_start: 'x',
});
const settlement = (cost: number, outcome = 'ok') => ({
  outcome, ended_at: '2026-11-30T10:01:00.000Z', duration_ms: 60_000, cost_usd: cost, cost_estimated: false, turns: 3,
  exit_code: outcome === 'ok' ? 0 : 1, result: 'done', error: null, input_tokens: 10, output_tokens: 5,
});

// Another process holding the ledger's write lock (test/fixtures/hold-ledger-write.mjs, which
// inserts row `id` and commits after `holdMs`). Resolves once it says it holds the lock;
// `committed()` then waits for it to commit and exit 0.
async function holdWriteLock(t: TestContext, file: string, holdMs: number, id: string): Promise<{ committed: () => Promise<void> }> {
  const child = spawn(process.execPath, [path.join(FIXTURES, 'hold-ledger-write.mjs'), file, String(holdMs), id], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('held\n')) resolve();
    });
    child.on('error', reject);
    void exited.then((code) => reject(new Error(`Expected the lock holder to print "held", it exited ${code}: ${err}`)));
  });
  return {
    committed: async () => {
      assert.equal(await exited, 0, err);
      assert.match(out, /committed/);
    },
  };
}

// One write on a handle that does not wait at all (better-sqlite3 alone would wait 5 s).
function writeWithoutWaiting(file: string, id: string): void {
  const db = new Database(file, { timeout: 0 });
  try {
    assert.equal(db.pragma('busy_timeout', { simple: true }), 0);
    db.prepare(`INSERT INTO sessions (id, agent, day, status, started_at) VALUES (?, 'bare', '2026-11-30', 'running', '2026-11-30T11:00:00.000Z')`).run(id);
  } finally {
    db.close();
  }
}

const isBusy = (err: unknown) => (err as { code?: string }).code === 'SQLITE_BUSY';

describe('ledger', () => {
  test('a session counts from the moment it is opened, and its cost when settled', (t) => {
    const l = Ledger.open(path.join(tempDir(t), 'l.db'));
    l.open(open('s1'));
    assert.equal(l.dayTotals('2026-11-30').sessions, 1);
    l.meter('s1', { spentUsd: 0.5, pendingUsd: 0, calls: 1, worstCaseCalls: 0 });
    l.progress('s1', 2);
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
    l.meter('dead', { spentUsd: 0.2, pendingUsd: 0, calls: 1, worstCaseCalls: 0 });
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

  test('the charge is durable: the ledger commits with synchronous=FULL', (t) => {
    const l = Ledger.open(path.join(tempDir(t), 'l.db'));
    t.after(() => l.close());
    assert.equal(l.synchronous(), 1, 'progress and settle: NORMAL');
    l.open(open('durable'));
    assert.equal(l.chargedWith, 2, 'the charge: FULL');
    assert.equal(l.synchronous(), 1, 'and back to NORMAL after it');
  });

  test('a corrupt file is a clear error that names it', (t) => {
    const file = path.join(tempDir(t), 'l.db');
    fs.writeFileSync(file, 'this is not a database, just garbage bytes '.repeat(200));
    assert.throws(() => Ledger.open(file), (err: unknown) => err instanceof InternalError && err.message.includes(file) && /move it aside/.test(err.message));
    assert.match(fs.readFileSync(file, 'utf8'), /^this is not a database/, 'the file is left as it was');
  });

  test('opening a session waits out another process\'s write lock instead of failing (busy timeout)', async (t) => {
    const file = path.join(tempDir(t), 'l.db');
    const l = Ledger.open(file);
    t.after(() => l.close());
    const holder = await holdWriteLock(t, file, 1000, 'other');
    // The lock is held right now: a handle that does not wait fails.
    assert.throws(() => writeWithoutWaiting(file, 'probe'), isBusy);
    l.open(open('s1'));
    await holder.committed();
    assert.equal(l.get('other')?.agent, 'holder', 'the other process committed its row');
    assert.equal(l.get('s1')?.status, 'running');
    assert.equal(l.dayTotals('2026-11-30').sessions, 2);
  });

  // A deferred transaction that reads first fails at once with SQLITE_BUSY in WAL mode (the busy
  // handler does not apply once it has read); settle's transaction is IMMEDIATE for this reason.
  test('settling a session waits out another process\'s write lock instead of failing (busy timeout)', async (t) => {
    const file = path.join(tempDir(t), 'l.db');
    const l = Ledger.open(file);
    t.after(() => l.close());
    l.open(open('s1'));
    const holder = await holdWriteLock(t, file, 1000, 'other');
    assert.throws(() => writeWithoutWaiting(file, 'probe'), isBusy);
    l.settle(open('s1'), settlement(0.75));
    await holder.committed();
    assert.equal(l.get('s1')?.status, 'settled');
    assert.equal(l.get('s1')?.cost_usd, 0.75);
    assert.equal(l.get('other')?.agent, 'holder');
  });

  test('without a busy timeout the same write fails at once with SQLITE_BUSY (the negative control)', async (t) => {
    const file = path.join(tempDir(t), 'l.db');
    Ledger.open(file).close();
    const holder = await holdWriteLock(t, file, 1000, 'other');
    assert.throws(() => writeWithoutWaiting(file, 'bare'), isBusy);
    await holder.committed();
    writeWithoutWaiting(file, 'bare');
    const l = Ledger.open(file);
    t.after(() => l.close());
    assert.deepEqual([l.get('other')?.agent, l.get('bare')?.agent], ['holder', 'bare']);
  });

  test('two handles on one file see each other\'s writes (WAL)', (t) => {
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

describe('ledger reservations and the meter', () => {
  const limits = { maxUsdPerDay: 1, maxUsdPerSession: 0.4, minSessionUsd: 0.1 };
  const reserve = (today: DayTotals) => reservationFor(today, limits);
  test('the charge reserves from what is left in the same transaction; a day without room writes nothing', (t) => {
    const l = Ledger.open(path.join(tempDir(t), 'l.db'));
    t.after(() => l.close());
    assert.deepEqual(l.open(open('s1'), reserve), { ok: true, usd: 0.4 });
    assert.deepEqual(l.open(open('s2'), reserve), { ok: true, usd: 0.4 });
    assert.deepEqual(l.open(open('s3'), reserve), { ok: true, usd: 0.2 });
    const r = l.open(open('s4'), reserve);
    assert.equal(r?.ok, false);
    assert.equal(l.get('s4'), null);
    const d = l.dayTotals('2026-11-30');
    assert.deepEqual([d.sessions, d.costUsd, Math.round(d.reservedUsd * 1e6) / 1e6], [3, 0, 1]);
    // Spend and the worst case in flight move from reserved to spent; the sum stays the reservation.
    l.meter('s1', { spentUsd: 0.1, pendingUsd: 0.05, calls: 1, worstCaseCalls: 0 });
    const e = l.dayTotals('2026-11-30');
    assert.deepEqual([Math.round(e.costUsd * 1e6) / 1e6, Math.round(e.reservedUsd * 1e6) / 1e6], [0.15, 0.85]);
    // Settled, only the cost counts: the rest of its reservation is free again.
    l.settle(open('s1'), { ...settlement(0.12), cli_cost_usd: 0.01, metered_calls: 2 });
    const f = l.dayTotals('2026-11-30');
    assert.deepEqual([Math.round(f.costUsd * 1e6) / 1e6, Math.round(f.reservedUsd * 1e6) / 1e6], [0.12, 0.6]);
    assert.equal(l.get('s1')?.cli_cost_usd, 0.01);
    assert.equal(l.get('s1')?.reserved_usd, 0.4);
  });
  test('an abandoned session counts its metered spend and the call in flight, or its whole reservation when the meter kept no record', (t) => {
    const l = Ledger.open(path.join(tempDir(t), 'l.db'));
    t.after(() => l.close());
    l.open(open('metered', 'a', '2026-11-30', 111), reserve);
    l.meter('metered', { spentUsd: 0.1, pendingUsd: 0.07, calls: 3, worstCaseCalls: 0 });
    l.open(open('unmetered', 'a', '2026-11-30', 111), reserve);
    for (const row of l.orphans(() => false)) l.abandon(row, new Date('2026-11-30T10:05:00Z'));
    assert.equal(Math.round(l.get('metered')!.cost_usd * 1e6) / 1e6, 0.17);
    assert.equal(l.get('unmetered')!.cost_usd, 0.4);
    assert.equal(Math.round(l.dayTotals('2026-11-30').costUsd * 1e6) / 1e6, 0.57);
  });
  test('a ledger from before the meter gains its columns; settled rows keep their CLI total beside it', (t) => {
    const file = path.join(tempDir(t), 'l.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, agent TEXT NOT NULL, day TEXT NOT NULL, status TEXT NOT NULL, outcome TEXT, started_at TEXT NOT NULL,
      ended_at TEXT, duration_ms INTEGER, cost_usd REAL NOT NULL DEFAULT 0, cost_estimated INTEGER NOT NULL DEFAULT 0, turns INTEGER NOT NULL DEFAULT 0,
      exit_code INTEGER, result TEXT, error TEXT, transcript TEXT, model TEXT, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
      supervisor_pid INTEGER, supervisor_start TEXT, child_pid INTEGER, followed_up_at TEXT, memory TEXT, retry_at TEXT)`);
    db.exec(`INSERT INTO sessions (id, agent, day, status, outcome, started_at, cost_usd) VALUES ('old', 'a', '2026-11-30', 'settled', 'ok', '2026-11-30T10:00:00Z', 0.25)`);
    db.pragma('user_version = 4');
    db.close();
    const l = Ledger.open(file);
    t.after(() => l.close());
    const row = l.get('old')!;
    assert.deepEqual([row.cost_usd, row.cli_cost_usd, row.reserved_usd, row.metered_calls], [0.25, 0.25, null, null]);
    assert.equal(typeof row.cli_cost_usd, 'number', 'a REAL column, not TEXT');
    assert.equal(l.dayTotals('2026-11-30').costUsd, 0.25);
  });
});

describe('budget policy', () => {
  const limits = { maxSessionsPerDay: 3, maxUsdPerDay: 10, maxUsdPerSession: 5, minSessionUsd: 0.1, maxRunsPerDay: 1 };
  const day = (sessions: number, costUsd: number, mine = 0): DayTotals => ({ sessions, costUsd, reservedUsd: 0, byAgent: mine ? { me: { sessions: mine, costUsd: 0 } } : {} });
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
