import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canonicalJson } from '../../../sessions/stream/canonical-json.js';
import { LoopDetector } from '../../../sessions/stream/loop-detector.js';

const limits = { maxRepeats: 5, window: 20, cycleRepeats: 3 };

function feed(d: LoopDetector, calls: Array<[string, unknown]>) {
  return calls.map(([n, i]) => d.push(n, i));
}

describe('loop detector', () => {
  test('the same call max_repeats times in the window is a loop, on the max_repeats-th call', () => {
    const verdicts = feed(new LoopDetector(limits), Array.from({ length: 5 }, () => ['Bash', { command: 'ls' }] as [string, unknown]));
    assert.deepEqual(verdicts.slice(0, 4), [null, null, null, null]);
    assert.equal(verdicts[4]?.kind, 'repeat');
  });

  test('key order in the input does not hide a repeat', () => {
    const d = new LoopDetector({ ...limits, maxRepeats: 2 });
    assert.equal(d.push('Read', { a: 1, b: { c: 2, d: 3 } }), null);
    assert.equal(d.push('Read', { b: { d: 3, c: 2 }, a: 1 })?.kind, 'repeat');
  });

  test('repeats spread wider than the window are not a loop', () => {
    const d = new LoopDetector({ maxRepeats: 3, window: 5, cycleRepeats: 3 });
    const calls: Array<[string, unknown]> = [];
    for (let i = 0; i < 30; i++) calls.push(i % 5 === 0 ? ['Bash', { command: 'make' }] : ['Read', { file: `f${i}` }]);
    assert.ok(feed(d, calls).every((v) => v === null));
  });

  test('A B A B A B is a cycle', () => {
    const d = new LoopDetector(limits);
    const v = feed(d, [['Read', { f: 1 }], ['Edit', { f: 1 }], ['Read', { f: 1 }], ['Edit', { f: 1 }], ['Read', { f: 1 }], ['Edit', { f: 1 }]]);
    assert.deepEqual(v.slice(0, 5), [null, null, null, null, null]);
    assert.equal(v[5]?.kind, 'cycle');
    assert.equal(v[5]?.period, 2);
  });

  test('A B C A B C A B C is a cycle', () => {
    const d = new LoopDetector(limits);
    const v = feed(d, Array.from({ length: 9 }, (_, i) => ['Bash', { command: ['a', 'b', 'c'][i % 3] }] as [string, unknown]));
    assert.equal(v.findIndex((x) => x !== null), 8);
  });

  test('the same tool with different inputs is never a loop', () => {
    const d = new LoopDetector({ maxRepeats: 2, window: 100, cycleRepeats: 2 });
    const v = feed(d, Array.from({ length: 500 }, (_, i) => ['Bash', { command: `echo ${i}` }] as [string, unknown]));
    assert.ok(v.every((x) => x === null));
  });

  test('canonical JSON sorts keys at every depth and keeps array order', () => {
    assert.equal(canonicalJson({ b: [2, { y: 1, x: 0 }], a: null }), '{"a":null,"b":[2,{"x":0,"y":1}]}');
  });
});
