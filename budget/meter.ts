// One session's meter, kept by its API proxy: every call is admitted against the session's
// reservation (its worst case held while it runs, max_tokens lowered to fit) and then priced from
// the usage the API itself reported. No I/O: `persist` (the ledger) and `warn` are handed in, so
// a crash loses at most the call in flight, and that call's worst case is persisted before it goes.
import { fitCall, type CallPlan } from './reservation.js';
import { costAt, lookupPrice, type CallUsage, type Price, type PriceOverrides } from './pricing.js';

// What the ledger keeps while a session runs: spent (finished calls, priced) and pending (the
// worst case of calls still in flight).
export type MeterState = { spentUsd: number; pendingUsd: number; calls: number; worstCaseCalls: number };

export type MeterOptions = {
  // null: no cap (the control in tests, and a proxy that only counts).
  reservationUsd: number | null;
  prices?: PriceOverrides;
  persist?: (s: MeterState) => void;
  warn?: (o: object, m: string) => void;
};

// What the proxy learned of a call from its response. complete: the API said it was done (a
// message_delta or a JSON body); an incomplete call is counted with its whole max_tokens.
export type CallOutcome = { usage: CallUsage; model: string | null; complete: boolean };

export type Admission =
  | { ok: true; call: number; body: Buffer; lowered: { from: number; to: number } | null }
  | { ok: false; reason: string };

type InFlight = { price: Price; model: string | null; maxTokens: number; worstUsd: number };

// Pure: what the proxy reads from a call's body. Cache: the dearest write the body names.
export function planOf(body: Record<string, any>, raw: Buffer, price: Price): CallPlan | string {
  const maxTokens = body.max_tokens;
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) return `Expected \`max_tokens\` to be a whole number above 0, got ${JSON.stringify(maxTokens)}`;
  const t = body.thinking;
  const thinkingBudget = t && typeof t === 'object' && t.type === 'enabled' && Number.isSafeInteger(t.budget_tokens) ? t.budget_tokens : null;
  const cache = raw.includes('"1h"') && raw.includes('cache_control') ? '1h' : raw.includes('cache_control') ? '5m' : 'none';
  return { bodyBytes: raw.length, maxTokens, thinkingBudget, cache, price };
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
  // what is left, re-serialised so what we read is what the API reads), or why it may not go.
  admit(raw: Buffer): Admission {
    if (this.closed) return { ok: false, reason: this.closed };
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return { ok: false, reason: 'the request body is not JSON' };
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) return { ok: false, reason: 'the request body is not a JSON object' };
    const b = body as Record<string, any>;
    const model = typeof b.model === 'string' ? b.model : null;
    const price = this.priceFor(model);
    const plan = planOf(b, raw, price);
    if (typeof plan === 'string') return { ok: false, reason: plan };
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
        b.max_tokens = fit.maxTokens;
        if (fit.thinkingBudget !== plan.thinkingBudget) b.thinking.budget_tokens = fit.thinkingBudget;
      }
      // Always re-serialised under a cap: a duplicate key the API might read differently from
      // JSON.parse is gone. The CLI's own bodies are JSON.stringify's, so they come out the same.
      out = Buffer.from(JSON.stringify(b), 'utf8');
    }
    const call = this.next++;
    this.inflight.set(call, { price, model, maxTokens, worstUsd });
    try {
      this.persist?.(this.state());
    } catch (err) {
      // Fail closed: a call whose worst case could not be recorded does not go.
      this.inflight.delete(call);
      return { ok: false, reason: `the meter could not record the call (${(err as Error).message})` };
    }
    return { ok: true, call, body: out, lowered };
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
      const price = outcome.model && outcome.model !== c.model && !lookupPrice(c.model, this.o.prices).known ? this.priceFor(outcome.model) : c.price;
      const usage = outcome.complete ? outcome.usage : { ...outcome.usage, output: Math.max(outcome.usage.output, c.maxTokens) };
      usd = costAt(price, usage);
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
