import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { classify } from '../../../sessions/run/outcome.js';
import { isRateLimited, resetTime } from '../../../sessions/stream/rate-limit.js';
import { StreamTracker } from '../../../sessions/stream/stream-tracker.js';
import type { ResultMessage } from '../../../sessions/stream/types.js';
import { FIXTURES } from '../../helpers.js';

const fixture = (name: string) => {
  const t = new StreamTracker({ maxRepeats: 5, window: 20, cycleRepeats: 3 });
  for (const l of fs.readFileSync(path.join(FIXTURES, 'claude-cli', name), 'utf8').split('\n')) t.feedLine(l);
  return t;
};
const errorResult = (over: Partial<ResultMessage>): ResultMessage => ({ type: 'result', subtype: 'success', is_error: true, ...over });
const ending = (result: ResultMessage | null, rateLimit = null as never) => ({ spawnError: null, stopReason: null, result, exitCode: 1, signal: null, rateLimit });

describe('rate limits', () => {
  test('the CLI\'s recorded 429 result is rate_limited, not a generic error', () => {
    const t = fixture('stream-api-error-429-retries.jsonl');
    assert.equal(t.result?.api_error_status, 429);
    assert.deepEqual(classify(ending(t.result)), { outcome: 'rate_limited', error: 'API error 429: API Error: Request rejected (429) · fake 429' });
  });

  test('an overloaded API (529) is rate_limited; a 500 and a 400 stay errors', () => {
    assert.equal(classify(ending(errorResult({ api_error_status: 529, result: 'API Error: overloaded' }))).outcome, 'rate_limited');
    assert.equal(classify(ending(errorResult({ api_error_status: 500, result: 'API Error: 500' }))).outcome, 'error');
    // The recorded 500 from the real CLI, as a negative control beside the 429.
    const r500 = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'json-api-error-500.json'), 'utf8'));
    assert.equal(classify(ending(r500)).outcome, 'error');
  });

  test('the usage-limit text is rate_limited and its reset time is read', () => {
    const now = new Date('2026-12-01T10:00:00Z');
    const r = errorResult({ result: "You've hit your session limit · resets 3pm (UTC)" });
    assert.equal(isRateLimited(r), true);
    assert.equal(resetTime(r, null, now)?.toISOString(), '2026-12-01T15:00:00.000Z');
    // 3pm in Berlin (UTC+1 in winter) is 14:00 UTC; 9am already passed today: tomorrow.
    assert.equal(resetTime(errorResult({ result: "You've hit your limit · resets 3pm (Europe/Berlin)" }), null, now)?.toISOString(), '2026-12-01T14:00:00.000Z');
    assert.equal(resetTime(errorResult({ result: "You've hit your limit · resets 9:30am (UTC)" }), null, now)?.toISOString(), '2026-12-02T09:30:00.000Z');
    assert.equal(resetTime(errorResult({ result: 'Claude AI usage limit reached|1796124800' }), null, now)?.toISOString(), new Date(1796124800 * 1000).toISOString());
    assert.equal(resetTime(errorResult({ result: 'API Error: Request rejected (429)' }), null, now), null, 'no time given: null (the hold backs off)');
  });

  test('a rejected rate_limit_event gives the reset time and marks the session rate limited', () => {
    const t = new StreamTracker({ maxRepeats: 5, window: 20, cycleRepeats: 3 });
    t.feedLine(JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1796124800, rateLimitType: 'five_hour' }, session_id: 'x' }));
    assert.equal(resetTime(null, t.rateLimit, new Date('2026-12-01T00:00:00Z'))?.getTime(), 1796124800 * 1000);
    assert.equal(isRateLimited(errorResult({ result: 'API Error' }), t.rateLimit), true);
    assert.equal(isRateLimited(errorResult({ result: 'API Error' }), { status: 'allowed_warning' }), false);
  });

  test('a successful result is never rate limited, whatever its text says', () => {
    assert.equal(isRateLimited({ type: 'result', subtype: 'success', is_error: false, result: "You've hit your session limit" }), false);
  });
});
