import { counted, noun } from '../core/words.js';
// Pure: which agents wait, and until when, read from their last settled sessions (newest first).
// Two kinds: a rate limit holds the agent until the reset the API gave (or a backoff when it gave
// none); N failures in a row back it off exponentially, up to a cap. Nothing is stored for this
// but the ledger rows themselves, so a hold can never outlive what caused it.
export type HoldSettings = { afterFailures: number; baseMs: number; maxMs: number; rateLimitMs: number };
export type HoldRow = { id: string; outcome: string | null; started_at: string; ended_at: string | null; retry_at: string | null };
// host: the fleet's host whose ledger set it, when another host did (./fleet-holds.ts).
export type Hold = { kind: 'rate_limited' | 'backoff'; until: string; reason: string; failures: number; session: string; host?: string };

// Outcomes that are the agent's own failure. Neither a rate limit (the API's word, held apart),
// an abandoned session (the supervisor died) nor an interrupted one (a stop asked for) counts, and
// none breaks a streak.
const FAILURES = new Set(['error', 'max_turns', 'timeout', 'stalled', 'loop', 'budget', 'spawn_failed']);
const NEUTRAL = new Set(['rate_limited', 'abandoned', 'interrupted']);

const endOf = (r: HoldRow) => Date.parse(r.ended_at ?? r.started_at);
const clock = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

// Failures in a row at the top of `rows`, and the newest of them.
export function failureStreak(rows: HoldRow[]): { count: number; last: HoldRow | null } {
  let count = 0;
  let last: HoldRow | null = null;
  for (const r of rows) {
    if (NEUTRAL.has(r.outcome ?? '')) continue;
    if (!FAILURES.has(r.outcome ?? '')) break;
    count++;
    last ??= r;
  }
  return { count, last };
}

export function holdOf(rows: HoldRow[], now: Date, s: HoldSettings): Hold | null {
  const top = rows[0];
  if (top?.outcome === 'rate_limited') {
    let limited = 0;
    while (rows[limited]?.outcome === 'rate_limited') limited++;
    const given = top.retry_at ? Date.parse(top.retry_at) : NaN;
    const until = Number.isFinite(given) ? given : endOf(top) + Math.min(s.maxMs, s.rateLimitMs * 2 ** (limited - 1));
    if (until > now.getTime()) {
      const why = Number.isFinite(given) ? 'the API gave this reset time' : `no reset time given: backoff after ${limited} rate-limited ${noun(limited, 'session')}`;
      return { kind: 'rate_limited', until: clock(new Date(until).toISOString()), reason: `rate limited (${why})`, failures: limited, session: top.id };
    }
  }
  const streak = failureStreak(rows);
  if (streak.count >= s.afterFailures && streak.last) {
    const until = endOf(streak.last) + Math.min(s.maxMs, s.baseMs * 2 ** (streak.count - s.afterFailures));
    if (until > now.getTime()) {
      return { kind: 'backoff', until: clock(new Date(until).toISOString()), reason: `backed off after ${counted(streak.count, 'failure')} in a row (last: ${streak.last.outcome})`, failures: streak.count, session: streak.last.id };
    }
  }
  return null;
}

// Every agent's hold, for dispatch, `next` and `status`.
export function holdsOf(byAgent: Record<string, HoldRow[]>, now: Date, s: HoldSettings): Record<string, Hold> {
  const out: Record<string, Hold> = {};
  for (const [agent, rows] of Object.entries(byAgent)) {
    const h = holdOf(rows, now, s);
    if (h) out[agent] = h;
  }
  return out;
}

// Pure: an agent's rows on this host and the sessions other hosts of the fleet ran of it, as one
// history newest first, so a failure streak counts every host's failures (alternating hosts, each
// host's own streak would reach the backoff only after twice the failures). Another host's rate
// limit is left out: its own hold, with the reset the API gave, is shared (./fleet-holds.ts), and
// here it would read as one without a reset time.
export function withFleetRows(local: Record<string, HoldRow[]>, others: Record<string, HoldRow[]>): Record<string, HoldRow[]> {
  const out = { ...local };
  for (const [agent, rows] of Object.entries(others)) {
    const kept = rows.filter((r) => r.outcome !== 'rate_limited');
    if (kept.length) out[agent] = [...(out[agent] ?? []), ...kept].sort((a, b) => endOf(b) - endOf(a));
  }
  return out;
}

// This host's holds with the ones other hosts of the fleet set: of an agent held on both, the
// longer wait.
export function withFleetHolds(local: Record<string, Hold>, fleet: Record<string, Hold>): Record<string, Hold> {
  const out = { ...local };
  for (const [agent, h] of Object.entries(fleet)) {
    if (!out[agent] || Date.parse(h.until) > Date.parse(out[agent].until)) out[agent] = h;
  }
  return out;
}

// What a just-settled session (rows[0]) changed: the backoff began, or the agent recovered from
// one. Each happens on exactly one session, so the operator hears of it once.
export function backoffChange(rows: HoldRow[], s: HoldSettings): { change: 'started' | 'recovered'; failures: number } | null {
  if (!rows.length) return null;
  const after = failureStreak(rows).count;
  const before = failureStreak(rows.slice(1)).count;
  if (after >= s.afterFailures && before < s.afterFailures) return { change: 'started', failures: after };
  if (rows[0].outcome === 'ok' && before >= s.afterFailures) return { change: 'recovered', failures: before };
  return null;
}
