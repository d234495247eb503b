// Sessions that start at once on one host (sessions.max_concurrent, a run by hand beside a tick)
// cannot together pass a daily limit: each charge decides from the day's totals inside the
// transaction that writes it (budget/ledger.ts `open`, budget/policy.ts `chargeFor`).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Ledger } from '../../budget/ledger.js';
import { racer, ROOT, tempDir } from '../helpers.js';

const RACERS = 8;

async function race(t: Parameters<typeof tempDir>[0], how: 'inside' | 'apart'): Promise<{ started: number; reserved: number; refused: string[] }> {
  const dir = tempDir(t);
  const file = path.join(dir, 'ledger.db');
  Ledger.open(file).close();
  const barrier = path.join(dir, 'barrier');
  fs.mkdirSync(barrier);
  const runs = Array.from({ length: RACERS }, (_, n) => racer('charge-racer.mjs', [file, String(n), how, barrier, String(RACERS), path.join(ROOT, 'dist')], n));
  const results = await Promise.all(runs);
  const ledger = Ledger.open(file);
  const today = ledger.dayTotals('2026-12-07');
  ledger.close();
  return { started: today.sessions, reserved: today.reservedUsd, refused: results.filter((r) => r.ok === false).map((r) => String(r.limit)) };
}

test('eight supervisors charging at once start no more sessions than max_sessions_per_day and reserve no more than the day\'s cap', async (t) => {
  const r = await race(t, 'inside');
  assert.equal(r.started, 3);
  assert.ok(r.reserved <= 1 + 1e-9, `reserved ${r.reserved}`);
  assert.deepEqual(r.refused, Array(RACERS - 3).fill('max_sessions_per_day'));
});

test('the control: the limits read before the charge and written apart let all eight start', async (t) => {
  const r = await race(t, 'apart');
  assert.equal(r.started, RACERS);
  assert.ok(r.reserved > 1, `reserved ${r.reserved}: the day's cap passed`);
});
