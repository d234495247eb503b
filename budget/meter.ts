// One session's meter, kept by its API proxy: every call is admitted against the session's
// reservation (its worst case held while it runs, max_tokens lowered to fit) and then priced from
// the usage the API itself reported. No I/O: `persist` (the ledger) and `warn` are handed in, so
// a crash loses at most the call in flight, and that call's worst case is persisted before it goes.
import { scanTopLevel, type Span } from './body-scan.js';
import { collectMedia, itemTokens } from './media-tokens.js';
import { MediaMeasurer } from './media-measure.js';
import { mayHoldServerTool, serverToolDefs, serverToolsWorst } from './server-tools.js';
import { ApiCounter, partHash, type AskCount, type CountPart } from './count-tokens.js';
import { fitCall, inputWorstTokens, type CallPlan } from './reservation.js';
import { costWith, lookupPrice, surchargeFor, surcharged, type CallUsage, type Price, type PriceOverrides, type Surcharge } from './pricing.js';

// What the ledger keeps while a session runs: spent (finished calls, priced) and pending (the
// worst case of calls still in flight).
export type MeterState = { spentUsd: number; pendingUsd: number; calls: number; worstCaseCalls: number };

export type MeterOptions = {
  // null: no cap (the control in tests, and a proxy that only counts).
  reservationUsd: number | null;
  prices?: PriceOverrides;
  persist?: (s: MeterState) => void;
  warn?: (o: object, m: string) => void;
  // Measures images and PDFs off the event loop (a worker thread); made at the first media.
  measurer?: MediaMeasurer;
  // Server tools the agent allows whose price the meter does not know (`server_tools:`).
  serverTools?: readonly string[];
  // The API's own counts (count_tokens), kept a session; made at the first call that asks.
  counter?: ApiCounter;
};

// What the proxy learned of a call from its response. complete: the API said it was done (a
// message_delta or a JSON body); an incomplete call is counted with its whole max_tokens.
export type CallOutcome = { usage: CallUsage; model: string | null; complete: boolean };

export type Admission =
  // model, maxTokens, worstUsd: what the call asked for and the worst case admitted (its trace span).
  | { ok: true; call: number; body: Buffer; lowered: { from: number; to: number } | null; model: string | null; maxTokens: number; worstUsd: number }
  | { ok: false; reason: string };

// price: the model's row; surcharge: what the call's features (fast mode, data residency) add.
type InFlight = { price: Price; surcharge: Surcharge; model: string | null; maxTokens: number; worstUsd: number };

// Pure: what the proxy reads from a call's body. Cache: the dearest write the body names.
export function planOf(body: Record<string, any>, raw: Buffer, price: Price): CallPlan | string {
  const maxTokens = body.max_tokens;
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) return `Expected \`max_tokens\` to be a whole number above 0, got ${JSON.stringify(maxTokens)}`;
  const t = body.thinking;
  const thinkingBudget = t && typeof t === 'object' && t.type === 'enabled' && Number.isSafeInteger(t.budget_tokens) ? t.budget_tokens : null;
  const cache = raw.includes('"1h"') && raw.includes('cache_control') ? '1h' : raw.includes('cache_control') ? '5m' : 'none';
  return { bodyBytes: raw.length, maxTokens, thinkingBudget, cache, price };
}

// What the meter reads of a body, and how to write it back with a new max_tokens (and thinking
// budget). Read from the top-level keys alone (budget/body-scan.ts) and rewritten in place when the
// body is plain; a body with a duplicate key, or one the scan does not take, is parsed in full and
// re-serialised, so what the API reads is what we read.
type ReadCall = { fields: Record<string, any>; model: string | null; rewrite: (maxTokens: number | null, thinkingBudget: number | null) => Buffer };

