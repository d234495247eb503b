// The meter's copy of a response: the proxy hands it each chunk it has already passed on to the
// CLI, so nothing here can delay or alter what the CLI gets. A compressed body is decompressed
// into the copy only. SseUsage and jsonUsage are pure; usageTap is the zlib edge around them.
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';
import type { CallUsage } from '../../budget/pricing.js';
import type { CallOutcome } from '../../budget/meter.js';

// A call as the proxy saw it answered: its usage, and how the API said it ended (stop_reason:
// end_turn, tool_use, ...; null when the answer did not say). The supervisor's own view of how a
// session ended, beside the stream the session could write.
export type TappedCall = CallOutcome & { stopReason: string | null };

const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

// The API's usage object as the meter counts it (every field cumulative; the larger seen wins).
export function usageFrom(u: any, into: CallUsage = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0, cacheWrite1h: 0, webSearches: 0 }): CallUsage {
  if (!u || typeof u !== 'object') return into;
  into.input = Math.max(into.input, n(u.input_tokens));
  into.cacheWrite = Math.max(into.cacheWrite, n(u.cache_creation_input_tokens));
  into.cacheRead = Math.max(into.cacheRead, n(u.cache_read_input_tokens));
  into.output = Math.max(into.output, n(u.output_tokens));
  into.cacheWrite1h = Math.max(into.cacheWrite1h ?? 0, n(u.cache_creation?.ephemeral_1h_input_tokens));
  into.webSearches = Math.max(into.webSearches ?? 0, n(u.server_tool_use?.web_search_requests));
  return into;
}

// Pure, incremental: the usage in an SSE stream (message_start, then message_delta's cumulative
// counts). Only those events' data lines are parsed; the deltas between them are skipped.
export class SseUsage {
  private rest = '';
  private event = '';
  readonly usage: CallUsage = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0, cacheWrite1h: 0, webSearches: 0 };
  model: string | null = null;
  stopReason: string | null = null;
  started = false;
  complete = false;

  feed(text: string): void {
    let s = this.rest + text;
    let nl: number;
    let from = 0;
    while ((nl = s.indexOf('\n', from)) !== -1) {
      this.line(s.slice(from, s.charCodeAt(nl - 1) === 13 ? nl - 1 : nl));
      from = nl + 1;
    }
    this.rest = s.slice(from);
  }

  private line(l: string): void {
    if (l.startsWith('event:')) {
      this.event = l.slice(6).trim();
      return;
    }
    if (!l.startsWith('data:')) {
      if (l === '') this.event = '';
      return;
    }
    const data = l.slice(5);
    // Without event lines the data's own type says it (the SDK reads either).
    const ev = this.event || (/"type"\s*:\s*"(message_start|message_delta|message_stop)"/.exec(data.slice(0, 64))?.[1] ?? '');
    if (ev === 'message_stop') {
      this.complete = true;
      return;
    }
    if (ev !== 'message_start' && ev !== 'message_delta') return;
    let msg: any;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (ev === 'message_start') {
      this.started = true;
      if (typeof msg?.message?.model === 'string') this.model = msg.message.model;
      usageFrom(msg?.message?.usage, this.usage);
    } else {
      usageFrom(msg?.usage, this.usage);
      if (typeof msg?.delta?.stop_reason === 'string') this.stopReason = msg.delta.stop_reason;
      this.complete = true;
    }
  }
}

// Pure: a JSON reply's usage; null when it is not one.
export function jsonUsage(text: string): TappedCall | null {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (!body || typeof body !== 'object' || !body.usage) return null;
  return { usage: usageFrom(body.usage), model: typeof body.model === 'string' ? body.model : null, complete: true, stopReason: typeof body.stop_reason === 'string' ? body.stop_reason : null };
}

// The most of a JSON reply the meter keeps (a reply larger than this is counted at its worst).
const JSON_MAX = 32 * 1024 * 1024;

export type Tap = { write(chunk: Buffer): void; end(): void; abort(): void };

// Reads a 2xx response's usage from the chunks it is given. `done` is called once: with the
// call's outcome, or with an Error (a body it could not read: the caller counts the worst case).
export function usageTap(headers: { 'content-encoding'?: string; 'content-type'?: string }, done: (r: TappedCall | Error) => void): Tap {
  let finished = false;
  const finish = (r: TappedCall | Error) => {
    if (finished) return;
    finished = true;
    done(r);
  };
  const encoding = String(headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  const sse = /text\/event-stream/i.test(String(headers['content-type'] ?? ''));
  const stream = new SseUsage();
  const chunks: string[] = [];
  let size = 0;
  const text = new StringDecoder('utf8');
  const take = (b: Buffer) => {
    const t = text.write(b);
    if (sse) return stream.feed(t);
    size += b.length;
    if (size > JSON_MAX) return finish(new Error(`a JSON reply above ${JSON_MAX} bytes`));
    chunks.push(t);
  };
  const result = (cut: boolean): TappedCall | Error => {
    const t = text.end();
    if (sse) {
      stream.feed(`${t}\n`);
      if (!stream.started) return new Error(cut ? 'the stream was cut before message_start' : 'a stream without message_start');
      return { usage: stream.usage, model: stream.model, complete: stream.complete && !cut, stopReason: cut ? null : stream.stopReason };
    }
    chunks.push(t);
    return (cut ? null : jsonUsage(chunks.join(''))) ?? new Error(cut ? 'the reply was cut' : 'a reply without usage');
  };
  let decoder: zlib.Gunzip | zlib.BrotliDecompress | zlib.Inflate | null = null;
  if (encoding === 'gzip' || encoding === 'x-gzip') decoder = zlib.createGunzip();
  else if (encoding === 'br') decoder = zlib.createBrotliDecompress();
  else if (encoding === 'deflate') decoder = zlib.createInflate();
  else if (encoding !== 'identity' && encoding !== '') {
    return { write() {}, end: () => finish(new Error(`content-encoding ${encoding}`)), abort: () => finish(new Error(`content-encoding ${encoding}`)) };
  }
  if (!decoder) {
    return {
      write: (c) => !finished && take(c),
      end: () => finish(result(false)),
      abort: () => finish(result(true)),
    };
  }
  const d = decoder;
  let cut = false;
  let ended = false;
  d.on('data', (c: Buffer) => !finished && take(c));
  d.on('error', (err) => finish(cut ? result(true) : new Error(`decompressing (${encoding}): ${err.message}`)));
  d.on('end', () => finish(result(cut)));
  return {
    write: (c) => !finished && d.write(c),
    end: () => {
      ended = true;
      d.end();
    },
    abort: () => {
      if (ended || finished) return;
      cut = true;
      // What was decompressed so far still says what the call was; the rest counts its worst.
      d.end();
    },
  };
}
