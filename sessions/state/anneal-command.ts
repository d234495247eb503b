// `nightshift anneal [--agent NAME] [--json]`: the anneal log, oldest first: each pass of the
// self-annealing loop a session recorded with `ANNEAL:`, its date, agent and session; a pass missing
// a field is listed as incomplete. Read-only: no store yet is an empty log.
import type { Config } from '../../config/schema.js';
import { DEFAULTS } from '../../config/defaults.js';
import { EXIT } from '../../core/errors.js';
import { memoryDbPath } from '../../memory/store/db-path.js';
import { ANNEAL_FIELDS, passRecurrence, type AnnealPass } from './anneal.js';
import { readPasses } from './state-data.js';

// Pure: the log as text.
export function formatAnnealLog(passes: AnnealPass[], recurring: Set<AnnealPass>): string {
  if (!passes.length) return 'no anneal passes yet';
  return passes
    .map((p) => {
      const marks = [p.complete ? '' : 'incomplete', recurring.has(p) ? 'recurring' : ''].filter(Boolean);
      const head = `${p.at}  ${p.agent}  ${p.session ?? '-'}${p.id === null ? '' : `  #${p.id}`}${marks.length ? `  (${marks.join(', ')})` : ''}`;
      return [head, ...ANNEAL_FIELDS.map((f) => `  ${f.padEnd(8)} ${p[f] ?? '(missing)'}`)].join('\n');
    })
    .join('\n\n');
}

export async function annealCommand(config: Config, flags: { agent?: string; json?: boolean }, io: { out: (t: string) => void }): Promise<number> {
  const all = readPasses(memoryDbPath(config));
  const passes = flags.agent ? all.filter((p) => p.agent === flags.agent) : all;
  if (flags.json) {
    io.out(JSON.stringify(passes.map((p) => ({ at: p.at, agent: p.agent, session: p.session, symptom: p.symptom, cause: p.cause, fix: p.fix, test: p.test, complete: p.complete, id: p.id }))));
    return EXIT.OK;
  }
  const threshold = config.anneal?.recurring_similarity ?? DEFAULTS.anneal.recurring_similarity;
  const recurring = new Set(passes.filter((p) => passRecurrence(p, all, threshold).length > 0));
  io.out(formatAnnealLog(passes, recurring));
  return EXIT.OK;
}
