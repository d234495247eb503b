// `nightshift tick`: what the timer fires. A skip (nothing due, a limit, locked) exits 0; a failed
// session exits 1 so OnFailure= fires.
import { runDeps, type FullContext } from '../context.js';
import { withStopSignal } from '../stop-signal.js';
import { gitLine } from '../git-line.js';
import { printRecord } from './sessions.js';

export const help = `Usage: nightshift tick [--json] [--config PATH]

One tick: run lock -> settle abandoned sessions -> dispatch -> budget -> git pull -> session ->
git commit/push -> report. A second tick while one runs exits 0 at once with reason "locked".
A skip (nothing due, a limit, locked) exits 0; a session that did not end ok exits 1.
--json: {action: "session"|"skip", reason, session: <as run --json>|null,
         git: {pulled, committed, pushed, branch, branch_pushed, error, uncommitted,
         left_out: [{path, size, limit}], untracked}}`;

export const stage = 'full';
export const liveLine = true;

export async function run({ config, flags, io, logger, env }: FullContext): Promise<number> {
  const [{ tick }, { exitCodeOf }] = await Promise.all([import('../../daemon/tick/tick.js'), import('../../daemon/tick/supervise.js')]);
  const r = await withStopSignal(logger, 'ending the session', (signal) => tick(config, runDeps(io, logger, env, signal)));
  if (flags.json) io.out(JSON.stringify(r));
  else if (r.action === 'skip') io.out(`skip: ${r.reason}`);
  else if (r.action === 'dream') io.out(`dream: ${r.dream?.ok ? 'ok' : 'failed'} (${r.reason})${r.dream?.error ? `: ${r.dream.error}` : ''}`);
  else {
    printRecord(io, r.session!, false);
    if (!r.session!.git) io.out(`git       ${gitLine(r.git)}`);
    if (r.late) io.out(`late      ${r.late.replace(/^late: /, '')}`);
  }
  return exitCodeOf(r);
}
