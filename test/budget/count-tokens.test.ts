// The API's count as the meter keeps it (budget/count-tokens.ts), with `ask` standing in for the
// proxy: each part once, the baseline taken off, and when to stop asking.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiCounter, countBody, FAILS_OFF, type AskCount } from '../../budget/count-tokens.js';

const block = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } };
// An upstream that counts 10 for the baseline and 10 + 500 for a body with the part.
const counting = (log: string[]): AskCount => async (body) => {
  log.push(body.toString());
  return body.includes('"image"') ? 510 : 10;
};

test('a part is the difference from the baseline, asked once a session', async () => {
  const log: string[] = [];
  const c = new ApiCounter();
  assert.deepEqual(await c.count('m', [{ hash: 'h1', block }], counting(log)), [500]);
  assert.deepEqual(await c.count('m', [{ hash: 'h1', block }], counting(log)), [500]);
  assert.equal(log.length, 2, 'the baseline and the part, once');
  assert.deepEqual(JSON.parse(log[0]), JSON.parse(countBody('m', null).toString()));
});

test('a refusal for what it is (404) stops the asking; a 429 does not, until three in a row', async () => {
  const c = new ApiCounter();
  const refuse = (status: number): AskCount => async () => {
    throw Object.assign(new Error(`count_tokens answered ${status}`), { status });
  };
  assert.deepEqual(await c.count('m', [{ hash: 'h', block }], refuse(404)), [null]);
  assert.match(String(c.unavailable), /404/);
  const busy = new ApiCounter();
  for (let i = 1; i < FAILS_OFF; i++) {
    assert.deepEqual(await busy.count('m', [{ hash: 'h', block }], refuse(429)), [null]);
    assert.equal(busy.unavailable, null);
  }
  await busy.count('m', [{ hash: 'h', block }], refuse(429));
  assert.match(String(busy.unavailable), /3 times in a row/);
});

test('an answer below the baseline is no count (the worker\'s stands)', async () => {
  const c = new ApiCounter();
  assert.deepEqual(await c.count('m', [{ hash: 'h', block }], async (b) => (b.includes('"image"') ? 5 : 10)), [null]);
});
