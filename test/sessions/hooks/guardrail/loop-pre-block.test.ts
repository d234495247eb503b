// The loop pre-block (sessions/hooks/guardrail/loop-pre-block.ts): the agent is told before the
// supervisor ends the session as a loop.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loopPreBlock } from '../../../../sessions/hooks/guardrail/loop-pre-block.js';
import { toolKey } from '../../../../sessions/stream/loop-detector.js';

describe('loop pre-block', () => {
  const limits = { maxRepeats: 5, window: 20, cycleRepeats: 3 };
  const call = (command: string) => ({ tool_name: 'Bash', tool_input: { command } });
  const key = (command: string) => toolKey('Bash', { command });

  test('blocks the repeat before the one the detector flags, and says "blocked: repeat"', () => {
    assert.equal(loopPreBlock([key('x'), key('x')], call('x'), limits).allow, true);
    const v = loopPreBlock([key('x'), key('x'), key('x')], call('x'), limits);
    assert.equal(v.allow, false);
    assert.match((v as { reason: string }).reason, /^blocked: repeat: you made this exact call .* 4 times/);
  });

  test('blocks the step of a cycle before the one the detector flags', () => {
    const h = [key('a'), key('b'), key('a'), key('b')];
    const v = loopPreBlock(h, call('a'), limits);
    assert.equal(v.allow, false);
    assert.match((v as { reason: string }).reason, /cycle of 2/);
    assert.equal(loopPreBlock([key('a'), key('b')], call('a'), limits).allow, true);
  });

  test('never blocks the same tool with different inputs', () => {
    const h: string[] = [];
    for (let i = 0; i < 40; i++) {
      assert.equal(loopPreBlock(h, call(`echo ${i}`), limits).allow, true);
      h.push(key(`echo ${i}`));
    }
  });
});
