import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { describe, test } from 'node:test';
import { jsonUsage, SseUsage, usageTap } from '../../../sessions/wall/usage-tap.js';
import type { CallOutcome } from '../../../budget/meter.js';

const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const STREAM = [
  ev('message_start', { type: 'message_start', message: { model: 'claude-sonnet-5', usage: { input_tokens: 120, cache_creation_input_tokens: 300, cache_read_input_tokens: 4000, output_tokens: 1, cache_creation: { ephemeral_1h_input_tokens: 100 } } } }),
  ev('ping', { type: 'ping' }),
  ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'é'.repeat(50) } }),
  ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 77 } }),
  ev('message_stop', { type: 'message_stop' }),
].join('');
const EXPECTED = { input: 120, cacheWrite: 300, cacheRead: 4000, output: 77, cacheWrite1h: 100, webSearches: 0 };

function tapAll(headers: Record<string, string>, chunks: Buffer[], cut = false): Promise<CallOutcome | Error> {
  return new Promise((resolve) => {
    const tap = usageTap(headers, resolve);
    for (const c of chunks) tap.write(c);
    if (cut) tap.abort();
    else tap.end();
  });
}
// Every split of the bytes into pieces of `size`, so no event, line or character boundary is special.
const split = (b: Buffer, size: number) => Array.from({ length: Math.ceil(b.length / size) }, (_, i) => b.subarray(i * size, (i + 1) * size));

describe('usage tap', () => {
  test('an SSE stream\'s usage, in chunks of every size from 1 byte up', () => {
    const bytes = Buffer.from(STREAM);
    for (const size of [1, 2, 3, 7, 64, bytes.length]) {
      const s = new SseUsage();
      for (const c of split(bytes, size)) s.feed(c.toString('latin1'));
      assert.deepEqual(s.usage, EXPECTED, `chunks of ${size}`);
      assert.equal(s.model, 'claude-sonnet-5');
      assert.equal(s.complete, true);
    }
  });
  for (const [encoding, compress] of [['gzip', zlib.gzipSync], ['br', zlib.brotliCompressSync], ['deflate', zlib.deflateSync], ['identity', (b: Buffer) => b]] as const) {
    test(`a ${encoding} stream is read from a decompressed copy`, async () => {
      const r = await tapAll({ 'content-type': 'text/event-stream', 'content-encoding': encoding }, split(compress(Buffer.from(STREAM)), 5));
      assert.ok(!(r instanceof Error), String(r));
      assert.deepEqual(r.usage, EXPECTED);
      assert.equal(r.complete, true);
    });
  }
  test('a stream cut after message_start is incomplete (the meter then counts its max_tokens)', async () => {
    const half = Buffer.from(STREAM.slice(0, STREAM.indexOf('event: message_delta')));
    const r = await tapAll({ 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, [zlib.gzipSync(half).subarray(0, 200)], true);
    assert.ok(!(r instanceof Error), String(r));
    assert.equal(r.complete, false);
    assert.equal(r.usage.input, 120);
  });
  test('a JSON reply (compressed or not) gives its usage; a body that is not one is an error', async () => {
    const reply = Buffer.from(JSON.stringify({ type: 'message', model: 'claude-haiku-4-5', usage: { input_tokens: 5, output_tokens: 9, server_tool_use: { web_search_requests: 2 } } }));
    const r = await tapAll({ 'content-type': 'application/json', 'content-encoding': 'gzip' }, split(zlib.gzipSync(reply), 3));
    assert.ok(!(r instanceof Error));
    assert.deepEqual([r.usage.input, r.usage.output, r.usage.webSearches, r.model], [5, 9, 2, 'claude-haiku-4-5']);
    assert.ok((await tapAll({ 'content-type': 'application/json' }, [Buffer.from('<html>')])) instanceof Error);
    assert.equal(jsonUsage('{"usage":null}'), null);
  });
  test('a damaged gzip body or an unknown encoding is an error, never a throw', async () => {
    assert.ok((await tapAll({ 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, [Buffer.from('not gzip at all')])) instanceof Error);
    assert.ok((await tapAll({ 'content-type': 'text/event-stream', 'content-encoding': 'zstd' }, [Buffer.from(STREAM)])) instanceof Error);
  });
});

describe('how a call ended, as the proxy read it', () => {
  test('an SSE stream\'s stop_reason comes from message_delta; a cut stream has none', async () => {
    const r = await tapAll({ 'content-type': 'text/event-stream' }, [Buffer.from(STREAM)]);
    assert.ok(!(r instanceof Error));
    assert.equal((r as any).stopReason, 'end_turn');
    const toolUse = STREAM.replace('"stop_reason":"end_turn"', '"stop_reason":"tool_use"');
    assert.equal(((await tapAll({ 'content-type': 'text/event-stream' }, [Buffer.from(toolUse)])) as any).stopReason, 'tool_use');
    const cut = await tapAll({ 'content-type': 'text/event-stream' }, [Buffer.from(STREAM.slice(0, STREAM.indexOf('event: message_stop')))], true);
    assert.equal((cut as any).stopReason, null);
  });
  test('a JSON reply\'s stop_reason; null when it says none', () => {
    assert.equal(jsonUsage(JSON.stringify({ usage: { input_tokens: 1 }, stop_reason: 'tool_use' }))?.stopReason, 'tool_use');
    assert.equal(jsonUsage(JSON.stringify({ usage: { input_tokens: 1 } }))?.stopReason, null);
  });
});
