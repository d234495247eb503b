// The capture's store opened ahead (sessions/capture/ahead.ts): handed over once, and closed when
// the capture never took it, so a daemon running session after session leaks no connection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openAhead } from '../../../sessions/capture/ahead.js';

const fakeStore = (log: string[], name: string) => ({ name, close: () => void log.push(`close ${name}`) });

test('opened ahead, the capture gets that store and it is not closed twice', async () => {
  const log: string[] = [];
  let n = 0;
  const a = openAhead(async () => fakeStore(log, `s${++n}`));
  a.start();
  a.start();
  const s = await a.take();
  assert.equal(s.name, 's1');
  assert.equal(n, 1, 'opened once');
  await a.drop();
  assert.deepEqual(log, [], 'the capture closes what it took; drop leaves it');
});

test('never started, the capture opens its own', async () => {
  let n = 0;
  const a = openAhead(async () => fakeStore([], `s${++n}`));
  assert.equal((await a.take()).name, 's1');
  await a.drop();
  assert.equal(n, 1);
});

test('opened ahead and never taken (the capture failed first), it is closed', async () => {
  const log: string[] = [];
  const a = openAhead(async () => fakeStore(log, 's1'));
  a.start();
  await a.drop();
  assert.deepEqual(log, ['close s1']);
});

test('an open that fails is the capture\'s to meet, never an unhandled rejection', async () => {
  const a = openAhead<{ close(): void }>(async () => {
    throw new Error('database is locked');
  });
  a.start();
  await new Promise((r) => setImmediate(r));
  await assert.rejects(a.take(), /database is locked/);
  await a.drop();
});
