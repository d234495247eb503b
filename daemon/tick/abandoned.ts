// What a start owes a session a dead supervisor left behind, once reconcile has settled it
// `abandoned`: its Discord report (through the outbox, outcome `abandoned`) and what its transcript
// holds, captured into memory like any session's. Once per session: the ledger's `followed_up_at`
// is claimed before the capture, so a second start (or a concurrent one) does neither again. The
// report is queued before the claim; the outbox dedupes it by session id, so a start that dies in
// between leaves it queued once and the next start only captures. Never throws.
import type { Ledger, SessionRow } from '../../budget/ledger.js';
import type { Logger } from '../../logs/logger.js';
import type { Redactor } from '../../core/redact.js';
import type { MemoryStore } from '../../memory/store.js';
import type { DeliverDeps } from '../../report/deliver.js';
import type { Config } from '../../config/schema.js';
import { toRecord } from '../../budget/session-record.js';

export type FollowUpDeps = DeliverDeps & {
  logger: Logger;
  redact: Redactor;
  now: () => Date;
  // Injected in tests; by default the configured store.
  openStore?: () => Promise<MemoryStore>;
};

export async function followUpAbandoned(config: Config, ledger: Ledger, deps: FollowUpDeps): Promise<string[]> {
  const done: string[] = [];
  let rows: SessionRow[];
  try {
    rows = ledger.unfollowedAbandoned();
  } catch (err) {
    deps.logger.warn({ event: 'abandoned_follow_up_failed', err }, `abandoned sessions could not be read: ${(err as Error).message}`);
    return done;
  }
  if (!rows.length) return done;
  // Only owed work loads the report and capture machinery.
  const [{ reportSession }, { leaveBehind }] = await Promise.all([import('../../report/session-report.js'), import('../../sessions/capture/capture.js')]);
  for (const row of rows) {
    const log = deps.logger.child({ sessionId: row.id, agent: row.agent });
    try {
      const session = toRecord(row);
      await reportSession(config, { session, model: row.model, git: null, day: row.day, today: ledger.dayTotals(row.day) }, { ...deps, logger: log });
      if (!ledger.claimFollowUp(row.id, deps.now())) continue;
      if (row.transcript) {
        await leaveBehind({
          config, env: deps.env, transcript: row.transcript, logger: log, redact: deps.redact,
          session: { id: row.id, agent: row.agent, outcome: session.outcome, turns: row.turns, cost_usd: row.cost_usd, result: row.result, error: row.error },
          openStore: deps.openStore ?? (async () => (await import('../../memory/open.js')).openMemoryStore(config, deps.env, deps.logger)),
        });
      }
      log.info({ event: 'abandoned_followed_up' }, `abandoned session ${row.id}: reported and captured`);
      done.push(row.id);
    } catch (err) {
      log.warn({ event: 'abandoned_follow_up_failed', err }, `abandoned session ${row.id} could not be followed up: ${deps.redact((err as Error).message)}`);
    }
  }
  return done;
}
