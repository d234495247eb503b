// `nightshift run <agent>`: one session of the agent now, watched and counted.
import { EXIT, NightshiftError } from '../../core/errors.js';
import { positional } from '../args.js';
import { runDeps, type FullContext } from '../context.js';
import { EXIT_CODES_HELP } from '../help.js';
import { withStopSignal } from '../stop-signal.js';
import { printRecord } from './sessions.js';

export const help = `Usage: nightshift run <agent> [--json] [--force] [--config PATH]

Runs one headless Claude Code session of <agent> (<agents_dir>/<agent>.md) in the vault, under
the wall-clock and idle watchdogs, the loop detector and the per-session cost ceiling, inside a
bubblewrap sandbox (config sandbox: bwrap, the default; sandbox: none to run it unwalled). The
session sees the vault writable, the rest read-only, and no state, logs, config or home; its
environment is an allowlist, and the API key stays with nightshift's proxy. With sandbox: bwrap and
no usable bwrap the session is refused (exit 78). The session is counted in today's ledger before it
starts and settled however it ends.

An agent that is held (rate limited until the API's reset time, or backed off after
backoff.after_failures failures in a row; see \`nightshift status\`) is skipped by the tick, but
\`run\` by hand still runs it: the operator decided. A warning says it was held.

  --force   run even when a daily limit (sessions, USD, the agent's runs per day) is reached
  --json    print one object: id, agent, outcome, exit_code, cost_usd, cost_estimated, turns (the
            model turns), api_calls (the calls the proxy metered), duration_ms, started_at,
            ended_at, result, error, retry_at, transcript, git (where the work went: pushed, or a
            nightshift/ branch, files left out; null with git sync off). Refused (no session
            ran: a limit, the lock, no credential, an invalid agent file), one object still:
            refused: true, agent, code (e.g. BUDGET_EXHAUSTED), exit_code, reason, and limit
            for a daily limit; the reason goes to stderr as well

${EXIT_CODES_HELP}`;

export const stage = 'full';

// Pure: what \`run --json\` prints when no session ran (a limit, the lock, a stop request, no
// credential, an invalid agent file, ...): the stable code, the exit code and the reason.
export function refusal(agent: string, err: NightshiftError): Record<string, unknown> {
  return {
    refused: true,
    agent,
    code: err.code,
    exit_code: err.exitCode,
    reason: err.message.replace(/^Refused: /, ''),
    ...('limit' in err && typeof err.limit === 'string' ? { limit: err.limit } : {}),
  };
}
// At a terminal the session shows one live line on stderr.
export const liveLine = true;

export async function run({ config, positionals, flags, io, logger, env }: FullContext): Promise<number> {
  const name = positional(positionals, 'run', 'agent');
  const [{ loadAgentCached }, { runAgent }, { exitCodeOf }] = await Promise.all([import('../../config/agent-file.js'), import('../../daemon/tick/run.js'), import('../../daemon/tick/supervise.js')]);
  let r;
  try {
    const agent = await loadAgentCached(config, name);
    r = await withStopSignal(logger, 'ending the session', (signal) => runAgent(config, agent, { force: !!flags.force }, runDeps(io, logger, env, signal)));
  } catch (err) {
    // A script reading --json gets the refusal as data too; stderr still says it in words.
    if (flags.json && err instanceof NightshiftError && err.exitCode !== EXIT.INTERNAL) io.out(JSON.stringify(refusal(name, err)));
    throw err;
  }
  // The record carries the git outcome (printed with it) whenever git sync is on.
  printRecord(io, r.session, flags.json);
  return exitCodeOf(r);
}