export function readCall(raw: Buffer): ReadCall | string {
  const top = scanTopLevel(raw);
  const mt = top?.keys.get('max_tokens');
  if (top && !top.duplicate && mt && /^\d{1,15}$/.test(raw.toString('latin1', mt.start, mt.end))) {
    const slice = (k: string) => {
      const sp = top.keys.get(k);
      return sp ? JSON.parse(raw.toString('utf8', sp.start, sp.end)) : undefined;
    };
    let model: unknown;
    let thinking: any;
    let speed: unknown;
    let geo: unknown;
    let tools: unknown;
    try {
      model = slice('model');
      thinking = slice('thinking');
      speed = slice('speed');
      geo = slice('inference_geo');
      const ts = top.keys.get('tools');
      tools = ts && mayHoldServerTool(raw.subarray(ts.start, ts.end)) ? slice('tools') : undefined;
    } catch {
      return readParsed(raw);
    }
    const fields = { max_tokens: Number(raw.toString('latin1', mt.start, mt.end)), thinking, speed, inference_geo: geo, tools };
    return {
      fields,
      model: typeof model === 'string' ? model : null,
      rewrite: (maxTokens, thinkingBudget) => {
        const edits: Array<{ span: Span; text: string }> = [];
        if (maxTokens !== null) edits.push({ span: mt, text: String(maxTokens) });
        if (thinkingBudget !== null) edits.push({ span: top.keys.get('thinking')!, text: JSON.stringify({ ...thinking, budget_tokens: thinkingBudget }) });
        if (!edits.length) return raw;
        edits.sort((a, b) => a.span.start - b.span.start);
        const parts: Buffer[] = [];
        let at = 0;
        for (const e of edits) {
          parts.push(raw.subarray(at, e.span.start), Buffer.from(e.text));
          at = e.span.end;
        }
        parts.push(raw.subarray(at));
        return Buffer.concat(parts);
      },
    };
  }
  return readParsed(raw);
}

function readParsed(raw: Buffer): ReadCall | string {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return 'the request body is not JSON';
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the request body is not a JSON object';
  return readObject(body as Record<string, any>);
}

// A body parsed whole: always re-serialised, so what the API reads is what was counted.
function readObject(b: Record<string, any>): ReadCall {
  return {
    fields: b,
    model: typeof b.model === 'string' ? b.model : null,
    rewrite: (maxTokens, thinkingBudget) => {
      if (maxTokens !== null) b.max_tokens = maxTokens;
      if (thinkingBudget !== null) b.thinking = { ...b.thinking, budget_tokens: thinkingBudget };
      return Buffer.from(JSON.stringify(b), 'utf8');
    },
  };
}

export class SessionMeter {
  private reservation: number | null;
  private spent = 0;
  private calls = 0;
  private worstCase = 0;
  private next = 0;
  private readonly inflight = new Map<number, InFlight>();
  private readonly unknown = new Set<string>();
  private closed: string | null = null;
  private measurer: MediaMeasurer | undefined;
  private counter: ApiCounter | undefined;
  // Why the last call was refused for want of budget (the session ends `budget`).
  exhausted: string | null = null;
  persist: ((s: MeterState) => void) | undefined;

  constructor(private readonly o: MeterOptions) {
    this.reservation = o.reservationUsd;
    this.persist = o.persist;
  }

  // The reservation the charge made (the proxy starts before it).
  reserve(usd: number | null): void {
    this.reservation = usd;
  }

  // No call is admitted after this (before the charge, and once the session is being settled).
  close(reason: string): void {
    this.closed = reason;
  }

  open(): void {
    this.closed = null;
  }

  state(): MeterState {
    let pending = 0;
    for (const c of this.inflight.values()) pending += c.worstUsd;
    return { spentUsd: this.spent, pendingUsd: pending, calls: this.calls, worstCaseCalls: this.worstCase };
  }

  // Spent plus the worst case of what is in flight: what the session has committed.
  committedUsd(): number {
    const s = this.state();
    return s.spentUsd + s.pendingUsd;
  }

