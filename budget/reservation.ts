// Pure: how much a session may spend, decided twice. At the charge it reserves what is left of the
// day (never more than its ceiling); before each API call the proxy fits the call's worst case
// into what is left of that reservation by lowering `max_tokens`, so the day's cap holds to within
// one request's input (the one quantity estimated rather than bounded).
import { exactMoney, money } from '../core/money.js';
import type { Price } from './pricing.js';

export type ReservationLimits = { maxUsdPerDay: number; maxUsdPerSession: number; minSessionUsd: number };
// costUsd: what today's sessions spent (settled, or metered so far); reservedUsd: what running
// ones hold beyond that.
export type Committed = { costUsd: number; reservedUsd: number };
export type Reservation = { ok: true; usd: number } | { ok: false; limit: 'max_usd_per_day'; reason: string };

// Sums of floats back to a millionth of a dollar, so $0.1 left is not $0.09999999999999998.
const micro = (usd: number) => Math.round(usd * 1e6) / 1e6;

// The smallest reservation worth a start: min_session_usd, never above the session's ceiling.
export function minimumReservation(l: ReservationLimits): number {
  return Math.min(l.minSessionUsd, l.maxUsdPerSession);
}

export function reservationFor(today: Committed, l: ReservationLimits): Reservation {
  const left = micro(l.maxUsdPerDay - today.costUsd - today.reservedUsd);
  const usd = micro(Math.min(l.maxUsdPerSession, left));
  const min = minimumReservation(l);
  if (usd < min) {
    const held = today.reservedUsd > 0 ? `, ${money(today.reservedUsd)} reserved by a running session` : '';
    return { ok: false, limit: 'max_usd_per_day', reason: `budget.max_usd_per_day: ${money(Math.max(0, left))} left of ${money(l.maxUsdPerDay)} today (${money(today.costUsd)} spent${held}), below budget.min_session_usd ${money(min)}` };
  }
  return { ok: true, usd };
}

// The smallest max_tokens the proxy lowers a call to; below it the call is refused.
export const MIN_MAX_TOKENS = 256;
// The API's smallest thinking budget: a thinking call needs max_tokens above it.
export const MIN_THINKING_TOKENS = 1024;
// Input is estimated from the body at a byte a third of a token (English runs near four, JSON
// and code near three): an over-estimate for everything but rare scripts.
export const BYTES_PER_TOKEN = 3;

// What the proxy reads from a call's body. cache: the dearest cache write it asks for; media:
// the bound on its images and PDF pages (budget/media-tokens.ts) and the base64 bytes they take
// in the body, which are then not counted as text.
// server: what its server tools add (budget/server-tools.ts): per-use fees, and their results'
// input tokens.
export type CallPlan = { bodyBytes: number; maxTokens: number; thinkingBudget: number | null; cache: 'none' | '5m' | '1h'; price: Price; media?: { tokens: number; bytes: number }; server?: { usd: number; tokens: number } };
export type Fit =
  | { action: 'forward'; maxTokens: number; thinkingBudget: number | null; worstUsd: number }
  | { action: 'refuse'; reason: string };

// Pure: the most input tokens a call can be billed: its text from its bytes, its media from
// their own bound.
export function inputWorstTokens(plan: Pick<CallPlan, 'bodyBytes' | 'media' | 'server'>): number {
  const m = plan.media ?? { tokens: 0, bytes: 0 };
  return Math.ceil(Math.max(0, plan.bodyBytes - m.bytes) / BYTES_PER_TOKEN) + m.tokens + (plan.server?.tokens ?? 0);
}

// Pure: the worst a call's input can cost (every token written to the dearest cache it names).
export function inputWorstUsd(plan: Pick<CallPlan, 'bodyBytes' | 'cache' | 'price' | 'media' | 'server'>): number {
  const p = plan.price;
  const rate = plan.cache === '1h' ? Math.max(p.input, p.cache_write_1h) : plan.cache === '5m' ? Math.max(p.input, p.cache_write) : p.input;
  return (inputWorstTokens(plan) * rate) / 1e6 + (plan.server?.usd ?? 0);
}

// Pure: the call as it may go upstream with `leftUsd` left of the reservation: unchanged when its
// worst case fits, with max_tokens (and a thinking budget above it) lowered when a floor of
// MIN_MAX_TOKENS still fits, else refused.
export function fitCall(plan: CallPlan, leftUsd: number): Fit {
  const input = inputWorstUsd(plan);
  const perOutput = plan.price.output / 1e6;
  const worst = (maxTokens: number) => input + maxTokens * perOutput;
  if (worst(plan.maxTokens) <= leftUsd) return { action: 'forward', maxTokens: plan.maxTokens, thinkingBudget: plan.thinkingBudget, worstUsd: worst(plan.maxTokens) };
  // A millionth of a token of slack: float division must not cost a whole token.
  const room = Math.floor((leftUsd - input) / perOutput + 1e-6);
  const floor = plan.thinkingBudget !== null ? MIN_THINKING_TOKENS + 1 : MIN_MAX_TOKENS;
  if (room < floor) {
    return { action: 'refuse', reason: `the session's budget reservation has ${exactMoney(Math.max(0, leftUsd))} left, and this call's worst case (${exactMoney(input)} of input for ${plan.bodyBytes} bytes${plan.media?.tokens ? `, ${plan.media.tokens} tokens of it images and PDF pages` : ''}${plan.server ? `, ${exactMoney(plan.server.usd)} and ${plan.server.tokens} tokens of it server tools` : ''}, then ${floor} output tokens) is ${exactMoney(worst(floor))}` };
  }
  const thinkingBudget = plan.thinkingBudget !== null && plan.thinkingBudget >= room ? room - 1 : plan.thinkingBudget;
  return { action: 'forward', maxTokens: room, thinkingBudget, worstUsd: worst(room) };
}
