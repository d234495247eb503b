// `nightshift anneal [--agent NAME]`: the anneal passes sessions recorded.
import { DEFAULTS } from '../../config/defaults.js';
import type { FullContext } from '../context.js';

export const help = `Usage: nightshift anneal [--agent NAME] [--json] [--config PATH]

The anneal log, oldest first. After a failure the next session is asked to anneal (diagnose the
cause, fix it, add the test, write the standard, then recover) and to record the pass in its own
words with one line:

  ANNEAL: symptom: … | cause: … | fix: … | test: …

Each pass is kept in the memory store as a memory of category anneal (searchable with nightshift
memory query, graded like the rest), with its date, agent and session. A pass missing a field is
kept and marked incomplete; one whose symptom is close to an earlier pass of the agent
(anneal.recurring_similarity, default ${DEFAULTS.anneal.recurring_similarity}) is marked recurring: the earlier fix treated a symptom.
--json: [{at, agent, session, symptom, cause, fix, test, complete, id}]`;

export const stage = 'full';

export async function run({ config, flags, io }: FullContext): Promise<number> {
  return (await import('../../sessions/state/anneal-command.js')).annealCommand(config, flags, io);
}