  private priceFor(model: string | null): Price {
    const r = lookupPrice(model, this.o.prices);
    if (!r.known && !this.unknown.has(model ?? '')) {
      this.unknown.add(model ?? '');
      this.o.warn?.({ event: 'meter_unknown_model', model }, `the meter has no price for model ${JSON.stringify(model)}: priced at the dearest known (set budget.prices)`);
    }
    return r.price;
  }

  // A /v1/messages call as the session sent it: the body to forward (max_tokens lowered to fit
  // what is left, in place), or why it may not go. Images, PDFs and server tools are counted by the
  // API itself when `ask` (count_tokens, through the proxy) answers in time, and images and PDFs
  // are measured in a worker (budget/media-measure.ts) where it does not; a body without any of
  // them is not parsed whole and never waits on either.
  async admit(raw: Buffer, ask?: AskCount): Promise<Admission> {
    if (this.closed) return { ok: false, reason: this.closed };
    const media = collectMedia(raw);
    if (media.kind === 'refuse') return { ok: false, reason: media.reason };
    const read = media.kind === 'media' ? readObject(media.collect.parsed) : readCall(raw);
    if (typeof read === 'string') return { ok: false, reason: read };
    const server = serverToolsWorst(read.fields.tools, this.o.serverTools);
    if ('refuse' in server) return { ok: false, reason: server.refuse };
    const model = read.model;
    const counter = ask && model ? (this.counter ??= this.o.counter ?? new ApiCounter()) : null;
    const serverDefs = server.names.length ? serverToolDefs(read.fields.tools) : [];
    const toolsPart: CountPart | null = serverDefs.length ? { hash: partHash('tools', JSON.stringify(serverDefs)), tools: serverDefs } : null;
    let tokens = 0;
    let toolTokens = 0;
    if (media.kind === 'media' || toolsPart) {
      const items = media.kind === 'media' ? media.collect.items : [];
      const parts: CountPart[] = items.map((it) => ({ hash: it.hash, block: it.block }));
      if (toolsPart) parts.push(toolsPart);
      // Items the API has counted before are not measured again; the rest both ways at once, so a
      // count that does not come costs no more time than the worker's.
      const before = counter ? parts.map((p) => counter.cached(model!, p.hash)) : parts.map(() => null);
      const toMeasure = items.filter((_, i) => before[i] === null);
      const [counted, m] = await Promise.all([
        counter && before.some((b) => b === null) ? counter.count(model!, parts, ask!) : Promise.resolve(before),
        toMeasure.length ? (this.measurer ??= this.o.measurer ?? new MediaMeasurer()).measure(toMeasure) : Promise.resolve(null),
      ]);
      if (m?.why) this.o.warn?.({ event: 'meter_media_bound', why: m.why, items: toMeasure.length }, `the meter stopped measuring a call's media (${m.why}): what it had not measured counts at the maximum`);
      if (media.kind === 'media') tokens = media.collect.tokens;
      let k = 0;
      items.forEach((it, i) => {
        const byApi = counted[i];
        // The API's count is the figure; the worker's where it gave none.
        tokens += byApi ?? itemTokens(it, m ? m.values[k] : null);
        if (before[i] === null) k++;
      });
      if (toolsPart) toolTokens = counted[parts.length - 1] ?? 0;
      // Counting took turns of the event loop: the session may have ended meanwhile.
      if (this.closed) return { ok: false, reason: this.closed };
    }
    return this.admitCounted(raw, read, media.kind === 'media' ? { tokens, bytes: media.collect.mediaBytes } : null, server, toolTokens);
  }

  // Whether count_tokens has been asked, and why it no longer is (for the proxy's log).
  get apiCounts(): { asked: number; unavailable: string | null } {
    return { asked: this.counter?.asked ?? 0, unavailable: this.counter?.unavailable ?? null };
  }

  // The measurer's worker ends (the session is settled).
  dispose(): void {
    this.measurer?.close();
  }

