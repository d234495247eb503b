import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkThresholds, gateDecision, predictionError } from '../../../memory/recall/gate.js';

const T = { merge: 0.9, link: 0.5 };

const table: Array<[number, 'merge' | 'link' | 'novel']> = [
  [1, 'merge'],
  [0.9, 'merge'],
  [0.9 + 1e-9, 'merge'],
  [0.9 - 1e-9, 'link'],
  [0.7, 'link'],
  [0.5, 'link'],
  [0.5 - 1e-9, 'novel'],
  [0.2, 'novel'],
  [0, 'novel'],
];

for (const [sim, want] of table) {
  test(`a similarity of ${sim} against merge 0.9 / link 0.5 is ${want}`, () => {
    assert.equal(gateDecision(sim, T), want);
  });
}

test('equal thresholds leave no link band', () => {
  assert.equal(gateDecision(0.6, { merge: 0.6, link: 0.6 }), 'merge');
  assert.equal(gateDecision(0.59, { merge: 0.6, link: 0.6 }), 'novel');
});

test('thresholds out of range or link above merge are refused with a message', () => {
  assert.equal(checkThresholds(T), null);
  assert.match(checkThresholds({ merge: 0.5, link: 0.8 })!, /gate\.link \(0\.8\) to be at most gate\.merge \(0\.5\)/);
  assert.match(checkThresholds({ merge: 1.5, link: 0.5 })!, /between 0 and 1/);
});

test('prediction error is one minus similarity, clamped', () => {
  assert.equal(predictionError(1), 0);
  assert.equal(predictionError(0.25), 0.75);
  assert.equal(predictionError(-1), 1);
});
