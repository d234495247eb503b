// A command's look at the ledger: opened, what a dead supervisor left open settled first, closed.
import type { Ledger } from '../budget/ledger.js';
import type { Logger } from '../logs/logger.js';
import type { Config } from '../config/schema.js';
import { reconcile } from '../daemon/tick/reconcile.js';

export async function withLedger<T>(config: Config, logger: Logger, fn: (l: Ledger) => T | Promise<T>): Promise<T> {
  const { Ledger, ledgerFile } = await import('../budget/ledger.js');
  const ledger = Ledger.open(ledgerFile(config));
  try {
    await reconcile(ledger, { logger, now: () => new Date() });
    return await fn(ledger);
  } finally {
    ledger.close();
  }
}
