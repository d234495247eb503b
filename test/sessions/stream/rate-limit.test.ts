import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { classify } from '../../../sessions/run/outcome.js';
import { isRateLimited } from '../../../sessions/stream/rate-limit.js';
import { StreamTracker } from '../../../sessions/stream/stream-tracker.js';
import type { ResultMessage } from '../../../sessions/stream/types.js';
import { FIXTURES } from '../../helpers.js';

const fixture = (name: string) => {
  const t = new StreamTracker({ maxRepeats: 5, window: 20, cycleRepeats: 3 });
  for (const l of fs.readFileSync(path.join(FIXTURES, 'claude-cli', name), 'utf8').split('\n')) t.feedLine(l);
  return t;
};
const errorResult = (over: Partial<ResultMessage>): ResultMessage => ({ type: 'result', subtype: 'success', is_error: true, ...over });
const ending = (result: ResultMessage | null) => ({ spawnError: null, stopReason: null, result, exitCode: 1, signal: null });

// What the stream says of a limit is a claim (sessions/run/outcome.ts checkedByProxy decides): the
// CLI's own 429 result classifies as an error until the proxy's relay of one is beside it.
describe('the stream\'s word on rate limits', () => {
  test('the CLI\'s recorded 429 result is said to be a limit, and classifies as an error on its own', () => {
    const t = fixture('stream-api-error-429-retries.jsonl');
    assert.equal(t.result?.api_error_status, 429);
    assert.equal(isRateLimited(t.result), true);
    assert.deepEqual(classify(ending(t.result)), { outcome: 'error', error: 'API error 429: API Error: Request rejected (429) · fake 429' });
  });

  test('an overloaded API (529) and the usage-limit texts are said to be limits; a 500 and a 400 are not', () => {
    assert.equal(isRateLimited(errorResult({ api_error_status: 529, result: 'API Error: overloaded' })), true);
    assert.equal(isRateLimited(errorResult({ result: "You've hit your session limit · resets 3pm (UTC)" })), true);
    assert.equal(isRateLimited(errorResult({ result: 'Claude AI usage limit reached|1796124800' })), true);
    assert.equal(isRateLimited(errorResult({ api_error_status: 500, result: 'API Error: 500' })), false);
    const r500 = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'json-api-error-500.json'), 'utf8'));
    assert.equal(isRateLimited(r500), false);
  });

  test('a rejected rate_limit_event says so; an allowed_warning does not', () => {
    const t = new StreamTracker({ maxRepeats: 5, window: 20, cycleRepeats: 3 });
    t.feedLine(JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1796124800, rateLimitType: 'five_hour' }, session_id: 'x' }));
    assert.equal(isRateLimited(errorResult({ result: 'API Error' }), t.rateLimit), true);
    assert.equal(isRateLimited(errorResult({ result: 'API Error' }), { status: 'allowed_warning' }), false);
  });

  test('a successful result is never a limit, whatever its text says', () => {
    assert.equal(isRateLimited({ type: 'result', subtype: 'success', is_error: false, result: "You've hit your session limit" }), false);
  });
});
