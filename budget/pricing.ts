// Per-model prices in USD per million tokens, as the CLI 2.1.197 charges them (observed: opus
// 5/25, sonnet 3/15, haiku 1/5, anything unknown as opus). Cache writes cost 1.25x input and cache
// reads 0.1x. Used only when the CLI did not give us its own total.
export type Price = { input: number; output: number };

const TABLE: Array<[RegExp, Price]> = [
  [/haiku/i, { input: 1, output: 5 }],
  [/sonnet/i, { input: 3, output: 15 }],
  [/opus/i, { input: 5, output: 25 }],
];
const FALLBACK: Price = { input: 5, output: 25 };

export function priceOf(model: string | null | undefined): Price {
  for (const [re, p] of TABLE) if (model && re.test(model)) return p;
  return FALLBACK;
}

export type CallUsage = { input: number; cacheWrite: number; cacheRead: number; output: number };

export function costOf(model: string | null | undefined, u: CallUsage): number {
  const p = priceOf(model);
  return (u.input * p.input + u.cacheWrite * p.input * 1.25 + u.cacheRead * p.input * 0.1 + u.output * p.output) / 1e6;
}
