// The one shape of a session as nightshift prints it (`run --json`, `sessions`, `show`).
import type { SessionRow } from './ledger.js';
import { roundUsd } from '../core/money.js';

// Where a session's work went (vault/git-sync.ts fills it). `branch`: a nightshift/ branch that
// holds the work instead of main; `branch_pushed`: the remote has it. `left_out`: files kept out of
// the commit for their size. `untracked`: nightshift's own files taken out of the repository.
export type GitOutcome = {
  pulled: boolean; committed: boolean; pushed: boolean; branch: string | null; branch_pushed: boolean; error: string | null; uncommitted: boolean;
  left_out: Array<{ path: string; size: number; limit: 'commit_file' | 'commit_total' }>; untracked: string[];
};
// Nothing done yet: here, not in vault/git-sync.ts, so a tick with nothing due loads no git code.
export const emptyGitReport = (): GitOutcome => ({ pulled: false, committed: false, pushed: false, branch: null, branch_pushed: false, error: null, uncommitted: false, left_out: [], untracked: [] });

// Pure: the ledger's JSON back as an outcome; null when there is none or it does not read.
export function gitOutcomeOf(json: string | null | undefined): GitOutcome | null {
  if (!json) return null;
  try {
    const g = JSON.parse(json);
    if (!g || typeof g !== 'object') return null;
    return {
      pulled: g.pulled === true, committed: g.committed === true, pushed: g.pushed === true,
      branch: typeof g.branch === 'string' ? g.branch : null, branch_pushed: g.branch_pushed === true,
      error: typeof g.error === 'string' ? g.error : null, uncommitted: g.uncommitted === true,
      left_out: Array.isArray(g.left_out) ? g.left_out.filter((f: any) => f && typeof f.path === 'string') : [],
      untracked: Array.isArray(g.untracked) ? g.untracked.filter((f: unknown) => typeof f === 'string') : [],
    };
  } catch {
    return null;
  }
}

export type SessionRecord = {
  id: string;
  agent: string;
  outcome: string;
  exit_code: number;
  cost_usd: number;
  cost_estimated: boolean;
  // The CLI's own reported total, beside the meter's cost_usd (null: it reported none).
  cli_cost_usd: number | null;
  // What the charge reserved of the day (null: a session from before reservations).
  reserved_usd: number | null;
  // The session's model turns; api_calls: the calls its API proxy metered beside them (answered
  // or refused; the CLI makes calls of its own), null for a session from before the meter.
  turns: number;
  api_calls: number | null;
  duration_ms: number | null;
  started_at: string;
  ended_at: string | null;
  result: string | null;
  error: string | null;
  transcript: string | null;
  // 'unavailable': the session ran without its memory tools (the store could not be served).
  memory: 'served' | 'unavailable' | null;
  // A rate-limited session: when the API said the limit lifts.
  retry_at: string | null;
  // Connections the egress proxy refused; null: the agent has no network.
  egress_refused: number | null;
  // Connections to the API the wall refused (processes other than the CLI); null: unwalled.
  api_refused: number | null;
  // Where the work went; null: git sync off, not recorded yet, or a session before it was kept.
  git: GitOutcome | null;
  // Its fire's OpenTelemetry trace (from the fires table; absent or null: telemetry off).
  trace_id?: string | null;
};

export function toRecord(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    agent: r.agent,
    outcome: r.status === 'running' ? 'running' : (r.outcome ?? 'error'),
    exit_code: r.exit_code ?? (r.outcome === 'ok' ? 0 : 1),
    cost_usd: roundUsd(r.cost_usd),
    cost_estimated: r.cost_estimated === 1,
    cli_cost_usd: r.cli_cost_usd === null || r.cli_cost_usd === undefined ? null : roundUsd(r.cli_cost_usd),
    reserved_usd: r.reserved_usd === null || r.reserved_usd === undefined ? null : roundUsd(r.reserved_usd),
    turns: r.turns,
    api_calls: r.metered_calls ?? null,
    duration_ms: r.duration_ms,
    started_at: r.started_at,
    ended_at: r.ended_at,
    result: r.result,
    error: r.error,
    transcript: r.transcript,
    memory: r.memory ?? null,
    retry_at: r.retry_at ?? null,
    egress_refused: r.egress_refused ?? null,
    api_refused: r.api_refused ?? null,
    git: gitOutcomeOf(r.git),
  };
}
