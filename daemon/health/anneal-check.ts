// Doctor's `recurring` check: an agent whose last failure (or last anneal pass) is close to an
// earlier one has the same failure again; the earlier fix treated a symptom. A warning, not a
// failure: the agent still runs, and its next state says so first. Read-only.
import fs from 'node:fs';
import { Ledger } from '../../budget/ledger.js';
import { memoryDbPath } from '../../memory/store/db-path.js';
import type { CheckFacts } from '../../report/embed.js';
import { passRecurrence, recurrenceOf, type AnnealPass, type FailureFacts } from '../../sessions/state/anneal.js';
import { readPasses } from '../../sessions/state/state-data.js';
import type { Config } from '../../config/schema.js';
import { DEFAULTS } from '../../config/defaults.js';
import { readReleases, sinceRelease } from '../../budget/hold-releases.js';
import { noun } from '../../core/words.js';

const FIX = 'read the ATTENTION section of the agent\'s next state and its earlier passes: nightshift anneal --agent NAME; fix the cause, not the symptom';

// Pure: the agents whose last failure or last pass came back, and the check that says so.
export function recurringCheck(rowsNewestFirst: Array<FailureFacts & { agent: string }>, passes: AnnealPass[], threshold: number): CheckFacts {
  const agents = [...new Set([...rowsNewestFirst.map((r) => r.agent), ...passes.map((p) => p.agent)])];
  const found: string[] = [];
  for (const agent of agents) {
    const rows = rowsNewestFirst.filter((r) => r.agent === agent);
    const mine = passes.filter((p) => p.agent === agent);
    const last = rows[0];
    if (last && last.outcome !== 'ok' && last.outcome !== 'running') {
      const r = recurrenceOf(last, rows, mine, threshold);
      if (r.recurring) {
        found.push(`${agent}: its last session ${last.id} ended ${last.outcome} like ${r.earlier.length} earlier ${noun(r.earlier.length, 'one')}${r.passes.length ? ` after ${r.passes.length} anneal ${noun(r.passes.length, 'pass', 'passes')}` : ''}`);
        continue;
      }
    }
    const newest = mine.at(-1);
    const again = newest ? passRecurrence(newest, mine, threshold) : [];
    if (newest && again.length) found.push(`${agent}: its last anneal pass (${newest.session ?? newest.at}) has the symptom of ${again.length} earlier ${noun(again.length, 'pass', 'passes')}`);
  }
  return found.length
    ? { name: 'recurring', status: 'warn', detail: `the same failure again (the earlier fix treated a symptom): ${found.join('; ')}`, fix: FIX }
    : { name: 'recurring', status: 'ok', detail: 'no failure came back', fix: null };
}

// Reads the ledger and the anneal log, opening neither for writing; null when there is no ledger.
export function recurringFromFiles(config: Config, ledgerFile: string): CheckFacts | null {
  if (!fs.existsSync(ledgerFile)) return null;
  let passes: AnnealPass[] = [];
  try {
    passes = readPasses(memoryDbPath(config));
  } catch {
    // The memory check reports a store that cannot be read; the ledger alone still tells.
  }
  const ledger = Ledger.look(ledgerFile);
  try {
    // A hold the operator released starts the agent's story again: earlier failures are not "again".
    const releases = readReleases(config.state_dir);
    const rows = ledger.recent(200).filter((r) => sinceRelease([r], releases[r.agent]).length).map((r) => ({ id: r.id, agent: r.agent, outcome: r.status === 'running' ? 'running' : (r.outcome ?? 'error'), error: r.error, started_at: r.started_at }));
    return recurringCheck(rows, passes, config.anneal?.recurring_similarity ?? DEFAULTS.anneal.recurring_similarity);
  } finally {
    ledger.close();
  }
}

// Pure: what a session's report says when it is the same failure again (or recorded a pass with
// an earlier pass's symptom); null when it is not.
export function recurringNote(session: FailureFacts & { agent: string }, rowsNewestFirst: FailureFacts[], passes: AnnealPass[], threshold: number): string | null {
  if (session.outcome !== 'ok' && session.outcome !== 'running') {
    const r = recurrenceOf(session, rowsNewestFirst, passes, threshold);
    if (r.recurring) {
      return `the same failure again: ${r.earlier.length} earlier ${noun(r.earlier.length, 'session')} of ${session.agent} ended ${session.outcome} with a similar error${r.passes.length ? `, after ${r.passes.length} anneal ${noun(r.passes.length, 'pass', 'passes')}: the earlier fix treated a symptom` : '; none was annealed'}`;
    }
  }
  const own = passes.filter((p) => p.session === session.id);
  const again = own.flatMap((p) => passRecurrence(p, passes.filter((q) => q.session !== session.id), threshold));
  return again.length ? `this session's anneal pass has the symptom of ${again.length} earlier ${noun(again.length, 'pass', 'passes')}: the earlier fix treated a symptom` : null;
}

// The note for a session just settled, from the ledger and the anneal log; null on any failure to read.
export function recurringNoteFor(config: Config, ledger: Pick<Ledger, 'recent'>, session: FailureFacts & { agent: string }): string | null {
  try {
    const rows = ledger.recent(200).filter((r) => r.agent === session.agent).map((r) => ({ id: r.id, outcome: r.status === 'running' ? 'running' : (r.outcome ?? 'error'), error: r.error, started_at: r.started_at }));
    const passes = readPasses(memoryDbPath(config)).filter((p) => p.agent === session.agent);
    return recurringNote(session, rows, passes, config.anneal?.recurring_similarity ?? DEFAULTS.anneal.recurring_similarity);
  } catch {
    return null;
  }
}
