// nightshift's own help and the exit codes every command shares; each command's help is beside it
// in cli/commands/<command>.ts.
export const EXIT_CODES_HELP = `Exit codes:
  0   the session ended ok (or the command succeeded; a tick that skipped)
  1   the session ended any other way (error, rate_limited, max_turns, timeout, stalled, loop, budget,
      spawn_failed, disk_full),
      git left its work uncommitted, a dream phase failed, or a doctor check failed
  64  usage: an unknown command, option or agent (with a "did you mean"), or an extra argument
  69  unavailable: the fleet's database (NIGHTSHIFT_DATABASE_URL) cannot be reached when a session
      would start; nothing was claimed or charged (the message names its host, never the password);
      or by hold release: released on this host only, the fleet's release spooled
  70  internal error (the ledger or the memory database cannot be opened, a bug)
  75  refused: a daily limit is reached (see --force), another supervisor holds the lock, a stop
      request came before the session started, a forgotten claim was observed again, or a disk
      nightshift writes has less free than limits.disk_free
  77  permission: a folder or file this user cannot use (the message names its owner and the fix),
      or memory forget --approve with a wrong code (nothing deleted)
  78  config: the config file or an agent file is invalid (the message names the file and field),
      a tick passed over a due rule because its agent file is invalid (it names the agent and file),
      the env file holds secrets and its group or others may read it (chmod 600 fixes it),
      or sandbox: bwrap is configured and bwrap cannot make a sandbox here, or no API credential
      is set (run and tick refuse before anything is charged; the message names the env file),
      or the fleet's database is at a schema version this nightshift does not know (db migrate)
  130 the session was interrupted (Ctrl-C, or the service stopped): not the agent's failure`;

export const MAIN_HELP = `nightshift — watched, counted, remembered headless Claude Code sessions

Usage: nightshift <command> [options]

Commands:
  init [DIR] [--remote URL]
                       a new site: config, an example agent, a vault, nightshift.env
  run <agent>          run one session of <agent> now
  agents               list the agents in agents_dir
  budget [--days N]    today's (or N days') spend and session count against the limits
  sessions             the latest sessions, newest first (--agent, --outcome, --since)
  show <session-id>    one session; --transcript: its conversation
  logs [ID] [-f]       today's log, or a session's transcript; -f follows
  tick                 what the timer fires: dispatch, budget, git pull, one session, git push
  fires [--days N]     every tick and run: what it did, why, its exit code, the rules it passed over
  next                 which agent the next tick would run, why not the others, and when each is due
  status               budget, last sessions, next decision, locks, unpushed commits
  db migrate           bring the fleet's PostgreSQL schema (NIGHTSHIFT_DATABASE_URL) up to date
  hold release AGENT|--all
                       lift a rate-limit or backoff hold once its cause is fixed
  lock -- CMD...       run CMD holding the host-wide git lock
  daemon               run ticks on daemon.schedule (node-cron) until SIGTERM
  systemd print|install
                       render the systemd units for this install
  doctor [--fix] [--alert]
                       check everything a tick needs; --fix does the safe fixes; --alert
                       posts a failing doctor to Discord
  alert --unit NAME    report a failed unit to journald and Discord (nightshift-alert@.service)
  memory observe|query|recall|stats|import|export
                       the memory store
  mcp                  the memory store's MCP server on stdio (what sessions connect to)
  state [--agent NAME]
                       the session state a session of NAME would start with now
  anneal [--agent NAME]
                       the anneal log: each ANNEAL: pass (symptom, cause, fix, test) sessions recorded
  hook pre-tool-use    the guardrail as a Claude Code command hook (payload on stdin)
  rehearse <agent>     one session against the loopback API imitation, in state of its own
                       (the site untouched); --serve only serves the imitation
  web [--port N]       a read-only status page on 127.0.0.1 (charts of fires, spend, sessions);
                       prints its URL with a token

Global options:
  --config PATH        config file (else $NIGHTSHIFT_CONFIG, else ./nightshift.yaml)
  --environment-file PATH
                       KEY=VALUE variables, read as systemd's EnvironmentFile= reads them (else
                       nightshift.env beside the config, when it exists); the environment wins.
                       One that holds secrets and is readable by group or others is refused (78)
  --json               print data as JSON on stdout (logs always go to stderr)

At a terminal, log lines on stderr are short (HH:MM:SS level message) and a running session shows
one live line (elapsed, turns, cost, last tool). Under journald, into a file or a pipe, and with
--json, stderr carries pino's JSON lines and no live line; the daily log file is always JSON.
  -h, --help           help for nightshift or a command
  -v, --version        print the version

${EXIT_CODES_HELP}`;
