// `nightshift tick`: what the timer fires. A skip (nothing due, a limit, locked) exits 0; a failed
// session exits 1 and a due rule passed over for an invalid agent file 78, so OnFailure= fires.
import { runDeps, type FullContext } from '../context.js';
import { withStopSignal } from '../stop-signal.js';
import { gitLine } from '../git-line.js';
import { printRecord } from './sessions.js';

export const help = `Usage: nightshift tick [--json] [--config PATH]

One tick: fire row -> run lock -> settle abandoned sessions -> dispatch -> budget -> git pull ->
session -> git commit/push -> report -> fire settled. Every tick leaves a row in state_dir/fires.db
(see nightshift fires): what it did, why, and the exit code below. A second tick while one runs
exits 0 at once with reason "locked". With sessions.max_concurrent above 1, each session charged
lets the next due agent start beside it (one per agent, one per vault), each with a fire row of its
own, up to that many at once; the tick ends when all have.
--json: {action: "session"|"skip"|"dream", reason, session: <as run --json>|null,
         git: {pulled, committed, pushed, branch, branch_pushed, error, uncommitted,
              left_out: [{path, size, limit}], untracked}, exit_code, fire: id|null,
         passed_over: [{rule, agent, cause: "held"|"invalid"|"busy"|"budget"|"window"|"stopped", why}],
         beside: [{fire, agent, session, outcome, exit_code}] (sessions started beside it)}

Exit codes:
  0   a session ended ok, or a skip (nothing due, a hold, a limit, locked)
  1   the session (or one started beside it) ended any other way, git left its work uncommitted, or a dream failed
  70  internal error (the ledger cannot be opened, a bug); also a tick whose fire row could not
      be written (a damaged fires.db) that would otherwise have exited 0
  75  refused: a disk nightshift writes has less free than limits.disk_free
  77  permission: a folder or file this user cannot use (the message names its owner and the fix),
      also when only the fire row could not be written
  78  config: a due rule was passed over because its agent file is invalid (the log and the fire
      name the agent and the file; the other agents still ran), or the config, the env file or
      the sandbox cannot be used
  130 the session was interrupted (the service stopped)
An unknown code is a failure.`;

export const stage = 'full';
export const liveLine = true;

export async function run({ config, flags, io, logger, env }: FullContext): Promise<number> {
  const { tick } = await import('../../daemon/tick/tick.js');
  const r = await withStopSignal(logger, 'ending the session', (signal) => tick(config, runDeps(io, logger, env, signal)));
  if (flags.json) io.out(JSON.stringify(r));
  else if (r.action === 'skip') io.out(`skip: ${r.reason}`);
  else if (r.action === 'dream') io.out(`dream: ${r.dream?.ok ? 'ok' : 'failed'} (${r.reason})${r.dream?.error ? `: ${r.dream.error}` : ''}`);
  else {
    printRecord(io, r.session!, false);
    if (!r.session!.git) io.out(`git       ${gitLine(r.git)}`);
    if (r.late) io.out(`late      ${r.late.replace(/^late: /, '')}`);
  }
  if (!flags.json) for (const b of r.beside ?? []) io.out(`beside    ${b.agent}: ${b.session} ended ${b.outcome ?? 'unknown'} (exit ${b.exit_code}, fire ${b.fire})`);
  return r.exit_code;
}
