// Settles sessions a dead supervisor left open: still counted, marked `abandoned`. Their CLI may
// still be running (a SIGKILLed supervisor cannot take it down), so it is ended first.
import type { Ledger } from '../../budget/ledger.js';
import type { Logger } from '../../logs/logger.js';
import { killSession, isAlive, withMarker, readProc } from '../../core/process-tree.js';

export async function reconcile(ledger: Ledger, deps: { logger: Logger; now: () => Date }): Promise<string[]> {
  const settled: string[] = [];
  for (const row of ledger.orphans(isAlive)) {
    // The recorded child (the subreaper) still holds every descendant, env-cleared ones included;
    // its pid counts only while it still carries this session's marker (pids are reused).
    const child = row.child_pid && readProc(row.child_pid) && withMarker(row.id, [readProc(row.child_pid)!]).length ? row.child_pid : null;
    const killed = await killSession(child, row.id, 1000);
    ledger.abandon(row, deps.now());
    deps.logger.warn({ event: 'session_abandoned', sessionId: row.id, agent: row.agent, killed, cost_usd: row.cost_usd }, `settled ${row.id} as abandoned`);
    settled.push(row.id);
  }
  return settled;
}
