// The budget --days bar, pure: eighths of a cell in unicode, whole `#` cells in ASCII.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bar } from '../../../cli/commands/budget.js';

describe('budget chart bar', () => {
  test('unicode: eighths; ascii: whole # cells, at least one for any spend; none for nothing', () => {
    assert.equal(bar(10, 20), '█'.repeat(10));
    assert.equal(bar(1, 20, 20), '█');
    assert.equal(bar(0.1, 20, 20), '▏');
    assert.equal(bar(10, 20, 20, true), '#'.repeat(10));
    assert.equal(bar(0.1, 20, 20, true), '#');
    assert.equal(bar(0, 20, 20, true), '');
    assert.doesNotMatch(bar(7.3, 20, 20, true), /[^#]/);
  });
});