  // toolTokens: what the API counted for the server tools' definitions (its own system prompt for
  // them included), beyond their bytes in the body.
  private admitCounted(raw: Buffer, read: ReadCall, media: { tokens: number; bytes: number } | null, server: { usd: number; tokens: number }, toolTokens: number): Admission {
    const price = this.priceFor(read.model);
    const surcharge = surchargeFor(read.model, { speed: read.fields.speed, inferenceGeo: read.fields.inference_geo });
    if ('refuse' in surcharge) return { ok: false, reason: surcharge.refuse };
    const plan = planOf(read.fields, raw, price);
    if (typeof plan === 'string') return { ok: false, reason: plan };
    if (media) plan.media = { tokens: media.tokens, bytes: media.bytes };
    if (server.usd || server.tokens || toolTokens) plan.server = { usd: server.usd, tokens: server.tokens + toolTokens };
    plan.price = surcharged(price, surcharge, inputWorstTokens(plan));
    let maxTokens = plan.maxTokens;
    let out = raw;
    let lowered: { from: number; to: number } | null = null;
    let worstUsd: number;
    if (this.reservation === null) {
      const f = fitCall(plan, Infinity);
      worstUsd = f.action === 'forward' ? f.worstUsd : 0;
    } else {
      const fit = fitCall(plan, this.reservation - this.committedUsd());
      if (fit.action === 'refuse') {
        this.exhausted = fit.reason;
        return { ok: false, reason: fit.reason };
      }
      worstUsd = fit.worstUsd;
      if (fit.maxTokens !== plan.maxTokens) {
        lowered = { from: plan.maxTokens, to: fit.maxTokens };
        maxTokens = fit.maxTokens;
      }
      out = read.rewrite(lowered ? fit.maxTokens : null, fit.thinkingBudget !== plan.thinkingBudget ? fit.thinkingBudget : null);
    }
    const call = this.next++;
    this.inflight.set(call, { price, surcharge, model: read.model, maxTokens, worstUsd });
    try {
      this.persist?.(this.state());
    } catch (err) {
      // Fail closed: a call whose worst case could not be recorded does not go.
      this.inflight.delete(call);
      return { ok: false, reason: `the meter could not record the call (${(err as Error).message})` };
    }
    return { ok: true, call, body: out, lowered, model: read.model, maxTokens, worstUsd };
  }

  // The call ended: priced from its usage; null (no usage could be read) counts its worst case.
  // Returns what it cost.
  finish(call: number, outcome: CallOutcome | null): number {
    const c = this.inflight.get(call);
    if (!c) return 0;
    this.inflight.delete(call);
    let usd: number;
    if (outcome === null) {
      usd = c.worstUsd;
      this.worstCase++;
    } else {
      // The model the API says it ran is what it bills; the operator's price for the name the
      // request used still wins (a gateway's own names).
      const served = outcome.model && outcome.model !== c.model ? lookupPrice(outcome.model, this.o.prices) : null;
      const price = served?.known && lookupPrice(c.model, this.o.prices).source !== 'config' ? served.price : c.price;
      const usage = outcome.complete ? outcome.usage : { ...outcome.usage, output: Math.max(outcome.usage.output, c.maxTokens) };
      usd = costWith(price, c.surcharge, usage);
      if (!outcome.complete) this.worstCase++;
    }
    this.spent += usd;
    this.calls++;
    try {
      this.persist?.(this.state());
    } catch (err) {
      this.o.warn?.({ event: 'meter_persist_failed', err: String(err) }, `the meter could not record a finished call: ${(err as Error).message}`);
    }
    return usd;
  }

  // A call that never reached the API (refused upstream before a response, nothing served).
  drop(call: number): void {
    if (this.inflight.delete(call)) {
      try {
        this.persist?.(this.state());
      } catch {
        // the pending worst case stays counted, which is only safe
      }
    }
  }
}
