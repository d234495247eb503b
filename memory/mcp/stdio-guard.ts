// A line filter in front of the server's stdio transport. SDK 1.32.2's own stdio transport drops a
// non-JSON line silently (no reply) and, once 10 MB arrive without a newline, closes the transport:
// the server is gone. Here every line is checked first: a valid JSON-RPC message passes on, parsed
// and checked once (GuardedStdioTransport hands it to the SDK as its own transport would have);
// anything else is answered with the JSON-RPC error the spec names (-32700 parse error, -32600
// invalid request) and never reaches the SDK; an over-long line is skipped without being buffered.
import { Transform, type Readable, type TransformCallback, type Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export type GuardOptions = {
  // Longest line let through, in bytes; the rest of a longer line is discarded as it arrives.
  maxLineBytes?: number;
  // Writes one JSON-RPC error response (already serialized, newline included) to the client.
  reply: (line: string) => void;
  onRejected?: (reason: string, sample: string) => void;
};

export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;
const NEWLINE = 0x0a;

type Verdict = { ok: true; message: JSONRPCMessage } | { ok: false; code: number; message: string; id: string | number | null };

// Pure: what to do with one line (without its newline).
export function judgeLine(line: string): Verdict | null {
  if (!line.trim()) return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { ok: false, code: -32700, message: `Parse error: ${(err as Error).message}`, id: null };
  }
  // What the SDK's transport would pass on: the schema's output (deserializeMessage in its shared/stdio.js).
  const checked = JSONRPCMessageSchema.safeParse(value);
  if (checked.success) return { ok: true, message: checked.data };
  const raw = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>).id : undefined;
  const id = typeof raw === 'string' || (typeof raw === 'number' && Number.isFinite(raw)) ? raw : null;
  return { ok: false, code: -32600, message: 'Invalid Request: expected one JSON-RPC 2.0 message object per line', id };
}

export function errorLine(id: string | number | null, code: number, message: string): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;
}

// A Transform from raw stdin to valid JSON-RPC messages, parsed (object mode on its readable side).
export function guardStdin(o: GuardOptions): Transform {
  const max = o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let parts: Buffer[] = [];
  let size = 0;
  let discarding = false;

  const reject = (code: number, message: string, id: string | number | null, sample: string) => {
    o.onRejected?.(message, sample.slice(0, 200));
    o.reply(errorLine(id, code, message));
  };

  const finishLine = (t: Transform, tail: Buffer) => {
    if (discarding) {
      discarding = false;
      reject(-32600, `Invalid Request: line longer than ${max} bytes`, null, '');
      return;
    }
    const buf = parts.length ? Buffer.concat([...parts, tail]) : tail;
    parts = [];
    size = 0;
    const line = buf.toString('utf8').replace(/\r$/, '');
    const v = judgeLine(line);
    if (!v) return;
    if (v.ok) t.push(v.message);
    else reject(v.code, v.message, v.id, line);
  };

  return new Transform({
    readableObjectMode: true,
    transform(this: Transform, chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      let start = 0;
      while (start < chunk.length) {
        const nl = chunk.indexOf(NEWLINE, start);
        const end = nl === -1 ? chunk.length : nl;
        const piece = chunk.subarray(start, end);
        if (!discarding) {
          if (size + piece.length > max) {
            discarding = true;
            parts = [];
            size = 0;
          } else if (nl === -1) {
            parts.push(Buffer.from(piece));
            size += piece.length;
          }
        }
        if (nl === -1) break;
        finishLine(this, discarding ? Buffer.alloc(0) : piece);
        start = nl + 1;
      }
      done();
    },
    flush(this: Transform, done: TransformCallback) {
      if (size || discarding) finishLine(this, Buffer.alloc(0));
      done();
    },
  });
}

// The SDK's StdioServerTransport, reading the guard's messages instead of parsing each line again
// (its ReadBuffer ran JSON.parse and the schema a second time on every request). Sends as it does.
export class GuardedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private started = false;
  private readonly ondata = (message: JSONRPCMessage) => {
    try {
      this.onmessage?.(message);
    } catch (err) {
      this.onerror?.(err as Error);
    }
  };
  private readonly onInputError = (err: Error) => this.onerror?.(err);

  constructor(private readonly input: Readable, private readonly output: Writable) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('GuardedStdioTransport already started');
    this.started = true;
    this.input.on('data', this.ondata);
    this.input.on('error', this.onInputError);
  }

  async close(): Promise<void> {
    this.input.off('data', this.ondata);
    this.input.off('error', this.onInputError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }
}
