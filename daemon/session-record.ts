// The one shape of a session as nightshift prints it (`run --json`, `sessions`, `show`).
import type { SessionRow } from '../budget/ledger.js';

export type SessionRecord = {
  id: string;
  agent: string;
  outcome: string;
  exit_code: number;
  cost_usd: number;
  cost_estimated: boolean;
  turns: number;
  duration_ms: number | null;
  started_at: string;
  ended_at: string | null;
  result: string | null;
  error: string | null;
  transcript: string | null;
  // 'unavailable': the session ran without its memory tools (the store could not be served).
  memory: 'served' | 'unavailable' | null;
};

export function toRecord(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    agent: r.agent,
    outcome: r.status === 'running' ? 'running' : (r.outcome ?? 'error'),
    exit_code: r.exit_code ?? (r.outcome === 'ok' ? 0 : 1),
    cost_usd: r.cost_usd,
    cost_estimated: r.cost_estimated === 1,
    turns: r.turns,
    duration_ms: r.duration_ms,
    started_at: r.started_at,
    ended_at: r.ended_at,
    result: r.result,
    error: r.error,
    transcript: r.transcript,
    memory: r.memory ?? null,
  };
}
