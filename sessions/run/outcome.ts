// Pure classification of how a session ended. Our own stop reasons (watchdog, loop, cost
// ceiling) win over what the CLI said after we interrupted it. An API failure arrives as
// `subtype: success` with `is_error: true`, so `is_error` decides, never `subtype` alone.
import type { ResultMessage } from '../stream/types.js';
import { isDiskFull } from '../../config/disk-space.js';
import type { UpstreamLimit } from '../../budget/upstream-limit.js';
import { counted } from '../../core/words.js';

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
  // A 429 the stream reports is an error here: only the proxy's own relay of one makes a session
  // rate_limited (checkedByProxy), since the stream is the session's to write.
  if (r.is_error) {
    const status = r.api_error_status ? `API error ${r.api_error_status}: ` : '';
    const text = r.result ?? (r.errors ?? []).join('; ') ?? r.subtype;
    return { outcome: 'error', error: `${status}${text || r.subtype}` };
  }
  return { outcome: 'ok', error: null };
}

// What the supervisor itself saw of a session's inference calls, at its API proxy: how many the
// API answered, how the last one ended (its stop_reason; null when it did not say), and the last
// limit it relayed from upstream (a 429, 529 or a rejected window, with the reset its headers gave)
// when no answer came after it.
export type ProxySeen = { answered: number; lastStop: string | null; limited?: UpstreamLimit | null };

// outcome and error for the ledger; turns: the session's model turns (the stream's count, never
// more than the proxy saw answered); calls: what the proxy saw answered, kept beside them;
// retryAt: when a rate_limited session's hold ends, from the upstream's headers (null: unsaid);
// disagreements: where the stream claims what the proxy did not see (each one is warned about).
export type Checked = { outcome: Outcome; error: string | null; turns: number; calls: number | null; retryAt: string | null; disagreements: string[] };

// What the stream says beside its result: its turn count and whether it reports the API refusing us
// for a limit (its api_error_status, its text, its rate_limit_event). Never believed alone.
// turns: the stream's count as kept (capped at the answers it showed); claimed: what its result line
// says, which a forger may raise (the disagreement names it).
export type StreamSays = { turns: number; claimed?: number; limited: boolean };

// Pure: the outcome, turns and hold the ledger keeps. The stream is the session's to write (a tool
// that reaches the CLI's stdout writes any result it likes; a tool that takes the API socket's
// name answers the CLI a 429 of its own), so what the proxy saw decides:
// - rate_limited only when the proxy relayed a limit from upstream and the session then ended in
//   an error (the CLI gave up on it), with the reset the upstream's headers gave; a stream that
//   reports a limit the proxy never relayed is an error, and that is a disagreement;
// - an `ok` is not taken from a session whose API never answered, or whose last answer asked for
//   a tool (the CLI runs it and calls again; a final answer comes from the API, not from a tool);
// - turns are the stream's model turns, capped at the calls the proxy saw answered; a stream that
//   claims more is a disagreement, one that counts fewer is not (the CLI makes calls of its own:
//   2.1.197 one more on a one-turn answer), and a result not believed gives the proxy's count.
// That rests on every call the proxy answers being the CLI's: walled, the bridge pipes the API's
// socket for the CLI's own pid alone (sessions/wall/bridge.ts), so a tool cannot make the last
// call itself (e2e/wall-redteam). `seen` null: no proxy view is kept (unwalled), the stream's own
// turns; `limit`: the proxy's limit, kept walled or not (the proxy relays every call either way).
export function checkedByProxy(c: { outcome: Outcome; error: string | null }, stream: StreamSays, seen: ProxySeen | null, limit: UpstreamLimit | null = seen?.limited ?? null): Checked {
  const disagreements: string[] = [];
  let { outcome, error } = c;
  let retryAt: string | null = null;
  if (limit && outcome === 'error') {
    outcome = 'rate_limited';
    retryAt = limit.retry_at;
    const what = `the API answered ${limit.status}${limit.rejected ? ' (usage window rejected)' : ''}`;
    error = `${what}${limit.retry_at ? `, until ${limit.retry_at}` : ', no reset time given'}${error ? ` (${error})` : ''}`;
  } else if (stream.limited && !limit && outcome === 'error') {
    disagreements.push('the stream says the API refused the session for a limit, but the proxy relayed no such answer');
  }
  if (!seen) return { outcome, error, turns: stream.turns, calls: null, retryAt, disagreements };
  let believed = true;
  if (outcome === 'ok' && (seen.answered === 0 || seen.lastStop === 'tool_use')) {
    const why = seen.answered === 0 ? 'the API answered no call' : 'the last call the API answered asked for a tool';
    disagreements.push(`the stream says the session ended ok, but ${why}`);
    outcome = 'error';
    error = `the stream's result is not believed: ${why} (the stream said ok)`;
    believed = false;
  }
  const claimed = Math.max(stream.turns, stream.claimed ?? 0);
  if (claimed > seen.answered) disagreements.push(`the stream says ${counted(claimed, 'turn')}, more than the ${counted(seen.answered, 'call')} the proxy saw answered`);
  const turns = believed ? Math.min(stream.turns, seen.answered) : seen.answered;
  return { outcome, error, turns, calls: seen.answered, retryAt, disagreements };
}
