// Settles sessions a dead supervisor left open: still counted, marked `abandoned`. Their CLI may
// still be running (a SIGKILLed supervisor cannot take it down), so it is ended first.
import { Ledger } from '../../budget/ledger.js';
import { canWrite } from '../../core/file-access.js';
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

// The ledger for a look (status, sessions, state…): read-only, so a look never makes or takes a
// file (root's status once made state/ledger.db root's, and every tick of the service user then
// died on it); no file yet is an empty ledger in memory. An older file's columns, or sessions a
// dead supervisor left running, are written first only where the file is ours to write (else the
// site's next tick does it). Root may: SQLite gives the -wal and -shm it makes to the file's owner.
export async function lookAtLedger(file: string, deps: { logger: Logger; now: () => Date }): Promise<Ledger> {
  const ledger = Ledger.look(file);
  if (ledger.empty || (ledger.current() && !ledger.orphans(isAlive).length) || !canWrite(file)) return ledger;
  ledger.close();
  const writer = Ledger.open(file);
  try {
    await reconcile(writer, deps);
  } catch (err) {
    writer.close();
    throw err;
  }
  return writer;
}
