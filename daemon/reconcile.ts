// Settles sessions a dead supervisor left open: still counted, marked `abandoned`. Their CLI may
// still be running (a SIGKILLed supervisor cannot take it down), so it is ended first.
import type { Ledger } from '../budget/ledger.js';
import type { Logger } from '../logs/logger.js';
import { isAlive, killSession } from '../sessions/process-tree.js';

export async function reconcile(ledger: Ledger, deps: { logger: Logger; now: () => Date }): Promise<string[]> {
  const settled: string[] = [];
  for (const row of ledger.orphans(isAlive)) {
    const killed = await killSession(null, row.id, 1000);
    ledger.abandon(row, deps.now());
    deps.logger.warn({ event: 'session_abandoned', sessionId: row.id, agent: row.agent, killed, cost_usd: row.cost_usd }, `settled ${row.id} as abandoned`);
    settled.push(row.id);
  }
  return settled;
}
