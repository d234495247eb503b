// A command's look at the ledger (daemon/tick/reconcile.ts lookAtLedger): read-only, no file made
// where there is none, what a dead supervisor left open settled first where we may; closed.
import type { Ledger } from '../budget/ledger.js';
import type { Logger } from '../logs/logger.js';
import type { Config } from '../config/schema.js';

export async function withLedger<T>(config: Config, logger: Logger, fn: (l: Ledger) => T | Promise<T>): Promise<T> {
  const [{ ledgerFile }, { lookAtLedger }] = await Promise.all([import('../budget/ledger.js'), import('../daemon/tick/reconcile.js')]);
  const ledger = await lookAtLedger(ledgerFile(config), { logger, now: () => new Date() });
  try {
    return await fn(ledger);
  } finally {
    ledger.close();
  }
}
