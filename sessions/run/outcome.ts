// Pure classification of how a session ended. Our own stop reasons (watchdog, loop, cost
// ceiling) win over what the CLI said after we interrupted it. An API failure arrives as
// `subtype: success` with `is_error: true`, so `is_error` decides, never `subtype` alone.
import { isRateLimited, type RateLimitInfo } from '../stream/rate-limit.js';
import type { ResultMessage } from '../stream/types.js';
import { isDiskFull } from '../../config/disk-space.js';

export const OUTCOMES = ['ok', 'error', 'max_turns', 'timeout', 'stalled', 'loop', 'budget', 'spawn_failed', 'abandoned', 'rate_limited', 'interrupted', 'disk_full'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type StopReason = 'timeout' | 'stalled' | 'loop' | 'budget' | 'canceled' | 'internal' | 'bound' | 'disk_full';

export type Ending = {
  spawnError: string | null;
  stopReason: StopReason | null;
  stopDetail?: string | null;
  result: ResultMessage | null;
  exitCode: number | null;
  signal: string | null;
  // The stream's last rate_limit_event, when the CLI sent one.
  rateLimit?: RateLimitInfo | null;
};

export function classify(e: Ending): { outcome: Outcome; error: string | null } {
  if (e.spawnError) return { outcome: 'spawn_failed', error: e.spawnError };
  // The operator's Ctrl-C or the service manager's stop: not the agent's failure. A run lock taken
  // from us is no one's request: an error.
  if (e.stopReason === 'canceled') {
    const detail = e.stopDetail ?? 'signal';
    return /^lock .* lost$/.test(detail) ? { outcome: 'error', error: `ended because nightshift's ${detail}` } : { outcome: 'interrupted', error: `ended because nightshift was asked to stop (${detail})` };
  }
  // One of nightshift's own steps failed mid-session (a full disk under the transcript, say).
  // A full disk under one of our writes (the transcript, the ledger) is the disk's, said as such.
  if (e.stopReason === 'internal') {
    const detail = e.stopDetail ?? 'unknown';
    return isDiskFull(detail) ? { outcome: 'disk_full', error: `a disk nightshift writes is full: ${detail}` } : { outcome: 'error', error: `internal: ${detail}` };
  }
  // A bound of limits (pids, memory) the session reached: the agent's failure, said by name.
  if (e.stopReason === 'bound') return { outcome: 'error', error: e.stopDetail ?? 'a bound of limits was reached' };
  if (e.stopReason) return { outcome: e.stopReason, error: e.stopDetail ?? null };
  const r = e.result;
  if (!r) {
    const how = e.signal ? `signal ${e.signal}` : `exit code ${e.exitCode}`;
    return { outcome: 'error', error: `the CLI ended (${how}) without a result line` };
  }
  if (r.subtype === 'error_max_turns' || r.terminal_reason === 'max_turns') return { outcome: 'max_turns', error: (r.errors ?? []).join('; ') || null };
  if (r.subtype === 'error_max_budget_usd') return { outcome: 'budget', error: (r.errors ?? []).join('; ') || null };
  // The API refused us (429, 529 or a usage limit): not the agent's failure, and it has a hold.
  if (isRateLimited(r, e.rateLimit ?? null)) {
    const status = r.api_error_status ? `API error ${r.api_error_status}: ` : '';
    return { outcome: 'rate_limited', error: `${status}${r.result ?? (r.errors ?? []).join('; ') ?? r.subtype}` };
  }
  if (r.is_error) {
    const status = r.api_error_status ? `API error ${r.api_error_status}: ` : '';
    const text = r.result ?? (r.errors ?? []).join('; ') ?? r.subtype;
    return { outcome: 'error', error: `${status}${text || r.subtype}` };
  }
  return { outcome: 'ok', error: null };
}

// What the supervisor itself saw of a session's inference calls, at its API proxy: how many the
// API answered, and how the last one ended (its stop_reason; null when it did not say).
export type ProxySeen = { answered: number; lastStop: string | null };

export type Checked = { outcome: Outcome; error: string | null; turns: number; disagreements: string[] };

// Pure: the outcome and turns the ledger keeps. The stream is the session's to write (a tool that
// reaches the CLI's stdout writes any result it likes), so where the proxy saw otherwise the
// proxy's view wins and each difference is named: turns are the calls it saw answered, and an
// `ok` is not taken from a session whose API never answered, or whose last answer asked for a
// tool (the CLI runs it and calls again; a final answer comes from the API, not from a tool).
// That rests on every call the proxy answers being the CLI's: walled, the bridge pipes the API's
// socket for the CLI's own pid alone (sessions/wall/bridge.ts), so a tool cannot make the last
// call itself (e2e/wall-redteam).
export function checkedByProxy(c: { outcome: Outcome; error: string | null }, streamTurns: number, seen: ProxySeen | null): Checked {
  if (!seen) return { ...c, turns: streamTurns, disagreements: [] };
  const disagreements: string[] = [];
  if (seen.answered !== streamTurns) disagreements.push(`the stream says ${streamTurns} turn(s), the proxy saw ${seen.answered} call(s) answered`);
  let { outcome, error } = c;
  if (outcome === 'ok' && (seen.answered === 0 || seen.lastStop === 'tool_use')) {
    const why = seen.answered === 0 ? 'the API answered no call' : 'the last call the API answered asked for a tool';
    disagreements.push(`the stream says the session ended ok, but ${why}`);
    outcome = 'error';
    error = `the stream's result is not believed: ${why} (the stream said ok)`;
  }
  return { outcome, error, turns: seen.answered, disagreements };
}
