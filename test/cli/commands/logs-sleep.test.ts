// `logs -f` polls with sleep(): each poll's abort listener goes when its timer fires, so a long
// follow never passes node's listener limit (it warned after ~6 s before).
import assert from 'node:assert/strict';
import { getEventListeners, setMaxListeners } from 'node:events';
import { test } from 'node:test';
import { sleep } from '../../../cli/commands/logs-view.js';

test('sleep leaves no abort listener behind, and an abort still ends it at once', async () => {
  const stop = new AbortController();
  for (let i = 0; i < 30; i++) await sleep(1, stop.signal);
  assert.equal(getEventListeners(stop.signal, 'abort').length, 0, 'no listener left after 30 polls');
  let ended = false;
  const waiting = sleep(60_000, stop.signal).then(() => (ended = true));
  assert.equal(getEventListeners(stop.signal, 'abort').length, 1, 'one listener while it waits');
  stop.abort();
  // Ended by the abort itself, within the turn: not by the 60 s timer.
  await new Promise((r) => setImmediate(r));
  assert.equal(ended, true);
  await waiting;
});

test('control: the old form (a listener per poll, removed only on abort) leaves one for every poll', async () => {
  const old = (ms: number, signal: AbortSignal) => new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
  const stop = new AbortController();
  // Past 10, node warns (what the operator saw); the count is what this control shows.
  setMaxListeners(100, stop.signal);
  for (let i = 0; i < 30; i++) await old(1, stop.signal);
  assert.equal(getEventListeners(stop.signal, 'abort').length, 30);
});
