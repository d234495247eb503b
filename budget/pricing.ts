// The price table nightshift owns, in USD per million tokens, so the meter (the API proxy) never
// depends on the CLI's own table: a model renamed behind a gateway is priced by `budget.prices`,
// and an unknown one at the dearest price we know (a cap that holds must not price it low).
// Cache writes cost 1.25x input (5-minute) or 2x (1-hour), cache reads 0.1x; a web search is
// $10 per thousand.
export type Price = { input: number; output: number; cache_write: number; cache_write_1h: number; cache_read: number };
// What the config may give per model: input and output, the cache prices derived unless set.
export type PriceInput = { input: number; output: number; cache_write?: number; cache_write_1h?: number; cache_read?: number };
// `budget.prices`: a model id, or a part of one (`opus`, `my-gateway-model`), to its price.
export type PriceOverrides = Record<string, PriceInput>;

export const WEB_SEARCH_USD = 0.01;

export function price(p: PriceInput): Price {
  return { input: p.input, output: p.output, cache_write: p.cache_write ?? p.input * 1.25, cache_write_1h: p.cache_write_1h ?? p.input * 2, cache_read: p.cache_read ?? p.input * 0.1 };
}

// Most specific first: the older, dearer generations before the family's current price (the
// CLI 2.1.197 charges opus 5/25, sonnet 3/15, haiku 1/5).
const TABLE: Array<[RegExp, Price]> = [
  [/claude-3-haiku/i, price({ input: 0.25, output: 1.25 })],
  [/claude-3-5-haiku|claude-haiku-3-5/i, price({ input: 0.8, output: 4 })],
  [/haiku/i, price({ input: 1, output: 5 })],
  [/sonnet/i, price({ input: 3, output: 15 })],
  [/claude-3-opus|claude-opus-4-0|claude-opus-4-1|claude-opus-4-2025|claude-opus-4$/i, price({ input: 15, output: 75 })],
  [/opus/i, price({ input: 5, output: 25 })],
];
// An unknown model: the dearest row above.
export const UNKNOWN_PRICE: Price = price({ input: 15, output: 75 });

// source: where the price came from (the operator's budget.prices, our table, or neither).
export type PriceLookup = { price: Price; known: boolean; source: 'config' | 'table' | 'unknown' };

// Pure: a model's price: an exact key of `overrides`, then the longest key it contains, then the
// table, else UNKNOWN_PRICE (known: false, so the caller can say so once).
export function lookupPrice(model: string | null | undefined, overrides: PriceOverrides = {}): PriceLookup {
  const m = (model ?? '').toLowerCase();
  if (m) {
    const keys = Object.keys(overrides);
    const exact = keys.find((k) => k.toLowerCase() === m);
    const part = exact ?? keys.filter((k) => m.includes(k.toLowerCase())).sort((a, b) => b.length - a.length)[0];
    if (part !== undefined) return { price: price(overrides[part]), known: true, source: 'config' };
    for (const [re, p] of TABLE) if (re.test(m)) return { price: p, known: true, source: 'table' };
  }
  return { price: UNKNOWN_PRICE, known: false, source: 'unknown' };
}

// The stream tracker's estimate: the CLI's own prices (anything unknown as opus), for the live line.
export function priceOf(model: string | null | undefined): Price {
  const r = lookupPrice(model);
  return r.known ? r.price : price({ input: 5, output: 25 });
}

// cacheWrite1h: the part of cacheWrite written for an hour (the API's cache_creation breakdown).
export type CallUsage = { input: number; cacheWrite: number; cacheRead: number; output: number; cacheWrite1h?: number; webSearches?: number };

// Pure: what a call cost at price `p`.
export function costAt(p: Price, u: CallUsage): number {
  const hour = Math.min(u.cacheWrite1h ?? 0, u.cacheWrite);
  const tokens = u.input * p.input + (u.cacheWrite - hour) * p.cache_write + hour * p.cache_write_1h + u.cacheRead * p.cache_read + u.output * p.output;
  return tokens / 1e6 + (u.webSearches ?? 0) * WEB_SEARCH_USD;
}

export function costOf(model: string | null | undefined, u: CallUsage): number {
  return costAt(priceOf(model), u);
}

