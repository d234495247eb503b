// The telemetry module's pure parts and its off switch; the exporter itself is proven end to end
// in test/e2e/telemetry.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeRedactor, secretValues } from '../../core/redact.js';
import { NO_SPAN } from '../../core/trace.js';
import { cleanAttrs, openTelemetry, parseOtlpHeaders, tracesUrl } from '../../logs/telemetry.js';

const logger = { warn: () => {}, debug: () => {} };

test('off (no otlp_endpoint): no telemetry, nothing loaded', async () => {
  const t = await openTelemetry({ telemetry: { capture_content: [], max_queue_size: 10, export_timeout: 1000, flush_timeout: 100 } }, { env: {}, redact: (x) => x, version: '0', logger });
  assert.equal(t, null);
  assert.equal(NO_SPAN.child('x'), NO_SPAN);
  assert.equal(NO_SPAN.traceId, null);
});

for (const [given, want] of [
  ['http://127.0.0.1:4318', 'http://127.0.0.1:4318/v1/traces'],
  ['http://127.0.0.1:4318/', 'http://127.0.0.1:4318/v1/traces'],
  ['https://otlp.example.com/otlp/v1/traces', 'https://otlp.example.com/otlp/v1/traces'],
] as const) {
  test(`the traces URL of ${given} is ${want}`, () => assert.equal(tracesUrl(given), want));
}

test('OTLP headers are read as name=value pairs, percent-decoded; a part without a name is refused', () => {
  assert.deepEqual(parseOtlpHeaders('authorization=Bearer%20abc, x-scope=tenant1'), { authorization: 'Bearer abc', 'x-scope': 'tenant1' });
  assert.deepEqual(parseOtlpHeaders(undefined), {});
  assert.equal(parseOtlpHeaders('=nameless'), null);
  assert.equal(parseOtlpHeaders('no-equals'), null);
});

test('every string attribute passes the redactor, lists included; null and undefined are left out', () => {
  const key = 'sk-ant-api03-planted-secret-value';
  const redact = makeRedactor(secretValues({ ANTHROPIC_API_KEY: key }));
  const out = cleanAttrs({ a: `key ${key}`, b: [key, 'plain'], n: 3, ok: true, gone: null, none: undefined, nan: Number.NaN }, redact);
  assert.deepEqual(out, { a: 'key [redacted]', b: ['[redacted]', 'plain'], n: 3, ok: true });
  // Control: without the redactor the key would be there.
  assert.equal(cleanAttrs({ a: key }, (x) => x).a, key);
});

test('the OTLP headers variable is a secret the redactor knows', () => {
  const values = secretValues({ NIGHTSHIFT_OTLP_HEADERS: 'authorization=Bearer%20abcdef123456,x-tenant=acme-tenant-42' });
  assert.ok(values.includes('Bearer abcdef123456'), values.join(' '));
  assert.ok(values.includes('acme-tenant-42'));
});

// Every `gen_ai.*` name a span carries is one the GenAI semantic conventions define (the
// package's incubating set); what they do not name is `nightshift.*`, or a stable convention.
test('the spans use the GenAI conventions\' own names, and nightshift.* for the rest', async () => {
  const semconv = await import('@opentelemetry/semantic-conventions/incubating');
  const known = new Set<string>((Object.values(semconv) as unknown[]).filter((v): v is string => typeof v === "string"));
  const { requestStartAttrs, responseAttrs, usageAttrs } = await import('../../sessions/wall/request-span.js');
  const { toolSpanAttrs } = await import('../../sessions/hooks/tool-span.js');
  const { memorySpanAttrs, memoryResultAttrs } = await import('../../memory/mcp/memory-span.js');
  const { sessionAttrs } = await import('../../daemon/tick/session-trace.js');
  const { fireAttrs } = await import('../../daemon/tick/fire-trace.js');
  const { gitSpanAttrs } = await import('../../vault/git-sync.js');
  const { emptyGitReport } = await import('../../budget/session-record.js');
  const names = [
    requestStartAttrs('/v1/messages', { 'x-stainless-retry-count': '1' }, { model: 'm', maxTokens: 1, worstUsd: 1, lowered: { from: 2, to: 1 } }),
    responseAttrs(200, { 'request-id': 'r', 'anthropic-ratelimit-requests-remaining': '3', 'retry-after': '1' }),
    usageAttrs({ usage: { input: 1, output: 1, cacheRead: 1, cacheWrite: 1 }, model: 'm', complete: true, stopReason: 'end_turn' }, 1),
    toolSpanAttrs({ tool_name: 'Bash', tool_use_id: 'x', tool_input: {} }, { allow: false, reason: 'r', rule: 'guardrail' }, 1, true),
    memorySpanAttrs('query', { query: 'q', text: 't' }, true),
    memoryResultAttrs({ results: [], decision: 'novel' }, 'e', 1),
    sessionAttrs({ id: 'i', agent: 'a', outcome: 'ok', exit_code: 0, cost_usd: 1, cost_estimated: false, cli_cost_usd: null, reserved_usd: 2, turns: 1, api_calls: 1, duration_ms: 1, started_at: '', ended_at: '', result: 'r', error: null, transcript: null, memory: 'served', retry_at: null, egress_refused: null, api_refused: null, git: null }, emptyGitReport(), true),
    fireAttrs({ action: 'session', agent: 'a', rule: 1, session: 's', outcome: 'ok', reason: 'r', passed_over: [{ rule: 1, agent: 'b', cause: 'held', why: 'w' }], exit_code: 0 }),
    gitSpanAttrs(emptyGitReport()),
  ].flatMap((a) => Object.keys(a));
  const genAi = [...new Set(names.filter((n) => n.startsWith('gen_ai.')))];
  assert.ok(genAi.length >= 15, genAi.join(', '));
  assert.deepEqual(genAi.filter((n) => !known.has(n)), []);
  // The rest: ours, or the stable HTTP and URL names.
  assert.deepEqual(names.filter((n) => !n.startsWith('gen_ai.') && !n.startsWith('nightshift.') && !['http.response.status_code', 'url.path'].includes(n)), []);
  // Control: a name the conventions do not have is caught.
  assert.equal(known.has('gen_ai.usage.cache_hit_tokens'), false);
});
