// The API's own count of the parts of a call our parse can get wrong: each image and PDF, and the
// server tools' definitions (with the system prompt the API adds for them). Asked of
// `POST /v1/messages/count_tokens` (free) with the session's own credential, through `ask`, which
// the API proxy hands in (this file does no I/O). Each part is counted alone, as the difference
// between a one-message call holding it and the same call without it, and kept by content hash:
// a file the CLI sends again on every later call of the session is asked about once, and a call
// without such parts never asks (a text-only call waits on nothing).
// Past the time bound, refused, or any error: null, and the meter falls back to its own count.
import { createHash } from 'node:crypto';

// One count_tokens call: the request body, the answer's `input_tokens`; throws on anything else
// (an `status` on the error for an HTTP answer).
export type AskCount = (body: Buffer, signal: AbortSignal) => Promise<number>;

// How long one admission waits for the API's counts, all of them together.
export const COUNT_TIMEOUT_MS = 5000;
export const FAILS_OFF = 3;

// A part to count: a content block for the message (an image or document) or the tools array.
export type CountPart = { hash: string; block?: Record<string, unknown>; tools?: unknown[] };

const BASE_TEXT = { type: 'text', text: '.' };

// Pure: the count_tokens body for a part (or, with none, the baseline it is measured against).
export function countBody(model: string, part: CountPart | null): Buffer {
  const content = part?.block ? [part.block, BASE_TEXT] : [BASE_TEXT];
  const body: Record<string, unknown> = { model, messages: [{ role: 'user', content }] };
  if (part?.tools) body.tools = part.tools;
  return Buffer.from(JSON.stringify(body), 'utf8');
}

export const partHash = (kind: string, data: Buffer | string) => createHash('sha256').update(kind).update('\0').update(data).digest('hex');

export class ApiCounter {
  // model \0 part hash -> tokens; model -> the baseline's tokens.
  private readonly known = new Map<string, number>();
  private readonly baselines = new Map<string, Promise<number>>();
  // Why the API will not count for this session (a plan or gateway without it, a refused
  // credential): asked no more.
  private off: string | null = null;
  // Admissions in a row whose counts did not come (timeouts, 5xx, 429): past FAILS_OFF, asked no
  // more, so a slow upstream does not hold every later call for the time bound.
  private failedInARow = 0;
  asked = 0;

  constructor(private readonly timeoutMs = COUNT_TIMEOUT_MS) {}

  get unavailable(): string | null {
    return this.off;
  }

  cached(model: string, hash: string): number | null {
    return this.known.get(`${model}\0${hash}`) ?? null;
  }

  // Each part's tokens as the API counts them, or null where it did not answer in time.
  async count(model: string, parts: CountPart[], ask: AskCount): Promise<Array<number | null>> {
    const out = parts.map((p) => this.cached(model, p.hash));
    const todo = parts.map((p, i) => ({ p, i })).filter(({ i }) => out[i] === null);
    if (!todo.length || this.off) return out;
    const signal = AbortSignal.timeout(this.timeoutMs);
    const once = (body: Buffer) => {
      this.asked++;
      return ask(body, signal);
    };
    let base = this.baselines.get(model);
    if (!base) {
      base = once(countBody(model, null));
      this.baselines.set(model, base);
      // A baseline that failed is asked again by a later call.
      base.catch(() => this.baselines.delete(model));
    }
    const results = await Promise.allSettled([base, ...todo.map(({ p }) => once(countBody(model, p)))]);
    const fail = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    const status = (fail?.reason as { status?: number } | undefined)?.status;
    // Refused for what it is, not for load: this session's calls count without it from now on.
    if (status && status >= 400 && status < 500 && status !== 408 && status !== 429) this.off = `count_tokens answered ${status}`;
    if (fail && ++this.failedInARow >= FAILS_OFF) this.off ??= `count_tokens failed ${FAILS_OFF} times in a row (${(fail.reason as Error)?.message ?? fail.reason})`;
    if (!fail) this.failedInARow = 0;
    if (results[0].status !== 'fulfilled') return out;
    const b = results[0].value;
    todo.forEach(({ p, i }, k) => {
      const r = results[k + 1];
      if (r.status !== 'fulfilled' || !Number.isSafeInteger(r.value) || r.value < b) return;
      out[i] = r.value - b;
      this.known.set(`${model}\0${p.hash}`, out[i]!);
    });
    return out;
  }
}
