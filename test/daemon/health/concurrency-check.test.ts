// doctor's `concurrency` check: sessions side by side must fit in the host's memory together.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concurrencyCheck } from '../../../daemon/health/doctor-bounds.js';

const G = 1024 ** 3;

test('four sessions of 2 GiB fit in 16 GiB; eight do not, and the fix names what would fit', () => {
  assert.equal(concurrencyCheck(4, 2 * G, 16 * G).status, 'ok');
  const over = concurrencyCheck(8, 4 * G, 16 * G);
  assert.equal(over.status, 'warn');
  assert.equal(over.detail, "sessions.max_concurrent 8 × limits.memory 4G = 32G, more than the host's 16G");
  assert.equal(over.fix, 'lower sessions.max_concurrent to 4, or limits.memory to 2G');
});

test('no memory bound beside other sessions is a warning; one session at a time never is', () => {
  assert.equal(concurrencyCheck(3, 'off', 16 * G).status, 'warn');
  assert.equal(concurrencyCheck(1, 'off', 16 * G).status, 'ok');
  assert.equal(concurrencyCheck(1, 64 * G, 16 * G).status, 'ok');
});
