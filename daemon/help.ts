// User-facing help texts, apart from the code that parses arguments.
export const EXIT_CODES_HELP = `Exit codes:
  0   the session ended ok (or the command succeeded)
  1   the session ended any other way (error, max_turns, timeout, stalled, loop, budget, spawn_failed)
  64  usage: an unknown command, flag or agent
  70  internal error (the ledger cannot be opened, a bug)
  75  refused: a daily limit is reached (see --force), or another supervisor holds the lock
  78  config: the config file or an agent file is invalid (the message names the file and field)`;

export const MAIN_HELP = `nightshift — watched, counted, logged headless Claude Code sessions

Usage: nightshift <command> [options]

Commands:
  run <agent>          run one session of <agent> now
  agents               list the agents in agents_dir
  budget               today's spend and session count against the limits
  sessions             the latest sessions, newest first
  show <session-id>    one session

Global options:
  --config PATH        config file (else $NIGHTSHIFT_CONFIG, else ./nightshift.yaml)
  --json               print data as JSON on stdout (logs always go to stderr)
  -h, --help           help for nightshift or a command
  -v, --version        print the version

${EXIT_CODES_HELP}`;

export const COMMAND_HELP: Record<string, string> = {
  run: `Usage: nightshift run <agent> [--json] [--force] [--config PATH]

Runs one headless Claude Code session of <agent> (<agents_dir>/<agent>.md) in the vault, under
the wall-clock and idle watchdogs, the loop detector and the per-session cost ceiling. The session
is counted in today's ledger before it starts and settled however it ends.

  --force   run even when a daily limit (sessions, USD, the agent's runs per day) is reached
  --json    print one object: id, agent, outcome, exit_code, cost_usd, cost_estimated, turns,
            duration_ms, started_at, ended_at, result, error, transcript

${EXIT_CODES_HELP}`,
  agents: `Usage: nightshift agents [--json] [--config PATH]

Lists the agents in agents_dir with their model, turns, timeout and limits.`,
  budget: `Usage: nightshift budget [--json] [--date YYYY-MM-DD] [--config PATH]

The day's sessions and spend against the limits (the day in budget.timezone; default today).
--json: {date, sessions, max_sessions, cost_usd, max_usd, by_agent: {name: {sessions, cost_usd}}}`,
  sessions: `Usage: nightshift sessions [--json] [--limit N] [--config PATH]

The latest sessions, newest first (default 20), each shaped like \`run --json\`.`,
  show: `Usage: nightshift show <session-id> [--json] [--config PATH]

One session from the ledger, shaped like \`run --json\`.`,
};
