// User-facing help texts, apart from the code that parses arguments.
import { DEFAULTS } from '../daemon/config/defaults.js';
export const EXIT_CODES_HELP = `Exit codes:
  0   the session ended ok (or the command succeeded; a tick that skipped)
  1   the session ended any other way (error, rate_limited, max_turns, timeout, stalled, loop, budget,
      spawn_failed),
      git left its work uncommitted, a dream phase failed, or a doctor check failed
  64  usage: an unknown command, option or agent (with a "did you mean"), or an extra argument
  70  internal error (the ledger or the memory database cannot be opened, a bug)
  75  refused: a daily limit is reached (see --force), another supervisor holds the lock, a stop
      request came before the session started, or a forgotten claim was observed again
  77  memory forget --approve with a wrong code (nothing deleted)
  78  config: the config file or an agent file is invalid (the message names the file and field),
      the env file holds secrets and its group or others may read it (chmod 600 fixes it),
      or sandbox: bwrap is configured and bwrap cannot make a sandbox here`;

export const MAIN_HELP = `nightshift — watched, counted, remembered headless Claude Code sessions

Usage: nightshift <command> [options]

Commands:
  init [DIR] [--remote URL]  a new site: config, an example agent, a vault, nightshift.env
  run <agent>          run one session of <agent> now
  agents               list the agents in agents_dir
  budget [--days N]    today's (or N days') spend and session count against the limits
  sessions             the latest sessions, newest first (--agent, --outcome, --since)
  show <session-id>    one session; --transcript: its conversation
  logs [ID] [-f]       today's log, or a session's transcript; -f follows
  tick                 what the timer fires: dispatch, budget, git pull, one session, git push
  next                 which agent the next tick would run, why not the others, and when each is due
  status               budget, last sessions, next decision, locks, unpushed commits
  lock -- CMD...       run CMD holding the host-wide git lock
  daemon               run ticks on daemon.schedule (node-cron) until SIGTERM
  systemd print|install  render the systemd units for this install
  doctor [--fix] [--alert]  check everything a tick needs; --fix does the safe fixes; --alert
                       posts a failing doctor to Discord
  alert --unit NAME    report a failed unit to journald and Discord (nightshift-alert@.service)
  memory observe|query|recall|stats|import|export   the memory store
  mcp                  the memory store's MCP server on stdio (what sessions connect to)
  state [--agent NAME] the session state a session of NAME would start with now
  anneal [--agent NAME] the anneal log: each ANNEAL: pass (symptom, cause, fix, test) sessions recorded
  hook pre-tool-use    the guardrail as a Claude Code command hook (payload on stdin)

Global options:
  --config PATH        config file (else $NIGHTSHIFT_CONFIG, else ./nightshift.yaml)
  --environment-file PATH  KEY=VALUE variables, read as systemd's EnvironmentFile= reads them (else
                       nightshift.env beside the config, when it exists); the environment wins.
                       One that holds secrets and is readable by group or others is refused (78)
  --json               print data as JSON on stdout (logs always go to stderr)

At a terminal, log lines on stderr are short (HH:MM:SS level message) and a running session shows
one live line (elapsed, turns, cost, last tool). Under journald, into a file or a pipe, and with
--json, stderr carries pino's JSON lines and no live line; the daily log file is always JSON.
  -h, --help           help for nightshift or a command
  -v, --version        print the version

${EXIT_CODES_HELP}`;

