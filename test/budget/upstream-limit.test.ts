// What makes an upstream reply a limit, and the reset read from its headers (never the CLI's text).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { upstreamLimit } from '../../budget/upstream-limit.js';

const now = new Date('2026-12-01T10:00:00.000Z');
const headers = (h: Record<string, string>) => (k: string) => h[k];

test('a 200 or a 500 is no limit; a 429 and a 529 are, a rejected window on any status is', () => {
  assert.equal(upstreamLimit(200, headers({}), now), null);
  assert.equal(upstreamLimit(500, headers({ 'retry-after': '30' }), now), null);
  assert.deepEqual(upstreamLimit(429, headers({}), now), { status: 429, rejected: false, retry_at: null, source: null });
  assert.equal(upstreamLimit(529, headers({}), now)?.status, 529);
  assert.equal(upstreamLimit(200, headers({ 'anthropic-ratelimit-unified-status': 'allowed_warning' }), now), null);
  assert.equal(upstreamLimit(200, headers({ 'anthropic-ratelimit-unified-status': 'rejected' }), now)?.rejected, true);
});

test('retry-after in seconds or as a date, a window\'s reset in epoch seconds, an exhausted key limit\'s RFC 3339 reset', () => {
  assert.equal(upstreamLimit(429, headers({ 'retry-after': '90' }), now)?.retry_at, '2026-12-01T10:01:30.000Z');
  assert.equal(upstreamLimit(429, headers({ 'retry-after': 'Tue, 01 Dec 2026 11:00:00 GMT' }), now)?.retry_at, '2026-12-01T11:00:00.000Z');
  const w = upstreamLimit(429, headers({ 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-reset': String(Date.parse('2026-12-01T15:00:00Z') / 1000) }), now);
  assert.deepEqual(w, { status: 429, rejected: true, retry_at: '2026-12-01T15:00:00.000Z', source: 'anthropic-ratelimit-unified-reset' });
  // Only the limit that ran out says when: the requests left, the tokens did not.
  const k = upstreamLimit(429, headers({
    'anthropic-ratelimit-requests-remaining': '12', 'anthropic-ratelimit-requests-reset': '2026-12-01T12:00:00Z',
    'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': '2026-12-01T10:00:40Z',
  }), now);
  assert.equal(k?.retry_at, '2026-12-01T10:00:40.000Z');
  assert.equal(k?.source, 'anthropic-ratelimit-tokens-reset');
});

test('the latest of what the headers say wins; a time past, unreadable or beyond eight days is not believed', () => {
  const both = upstreamLimit(429, headers({ 'retry-after': '60', 'anthropic-ratelimit-unified-reset': String(Date.parse('2026-12-01T13:00:00Z') / 1000) }), now);
  assert.equal(both?.retry_at, '2026-12-01T13:00:00.000Z');
  assert.equal(upstreamLimit(429, headers({ 'retry-after': 'soon' }), now)?.retry_at, null);
  assert.equal(upstreamLimit(429, headers({ 'anthropic-ratelimit-unified-reset': String(Date.parse('2026-11-30T00:00:00Z') / 1000) }), now)?.retry_at, null);
  // What a forger would write: 2100-01-01.
  assert.equal(upstreamLimit(429, headers({ 'anthropic-ratelimit-unified-reset': '4102444800' }), now)?.retry_at, null);
});
