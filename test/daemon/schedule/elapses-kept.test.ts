// systemd-analyze's list of a timer's elapses, kept in state_dir (daemon/schedule/elapses-kept.ts):
// a request inside the kept window is answered without asking systemd, and exactly as systemd
// answers it; outside the window, for another spec or another zone, systemd is asked again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { elapsesWithinAsync } from '../../../daemon/schedule/calendar.js';
import { elapsesKept, elapsesSource, ELAPSES_FILE, servedFrom, type KeptElapses } from '../../../daemon/schedule/elapses-kept.js';
import { HORIZON_MS } from '../../../daemon/schedule/forecast.js';
import { tempDir } from '../../helpers.js';

const HOUR = 3_600_000;
const at = (iso: string) => new Date(iso);
const times = (r: { ok: boolean | null; times?: Date[] }) => (r.ok === true ? r.times!.map((t) => t.toISOString()) : r);

test('servedFrom: inside the window the kept times from the start second on; outside it, another spec or source, nothing', () => {
  const kept: KeptElapses = { spec: 'hourly', source: 'S', from: Date.parse('2026-12-01T00:00:00Z'), until: Date.parse('2026-12-01T06:00:00Z'), times: [1, 2, 3, 4, 5].map((h) => Date.parse(`2026-12-01T0${h}:00:00Z`)) };
  // The instant itself included when it is an elapse (systemd counts from that second).
  assert.deepEqual(times(servedFrom(kept, 'hourly', 'S', at('2026-12-01T02:00:00Z'), 2 * HOUR)!), ['2026-12-01T02:00:00.000Z', '2026-12-01T03:00:00.000Z']);
  assert.deepEqual(times(servedFrom(kept, 'hourly', 'S', at('2026-12-01T02:00:00.400Z'), 2 * HOUR)!), ['2026-12-01T03:00:00.000Z', '2026-12-01T04:00:00.000Z']);
  assert.equal(servedFrom(kept, 'hourly', 'S', at('2026-12-01T02:00:00Z'), 5 * HOUR), null, 'beyond until');
  assert.equal(servedFrom({ ...kept, from: kept.from + HOUR }, 'hourly', 'S', at('2026-12-01T00:30:00Z'), HOUR), null, 'before from');
  assert.equal(servedFrom(kept, 'daily', 'S', at('2026-12-01T02:00:00Z'), HOUR), null);
  assert.equal(servedFrom(kept, 'hourly', 'other zone', at('2026-12-01T02:00:00Z'), HOUR), null);
  assert.equal(servedFrom(undefined, 'hourly', 'S', at('2026-12-01T02:00:00Z'), HOUR), null);
});

test('the source changes with the zone file and with systemd-analyze', () => {
  const real = elapsesSource('/usr/bin:/bin');
  assert.notEqual(elapsesSource('/usr/bin:/bin', (p) => ({ ...fs.statSync(p), mtimeMs: 1 }) as fs.Stats), real);
  // The zone data alone changed (a spec may name its own zone).
  assert.notEqual(elapsesSource('/usr/bin:/bin', (p) => (p.endsWith('tzdata.zi') ? ({ size: 1, mtimeMs: 1 } as fs.Stats) : fs.statSync(p))), real);
  assert.notEqual(elapsesSource('/nowhere'), real);
});

test('kept: the same answer as systemd-analyze, then from the list with no systemd-analyze on PATH; outside the window it asks again', async (t) => {
  const dir = tempDir(t);
  const spec = '*-*-* 06,18:00:00 UTC';
  const from = at('2026-12-01T07:00:00Z');
  const direct = await elapsesWithinAsync(spec, from, HORIZON_MS, process.env.PATH);
  assert.equal(direct.ok, true, 'systemd-analyze is installed (.ci/run)');
  assert.deepEqual(times(await elapsesKept(spec, from, HORIZON_MS, process.env.PATH, dir)), times(direct));
  const file = path.join(dir, ELAPSES_FILE);
  assert.ok(fs.existsSync(file));
  // The day after, and the day behind (where status looks for missed ticks), are answered from
  // the list: systemd-analyze is not to be found, yet the times are right.
  const noAnalyze = '/nowhere';
  const later = at('2026-12-02T05:00:00Z');
  const kept = await elapsesKept(spec, later, HORIZON_MS, process.env.PATH, dir);
  assert.deepEqual(times(kept), times(await elapsesWithinAsync(spec, later, HORIZON_MS, process.env.PATH)));
  // Controls: without the list the same PATH cannot say; with it (same source) it is used.
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  j[spec].source = elapsesSource(noAnalyze);
  fs.writeFileSync(file, JSON.stringify(j));
  assert.equal((await elapsesWithinAsync(spec, later, HORIZON_MS, noAnalyze)).ok, null);
  assert.deepEqual(times(await elapsesKept(spec, later, HORIZON_MS, noAnalyze, dir)), times(kept));
  assert.deepEqual(times(await elapsesKept(spec, at('2026-11-30T07:00:00Z'), HORIZON_MS, noAnalyze, dir)), times(await elapsesWithinAsync(spec, at('2026-11-30T07:00:00Z'), HORIZON_MS, process.env.PATH)));
  // Ten days on is past the window: asked again (and without systemd-analyze, it cannot say).
  assert.equal((await elapsesKept(spec, at('2026-12-11T07:00:00Z'), HORIZON_MS, noAnalyze, dir)).ok, null);
});

test('a spec systemd refuses is never kept; two specs of one timer keep both', async (t) => {
  const dir = tempDir(t);
  const from = at('2026-12-01T07:00:00Z');
  const bad = await elapsesKept('not a calendar', from, HORIZON_MS, process.env.PATH, dir);
  assert.equal(bad.ok, false);
  assert.equal(fs.existsSync(path.join(dir, ELAPSES_FILE)), false);
  await Promise.all(['hourly', '*-*-* 06:00:00 UTC'].map((s) => elapsesKept(s, from, HORIZON_MS, process.env.PATH, dir)));
  assert.deepEqual(Object.keys(JSON.parse(fs.readFileSync(path.join(dir, ELAPSES_FILE), 'utf8'))).sort(), ['*-*-* 06:00:00 UTC', 'hourly']);
});
