// Pure: whether an upstream reply the API proxy relayed is the API refusing us for a limit (a 429, a
// 529 overloaded, or a subscription's usage window `rejected`), and when it said to come back, read
// from its own headers. This is the only source of a `rate_limited` outcome and its `retry_at`: the
// CLI's stream and text are the session's to write (a tool that takes the API socket's name can
// answer the CLI a 429 of its own), the proxy's upstream reply is not.

// status: the HTTP status relayed; retry_at: ISO time, null when no header said; source: which
// header gave it.
export type UpstreamLimit = { status: number; rejected: boolean; retry_at: string | null; source: string | null };

const LIMIT_STATUS = new Set([429, 529]);
// The per-minute limits an API key has: the one whose remaining is 0 is the one that refused.
const KEY_LIMITS = ['requests', 'tokens', 'input-tokens', 'output-tokens'];
// No reset is believed further away than the longest window the API has (7 days) and a day more.
export const LIMIT_HORIZON_MS = 8 * 24 * 3600_000;

const num = (v: string | undefined) => (v === undefined || v.trim() === '' ? NaN : Number(v));

// `get` reads one header (lower-case name); null when the reply is no limit.
export function upstreamLimit(status: number, get: (name: string) => string | undefined, now: Date): UpstreamLimit | null {
  const rejected = get('anthropic-ratelimit-unified-status')?.trim().toLowerCase() === 'rejected';
  if (!LIMIT_STATUS.has(status) && !rejected) return null;
  const found: Array<{ at: number; source: string }> = [];
  const after = (ms: number, source: string) => Number.isFinite(ms) && ms > now.getTime() && found.push({ at: ms, source });
  // retry-after: seconds, or an HTTP date.
  const ra = get('retry-after');
  if (ra !== undefined) {
    const s = num(ra);
    after(Number.isFinite(s) ? now.getTime() + s * 1000 : Date.parse(ra), 'retry-after');
  }
  // A subscription's window: epoch seconds (the CLI reads them so).
  const unified = num(get('anthropic-ratelimit-unified-reset'));
  if (Number.isFinite(unified) && unified > 0) after(unified < 1e12 ? unified * 1000 : unified, 'anthropic-ratelimit-unified-reset');
  for (const k of KEY_LIMITS) {
    if (num(get(`anthropic-ratelimit-${k}-remaining`)) !== 0) continue;
    const reset = get(`anthropic-ratelimit-${k}-reset`);
    if (reset !== undefined) after(Date.parse(reset), `anthropic-ratelimit-${k}-reset`);
  }
  // The latest of what was said: coming back at the earliest would meet the other limit still on.
  const latest = found.filter((f) => f.at - now.getTime() <= LIMIT_HORIZON_MS).sort((a, b) => b.at - a.at)[0];
  return { status, rejected, retry_at: latest ? new Date(latest.at).toISOString() : null, source: latest?.source ?? null };
}