// Fast mode (`speed: "fast"`), a multiplier on every rate of the model. Published per model:
// Opus 4.6 and 4.7 at 6x ($30/$150 against $5/$25), Opus 4.8 and Opus 5 at 2x (Anthropic's fast
// mode page, platform.claude.com/docs/en/build-with-claude/fast-mode, as the gateways quote it).
// A model not named here is refused fast mode: its multiplier is not known.
const FAST: Array<[RegExp, number]> = [
  [/opus-4-[67](?![0-9])/i, 6],
  [/opus-4-8(?![0-9])/i, 2],
  [/opus-5(-\d{8})?$/i, 2],
];
// Data residency (`inference_geo: "us"`): 1.1x every rate (platform.claude.com/docs/en/manage-
// claude/data-residency; "A 1.1x pricing multiplier applies"). "global" is the standard price.
export const US_GEO_MULTIPLIER = 1.1;
// Long context: a call whose input passes 200k tokens is billed 2x input (and cache) and 1.5x
// output for the whole call (platform.claude.com/docs/en/about-claude/pricing, long context
// pricing). Applied to every model past 200k: a model without the 1M window refuses such a
// call, so the surcharge can only over-price.
export const LONG_CONTEXT_TOKENS = 200_000;
export const LONG_CONTEXT_INPUT = 2;
export const LONG_CONTEXT_OUTPUT = 1.5;

// What raises a call's price beyond the model's row, as the body names it.
export type PriceFeatures = { speed?: unknown; inferenceGeo?: unknown };
// inputMultiplier applies to input and every cache rate; outputMultiplier to output.
export type Surcharge = { inputMultiplier: number; outputMultiplier: number; names: string[] };

// Pure: the multipliers a call's features put on its price, or why it may not go. Unknown values
// are refused: a feature we cannot price must not pass at the standard rate.
export function surchargeFor(model: string | null | undefined, f: PriceFeatures): Surcharge | { refuse: string } {
  let m = 1;
  const names: string[] = [];
  if (f.speed !== undefined && f.speed !== null && f.speed !== 'standard') {
    if (f.speed !== 'fast') return { refuse: `\`speed\` ${JSON.stringify(f.speed)} is not one the meter can price (only "standard", or "fast" on a model whose fast price is published)` };
    const row = FAST.find(([re]) => re.test(model ?? ''));
    if (!row) return { refuse: `fast mode (\`speed: "fast"\`) on model ${JSON.stringify(model)}: the meter knows no published fast-mode multiplier for it, so the cap cannot bound it (turn fast mode off)` };
    m *= row[1];
    names.push(`fast ${row[1]}x`);
  }
  if (f.inferenceGeo !== undefined && f.inferenceGeo !== null && f.inferenceGeo !== 'global') {
    if (f.inferenceGeo !== 'us') return { refuse: `\`inference_geo\` ${JSON.stringify(f.inferenceGeo)} is not one the meter can price ("global" or "us")` };
    m *= US_GEO_MULTIPLIER;
    names.push(`inference_geo us ${US_GEO_MULTIPLIER}x`);
  }
  return { inputMultiplier: m, outputMultiplier: m, names };
}

// Pure: a price with a surcharge, and with the long-context rates when `inputTokens` passes
// LONG_CONTEXT_TOKENS.
export function surcharged(p: Price, s: Pick<Surcharge, 'inputMultiplier' | 'outputMultiplier'>, inputTokens: number): Price {
  const long = inputTokens > LONG_CONTEXT_TOKENS;
  const i = s.inputMultiplier * (long ? LONG_CONTEXT_INPUT : 1);
  const o = s.outputMultiplier * (long ? LONG_CONTEXT_OUTPUT : 1);
  return { input: p.input * i, output: p.output * o, cache_write: p.cache_write * i, cache_write_1h: p.cache_write_1h * i, cache_read: p.cache_read * i };
}

// Pure: what a call cost at price `p` with its surcharge, long context judged from the input the
// usage reports (fresh, cache written and read).
export function costWith(p: Price, s: Pick<Surcharge, 'inputMultiplier' | 'outputMultiplier'>, u: CallUsage): number {
  const webSearch = (u.webSearches ?? 0) * WEB_SEARCH_USD;
  return costAt(surcharged(p, s, u.input + u.cacheWrite + u.cacheRead), { ...u, webSearches: 0 }) + webSearch;
}