export const COMMAND_HELP: Record<string, string> = {
  init: `Usage: nightshift init [DIR] [--remote URL]

Makes a site in DIR (default: here): nightshift.yaml with the defaults, commented; an example agent
(prompts/gardener.md) and a dispatch rule for it; the vault (vault/: a new git repository, or a
clone of --remote URL, then with git sync on); state/ (0700) and logs/; and nightshift.env (0600)
with the variables to fill, commented. A file or folder that exists is kept as it is and named.
Prints the next three commands: fill nightshift.env, nightshift doctor, nightshift run gardener.`,
  run: `Usage: nightshift run <agent> [--json] [--force] [--config PATH]

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
  --json    print one object: id, agent, outcome, exit_code, cost_usd, cost_estimated, turns,
            duration_ms, started_at, ended_at, result, error, transcript

${EXIT_CODES_HELP}`,
  agents: `Usage: nightshift agents [--json] [--config PATH]

Lists the agents in agents_dir with their model, turns, timeout and limits.`,
  budget: `Usage: nightshift budget [--json] [--date YYYY-MM-DD] [--days N] [--config PATH]

The day's sessions and spend against the limits (the day in budget.timezone; default today).
--days N: the N days ending at --date (default today), one row each with a bar of the day's spend
against max_usd_per_day.
--json: {date, sessions, max_sessions, cost_usd, max_usd, by_agent: {name: {sessions, cost_usd}}}
--json --days N: {timezone, days: [<as --json>, ...]} oldest first`,
  sessions: `Usage: nightshift sessions [--json] [--limit N] [--agent NAME] [--outcome O] [--since WHEN] [--config PATH]

The latest sessions, newest first (default 20), as columns: start (budget.timezone), agent,
outcome, cost (~ an estimate), turns, duration, id.
  --agent NAME   only this agent's
  --outcome O    only this outcome (ok, error, rate_limited, max_turns, timeout, stalled, loop,
                 budget, spawn_failed, abandoned, running)
  --since WHEN   started since: a time back (2d, 12h, 30m), a day (2026-12-01) or an ISO time
--json: an array, each shaped like \`run --json\`.`,
  show: `Usage: nightshift show <session-id> [--transcript] [--json] [--config PATH]

One session from the ledger, shaped like \`run --json\`.
  --transcript   the conversation: the assistant's text, each tool call and its result (shortened),
                 API retries and rate limits, and the result. With --json: the raw JSONL.`,
  logs: `Usage: nightshift logs [SESSION-ID] [-f|--follow] [--config PATH]

Today's daily log (<log_dir>/YYYY-MM-DD.log, the day in budget.timezone): short human lines when
stdout is a terminal, the JSON lines otherwise. With a session id: its transcript as a
conversation (as \`show --transcript\`). -f follows: new lines as they come (the daily log moves on
to the next day's file at midnight) until Ctrl-C; a session is followed until it ends.`,
  tick: `Usage: nightshift tick [--json] [--config PATH]

One tick: run lock -> settle abandoned sessions -> dispatch -> budget -> git pull -> session ->
git commit/push -> report. A second tick while one runs exits 0 at once with reason "locked".
A skip (nothing due, a limit, locked) exits 0; a session that did not end ok exits 1.
--json: {action: "session"|"skip", reason, session: <as run --json>|null,
         git: {pulled, committed, pushed, branch, error}}`,
  next: `Usage: nightshift next [--at ISO-TIME] [--json] [--config PATH]

Explains the dispatch decision at --at (default now) without running anything: which rule won, and
for every rule before it, why not. A held agent's rule says "held until TIME: why" (a rate limit:
the API's reset time, or a backoff; backoff.after_failures failures in a row wait backoff.base,
doubling with each further failure up to backoff.max). Then when each agent is next due (its
rules' days, hours, run limits and min_interval; within 8 days), in budget.timezone.
--json: {agent: name|null, rule: index|null, reason, rules: [{index, agent, matched, why, next_due}],
         holds: {agent: {kind: "rate_limited"|"backoff", until, reason, failures, session}},
         next_due: {<agent>: ISO time|null}}   (an agent no rule names is null)`,
  status: `Usage: nightshift status [--json] [--config PATH]

Budget, the next decision, held agents (rate limited or backed off, and until when), the last ok
session, locks, unpushed commits and the last sessions.
--json: {budget: <as budget --json>, last_sessions: [...], next: <as next --json>, holds: {...},
         locks: {run, git}, unpushed, last_ok_at}`,
  lock: `Usage: nightshift lock [--timeout 120s] [--config PATH] -- CMD [ARGS...]

Runs CMD while holding the host-wide git lock that every nightshift process takes before touching
the vault's git (the flock(1) habit). Exits with CMD's exit code; 75 if the lock was not obtained
within --timeout (default git.lock_timeout).`,
  daemon: `Usage: nightshift daemon [--config PATH]

Runs the tick on each cron expression of daemon.schedule (in budget.timezone), never two at once.
SIGTERM/SIGINT: stop scheduling, let a running session finish within daemon.shutdown_grace, then end
it and settle it; exit 0.`,
  systemd: `Usage: nightshift systemd print|install --user NAME [--on-calendar SPEC] [--prefix DIR] [--config PATH]

Renders the units with this install's paths:
  nightshift.service           one tick (Type=oneshot), as --user
  nightshift.timer             fires it on --on-calendar (default hourly), Persistent=true
  nightshift-daemon.service    the alternative: nightshift daemon on daemon.schedule (not both)
  nightshift-alert@.service    OnFailure=: nightshift alert --unit %i
  nightshift-watch.service     nightshift doctor --alert
  nightshift-watch.timer       fires it hourly at :17
install writes them to --prefix (default /etc/systemd/system), makes the missing vault, state and
log folders (owned by --user), and prints the systemctl line to run; it never runs systemctl.
  --user NAME         required for install: an existing user (or root, explicitly)
  --on-calendar SPEC  a systemd calendar expression, checked with systemd-analyze calendar where
                      it is installed (usage error 64 when systemd would refuse it)`,
  alert: `Usage: nightshift alert --unit NAME [--config PATH]

Reports that a systemd unit failed: an error event in journald and the daily log, and an embed
to Discord (DISCORD_WEBHOOK_URL; through the outbox). Used by OnFailure=. Works with a broken or
missing config: what validates is used, defaults for the rest, and the embed names what could
not be read. systemd's MONITOR_SERVICE_RESULT, MONITOR_EXIT_CODE, MONITOR_EXIT_STATUS and
MONITOR_INVOCATION_ID are included when set; so are the unit's last journal lines when readable.
Exits 0 when the alert was sent or queued (or Discord is not configured), 1 when it was neither.`,
  doctor: `Usage: nightshift doctor [--json] [--fix] [--alert] [--config PATH]

Checks, each ok, WARN or FAIL with a one-line fix: config, env (the env file: its mode, its lines),
credential (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, from the environment or the env file),
agents, permission (as root the CLI refuses bypassPermissions for agents without allowed_tools),
cli (claude --version), sandbox (a real bwrap sandbox starts), access (state_dir, log_dir, the vault,
the ledger and the memory database are writable by this user: else who owns them and the chown),
ledger and memory (integrity; never created), vault (a git work tree git does not refuse as of
"dubious ownership") and remote (git ls-remote), run lock and git lock (stale: the owner is gone),
schedule (a dispatch rule that daemon.schedule or the installed nightshift.timer can never fire),
discord (the webhook answers) and outbox (reports waiting), silence (the last ok session is younger
than alerts.max_silence) and failures (fewer than alerts.max_consecutive_failures in a row). Sends
what the outbox holds first, like every start. Works with a broken or missing config (the config
check fails and names the problems).
  --fix     first do the safe fixes and say what was done: make a missing state_dir (0700) and
            log_dir, chmod 600 the env file, chmod 700 state_dir
  --alert   when a check fails, post the doctor's embed to Discord (through the outbox)
  --json    {ok, config, checks: [{name, status, detail, fix}], alert, fixed (with --fix)}
Exits 1 when a check fails, else 0.`,
  memory: `Usage: nightshift memory <command> [--json] [--config PATH]

The memory store at memory.db (default <state_dir>/memory.db). Every change is written to its
audit log with surface "cli" (or "import").

  observe TEXT [--source S] [--category C] [--tags a,b]
        one observation through the prediction-error gate: merged into a close memory, a new
        memory linked to a related one, or a new memory. Source defaults to "cli".
        --json: {observation_id, memory_id, decision, prediction_error, linked_to}
  query TEXT [--limit N] [--explain] [--include-faded]
        best matches first (default 10). --include-faded adds faded and superseded memories,
        labelled; --explain shows each score's parts.
        --json: [{id, text, category, score, sources, faded, superseded}] (the MCP query
        tool's results; with --explain each also has explain: {lexical, vector, fused,
        activation, recency, salience})
  recall ID
        one memory with its sources and edges. --json: the full record
  stats
        counts by kind and category, the embedding model. --json: the same as an object
  import FILE|-
        JSONL, one observation per line: {"text", "source", "created_at"?, "tags"?, "category"?,
        "salience"?} (other fields are ignored). Goes through the same gate as observe, in
        order; lines with the same created_at one after another are linked as "follows".
        A bad line is reported on stderr as FILE:LINE: field: message and skipped; the good
        lines are kept. Progress on stderr when it is a terminal. Exits 1 if any line was bad
        or refused (a forgotten claim). --json: {file, lines, observed, merge, link, novel,
        refused: [{line, field, message}], bad: [...]}
  export [FILE]
        every observation as an import line (oldest first), to FILE or stdout
  believe TEXT [--confidence 0..1] [--source S]      a belief (category belief). --json: {id}
  confirm ID                                          confirm a belief or value an agent stated: it
        joins the state's Identity (a session's own claims wait for this or for use in a later
        session that ended ok)
  contradict ID OTHER_ID [--note TEXT]                link the two as contradicting; lowers confidence
  predict TEXT [--confidence 0..1] [--due ISO]        a prediction. --json: {id}
  resolve ID correct|partly|wrong [--note TEXT]       resolve a prediction. --json: {id, surprise}
  review ID again|hard|good|easy                      grade a memory by hand (FSRS-6)
  threads [open TEXT [--solo] | resolve ID]           open questions and work across sessions
  wander [--steps N] [--seed N]                       a seeded walk over the memory graph
  dream                                               cluster, abstract, find contradictions,
        update schedules, fade, rebuild indices; each phase timed and fault-isolated; progress
        on a terminal. --json: {duration_ms, phases: {<name>: {ok, ms, ...counts}}}
  forget ID... [--approve CODE]
        without --approve a dry run: what would go and the code for exactly these ids today.
        With the right code, deletes for good and tombstones the claims; a wrong code exits 77.
        Not reachable through MCP.

A memory database that is corrupt or not a nightshift store is refused with an error naming the
file (exit 70); it is never overwritten. A refused observation (a forgotten claim) exits 75.

${EXIT_CODES_HELP}`,
  state: `Usage: nightshift state [--agent NAME] [--json] [--config PATH]

The session state every session gets (with --append-system-prompt-file, and in
<vault>/.nightshift/session-state.md, and beside its transcript as <id>.state.md): the time, the
agent and the budget left today; identity (beliefs and values by salience x retrievability); open
threads; surprises and contradictions since the agent's last session; overdue memories and a wander
seeded by the date; the last sessions; git; health warnings. At most state.max_chars (default
12000) characters: a cut section says how much was left out. Faded and superseded memories are
never in it. When the agent's last session did not end ok, an ATTENTION section comes right after
Now (outcome, error, last tool calls, transcript, the anneal rule; marked recurring when the same
failure came back) and is never cut.
--json: {text, chars, max_chars, cut: [{section, lines, chars}], data}`,
  anneal: `Usage: nightshift anneal [--agent NAME] [--json] [--config PATH]

The anneal log, oldest first. After a failure the next session is asked to anneal (diagnose the
cause, fix it, add the test, write the standard, then recover) and to record the pass in its own
words with one line:

  ANNEAL: symptom: … | cause: … | fix: … | test: …

Each pass is kept in the memory store as a memory of category anneal (searchable with nightshift
memory query, graded like the rest), with its date, agent and session. A pass missing a field is
kept and marked incomplete; one whose symptom is close to an earlier pass of the agent
(anneal.recurring_similarity, default ${DEFAULTS.anneal.recurring_similarity}) is marked recurring: the earlier fix treated a symptom.
--json: [{at, agent, session, symptom, cause, fix, test, complete, id}]`,
  hook: `Usage: nightshift hook pre-tool-use [--config PATH]

nightshift's guardrail as a PreToolUse command hook for your own Claude Code. The payload comes on
stdin; a blocked call prints the hook's deny JSON on stdout (nothing for an allowed one). Blocked:
writes and edits outside the project folder, the config's vault and hooks.extra_dirs; rm -r of /,
~, $HOME, .. or any path with ~. A payload that is not JSON or lacks fields is logged on stderr and
allowed. Always exits 0. In .claude/settings.json:

  {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "nightshift hook pre-tool-use"}]}]}}

Sessions nightshift runs get the same guardrail over HTTP from the supervisor itself, with the loop
pre-block ("blocked: repeat ...") on top.`,
  mcp: `Usage: nightshift mcp [--config PATH]

Serves the memory store over MCP on stdio (server name "nightshift_memory"), until stdin closes
or SIGTERM. Tools: observe, query, recall, link, stats. stdout carries the protocol only; logs go
to stderr. For your own clients: an observation made here takes its source from the call, else
from $NIGHTSHIFT_SESSION_ID. Sessions nightshift runs never use this: the supervisor serves each
one its memory over loopback HTTP with a per-session token, and the session is always the source.
A memory database that cannot be used is refused before anything is served (exit 70).

  claude --mcp-config '{"mcpServers":{"nightshift_memory":{"type":"stdio","command":"nightshift","args":["mcp"]}}}'`,
};
