// A dream as a dispatch outcome of its own: when no session is due and the memory is under
// pressure, the tick dreams instead, under the run lock it already holds (so a dream never
// overlaps a session), and logs and reports it like a session.
import fs from 'node:fs';
import { memoryDbPath } from '../../memory/store/db-path.js';
import { dreamReason } from '../../memory/dream/pressure.js';
import type { Config } from '../../config/schema.js';
import type { DreamOutcome, RunDeps } from './types.js';

// Why the tick should dream now, or null. No memory file yet: nothing to dream about, and the
// store's modules are never loaded on a tick with nothing due.
export async function dreamDue(config: Config, deps: RunDeps, now: Date): Promise<string | null> {
  if (!fs.existsSync(memoryDbPath(config))) return null;
  try {
    // Read on its own first: the whole store (and its embedder) loads only when that cannot be.
    const { readDreamPressure } = await import('../../memory/store/pressure.js');
    const pressure = readDreamPressure(memoryDbPath(config)) ?? (await storePressure(config, deps));
    return dreamReason(pressure, now, { after: config.memory.dream_after, everyMs: config.memory.dream_every });
  } catch (err) {
    // A store that cannot be opened is doctor's to report; the tick just does not dream.
    deps.logger.warn({ event: 'dream_pressure_failed', err }, `memory pressure unknown: ${(err as Error).message}`);
    return null;
  }
}

async function storePressure(config: Config, deps: RunDeps) {
  const { openMemoryStore } = await import('../../memory/open.js');
  const store = await openMemoryStore(config, deps.env, deps.logger);
  try {
    return store.dreamPressure();
  } finally {
    store.close();
  }
}


export async function superviseDream(config: Config, reason: string, deps: RunDeps): Promise<DreamOutcome> {
  const id = `dream-${deps.now().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`;
  const log = deps.logger.child({ dreamId: id });
  log.info({ event: 'dream_start', reason }, `dreaming: ${reason}`);
  let outcome: DreamOutcome;
  try {
    const [{ openMemoryStore }, { dreamWithConfig }] = await Promise.all([import('../../memory/open.js'), import('../../memory/dream/dream-run.js')]);
    const store = await openMemoryStore(config, deps.env, deps.logger);
    try {
      const report = await dreamWithConfig(store, config, deps.env, { actor: { surface: 'session', sessionId: id }, logger: log, signal: deps.signal });
      outcome = { id, reason, ok: Object.values(report.phases).every((p) => p.ok), report, error: null };
    } finally {
      store.close();
    }
  } catch (err) {
    outcome = { id, reason, ok: false, report: null, error: deps.redact((err as Error).message) };
  }
  const level = outcome.ok ? 'info' : 'warn';
  log[level]({ event: 'dream_end', ok: outcome.ok, duration_ms: outcome.report?.duration_ms ?? null, phases: outcome.report?.phases ?? null, error: outcome.error }, `dream ${id}: ${outcome.ok ? 'ok' : 'failed'}`);
  log.info({ event: 'report', dreamId: id, action: 'dream', ok: outcome.ok }, `dream: ${outcome.ok ? 'ok' : 'failed'}`);
  const { reportDream } = await import('../../report/session-report.js');
  await reportDream(config, { id, reason, duration_ms: outcome.report?.duration_ms ?? 0, phases: outcome.report?.phases ?? { open: { ok: false, ms: 0, error: outcome.error ?? 'unknown' } } }, deps);
  return outcome;
}
