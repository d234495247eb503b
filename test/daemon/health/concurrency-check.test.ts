// doctor's `concurrency` check: sessions side by side must fit in the host's memory together, and
// each session's bounds are at most its share of the host (sessions/wall/bounds.ts splitBounds).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concurrencyCheck } from '../../../daemon/health/doctor-bounds.js';
import { splitBounds } from '../../../sessions/wall/bounds.js';

const G = 1024 ** 3;

test('four sessions of 2 GiB fit in 16 GiB; eight of 4 GiB do not: each gets its share, said, and the fix names what would fit', () => {
  assert.equal(concurrencyCheck(4, 2 * G, 16 * G).status, 'ok');
  const over = concurrencyCheck(8, 4 * G, 16 * G);
  assert.equal(over.status, 'warn');
  // 80% of 16G over 8 sessions: 1.6G each.
  assert.equal(over.detail, "sessions.max_concurrent 8 × limits.memory 4G = 32G, more than 80% of the host's 16G: each session gets 1.6G");
  assert.equal(over.fix, 'lower sessions.max_concurrent to 3, or limits.memory to 1.6G (what each gets now)');
});

test('no memory bound beside other sessions is a warning; one session at a time never is', () => {
  assert.equal(concurrencyCheck(3, 'off', 16 * G).status, 'warn');
  assert.equal(concurrencyCheck(1, 'off', 16 * G).status, 'ok');
  assert.equal(concurrencyCheck(1, 64 * G, 16 * G).status, 'ok');
});

test('splitBounds: beside others each session gets at most its share of the host\'s memory and threads; alone, the limits as written', () => {
  const host = { memory: 10 * G, threads: 1000 };
  assert.deepEqual(splitBounds({ pids: 512, memory: 8 * G }, 1, host), { wanted: { pids: 512, memory: 8 * G }, lowered: [] });
  const four = splitBounds({ pids: 512, memory: 8 * G }, 4, host);
  assert.deepEqual(four.wanted, { pids: 200, memory: 2 * G });
  assert.equal(four.lowered.length, 2);
  assert.ok(4 * (four.wanted.memory as number) <= 0.8 * host.memory, 'four together stay within 80% of the host');
  // Within the share, nothing is lowered; off stays off (doctor warns of it).
  assert.deepEqual(splitBounds({ pids: 100, memory: G }, 4, host).lowered, []);
  assert.deepEqual(splitBounds({ pids: 'off', memory: 'off' }, 4, host).wanted, { pids: 'off', memory: 'off' });
});
