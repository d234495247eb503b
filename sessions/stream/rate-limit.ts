// Pure: does the stream say the API refused the session for a rate limit, an overload or a usage
// limit? The stream is the session's to write, so this is a claim, never an outcome: a session is
// rate_limited only when the API proxy relayed the limit itself (budget/upstream-limit.ts,
// sessions/run/outcome.ts checkedByProxy); a claim without it is a disagreement. The CLI says so
// three ways: the result's `api_error_status` (429 rate limit, 529 overloaded), its usage-limit text ("You've hit your session limit · resets 3pm (UTC)", or
// the older "Claude AI usage limit reached|<epoch seconds>"), and a `rate_limit_event` whose
// `rate_limit_info` has `status: "rejected"` and `resetsAt` (epoch seconds).
import type { ResultMessage } from './types.js';

export type RateLimitInfo = { status?: string; resetsAt?: number; rateLimitType?: string };

const LIMIT_STATUS = new Set([429, 529]);
// The CLI's own phrases for a subscription's limit (read from its bundle, 2.1.x).
const USAGE_TEXT = /usage limit reached|you've hit your [\w' -]*limit|you've reached your [\w' -]*limit|out of usage credits/i;

// Whether the stream says this result is the API refusing us.
export function isRateLimited(r: ResultMessage | null, info: RateLimitInfo | null = null): boolean {
  if (info?.status === 'rejected') return true;
  if (!r?.is_error) return false;
  if (typeof r.api_error_status === 'number' && LIMIT_STATUS.has(r.api_error_status)) return true;
  return USAGE_TEXT.test(`${r.result ?? ''} ${(r.errors ?? []).join(' ')}`);
}
