// The timer's expected ticks against the fires (daemon/schedule/tick-gaps.ts): pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tickGaps } from '../../../daemon/schedule/tick-gaps.js';

const at = (hhmm: string) => new Date(`2026-12-01T${hhmm}:00Z`);
const hourly = ['00:00', '01:00', '02:00', '03:00', '04:00', '05:00', '06:00', '07:00', '08:00', '09:00'].map(at);
const fired = (hhmm: string, endHhmm: string | null = null) => ({ at: at(hhmm), ended_at: endHhmm ? at(endHhmm) : null });

test('expected ticks with none fired are reported, the silence since the last fire counted', () => {
  // The timer fired until 06:01 (randomized delay), then nothing at 07, 08 and 09.
  const fires = ['00:01', '01:02', '02:00', '03:01', '04:01', '05:00', '06:01'].map((t) => fired(t, t.replace(/:\d\d$/, ':03')));
  const g = tickGaps(hourly, fires, at('09:30'));
  assert.deepEqual(g.missed.map((d) => d.toISOString().slice(11, 16)), ['07:00', '08:00', '09:00']);
  assert.equal(g.since_last, 3);
  assert.deepEqual(g.last_fire, at('06:01'));
  assert.equal(g.expected, 10);
});

test('control: every expected tick fired: no gap', () => {
  const fires = hourly.map((t) => ({ at: new Date(t.getTime() + 90_000), ended_at: new Date(t.getTime() + 120_000) }));
  const g = tickGaps(hourly, fires, at('09:30'));
  assert.deepEqual(g.missed, []);
  assert.equal(g.since_last, 0);
});

test('no fire at all in the window: every expected tick is missed, and there is no last fire', () => {
  const g = tickGaps(hourly, [], at('09:30'));
  assert.equal(g.missed.length, 10);
  assert.equal(g.since_last, 10);
  assert.equal(g.last_fire, null);
});

test('a tick still within the timer\'s randomized delay is not yet expected', () => {
  const fires = ['00:01', '01:02', '02:00', '03:01', '04:01', '05:00', '06:01', '07:01', '08:02'].map((t) => fired(t, t));
  assert.deepEqual(tickGaps(hourly, fires, at('09:03')).missed, []);
  // Control: well past the delay, the 09:00 tick that left no fire is missed.
  assert.deepEqual(tickGaps(hourly, fires, at('09:20')).missed, [at('09:00')]);
});

test('a session running across the next tick covers it (systemd folds a tick into a running service)', () => {
  const fires = [fired('00:01', '02:30'), fired('03:00', '03:01')];
  const ticks = ['00:00', '01:00', '02:00', '03:00'].map(at);
  assert.deepEqual(tickGaps(ticks, fires, at('03:30')).missed, []);
  // Control: the same session ended at 00:30, and nothing fired at 01:00 or 02:00.
  assert.deepEqual(tickGaps(ticks, [fired('00:01', '00:30'), fired('03:00', '03:01')], at('03:30')).missed, [at('01:00'), at('02:00')]);
});

test('a late catch-up fire counts for the tick it followed, not for those it did not', () => {
  // Host down 01:00-03:40: Persistent= fires once at 03:41.
  const fires = [fired('00:01', '00:02'), fired('03:41', '03:42')];
  const ticks = ['00:00', '01:00', '02:00', '03:00'].map(at);
  const g = tickGaps(ticks, fires, at('03:50'));
  assert.deepEqual(g.missed, [at('01:00'), at('02:00')]);
  // Before the last fire: not part of the silence now.
  assert.equal(g.since_last, 0);
});
