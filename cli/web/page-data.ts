// What the status page shows, gathered through the functions the --json commands use: status
// (status --json), budgetReport per day (budget --days N --json), readFires (fires --json), the
// ledger's list (sessions --json), show's record and transcript, the store's stats (memory stats).
import fs from 'node:fs';
import { dayOf } from '../../config/day.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logs/logger.js';
import { toRecord } from '../../budget/session-record.js';
import { budgetReport } from '../../daemon/tick/budget-report.js';
import { readFires, sessionTraces } from '../../daemon/tick/fires-view.js';
import { status, unpushedOf } from '../../daemon/tick/status.js';
import { fleetLook } from '../../daemon/tick/fleet-look.js';
import { timerTicks } from '../../daemon/schedule/timer-ticks.js';
import { openMemoryStore } from '../../memory/open.js';
import { daysEnding } from '../commands/budget.js';
import { renderTranscript } from '../transcript-view.js';
import { withLedger } from '../with-ledger.js';
import { FIRE_HOURS, type PageData } from './page.js';

export const SPEND_DAYS = 30;
export const SESSIONS = 50;

// redact: the page's words from the fleet's database (an outage's cause) pass through it.
export async function pageData(config: Config, o: { logger: Logger; env: NodeJS.ProcessEnv; redact: (t: string) => string; prefix?: string; now?: Date }): Promise<PageData> {
  const now = o.now ?? new Date();
  const tz = config.budget.timezone;
  const today = dayOf(now, tz);
  const timer = timerTicks(o.prefix, now, o.env.PATH);
  const past = (from: Date) => timerTicks(o.prefix, from, o.env.PATH).ticks;
  // The fleet (status --json's `fleet`; null without NIGHTSHIFT_DATABASE_URL), asked beside the ledger.
  const fleet = fleetLook(config, o.env, o.redact, now);
  const look = await withLedger(config, o.logger, async (l) => ({
    status: await status(config, l, now, timer, unpushedOf(config), past, undefined, fleet),
    days: daysEnding(today, SPEND_DAYS).map((d) => budgetReport(config, l, d)),
    month: daysEnding(today, Number(today.slice(8, 10))).map((d) => budgetReport(config, l, d)),
    sessions: l.list({ limit: SESSIONS }).map(toRecord),
  }));
  const fires = readFires(config, { since: new Date(now.getTime() - FIRE_HOURS * 3_600_000) }, now);
  // Each session's trace (telemetry on), from its fire's row.
  const traces = sessionTraces(config, look.sessions.map((s) => s.id));
  for (const s of look.sessions) s.trace_id = traces.get(s.id) ?? null;
  let memory: PageData['memory'];
  try {
    const store = await openMemoryStore(config, o.env, o.logger);
    try {
      memory = store.stats();
    } finally {
      store.close();
    }
  } catch (err) {
    memory = { error: (err as Error).message };
  }
  return { at: now.toISOString(), timezone: tz, ...look, fires, memory };
}

// One session (show --json) and its transcript as show --transcript renders it; null: no such id.
export async function sessionData(config: Config, id: string, logger: Logger): Promise<{ record: ReturnType<typeof toRecord>; transcript: string | null } | null> {
  const row = await withLedger(config, logger, (l) => l.get(id));
  if (!row) return null;
  const record = toRecord(row);
  record.trace_id = sessionTraces(config, [id]).get(id) ?? null;
  let transcript: string | null = null;
  if (record.transcript) {
    try {
      transcript = renderTranscript(fs.readFileSync(record.transcript, 'utf8'), { turns: record.turns });
    } catch (err) {
      transcript = `the transcript cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
    }
  }
  return { record, transcript };
}
