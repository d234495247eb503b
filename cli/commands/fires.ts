// `nightshift fires [--days N] [--agent A] [--json]`: every start of the supervisor, newest first,
// with what it did and why (budget/fires.ts keeps them).
import { EXIT, UsageError } from '../../core/errors.js';
import type { FireRow } from '../../budget/fires.js';
import type { FullContext } from '../context.js';
import { table, zoneStamp } from '../table.js';
import { claimState, type ClaimRow } from '../../budget/fleet-claims.js';

export const help = `Usage: nightshift fires [--days N] [--agent NAME] [--timeline [--prefix DIR] | --fleet] [--json] [--config PATH]

Every fire of the last N days (default 1), newest first: each tick (of the timer, of nightshift
daemon, or by hand) and each nightshift run, from state_dir/fires.db. A fire's row is written
before the tick decides anything and settled after, so a tick that did nothing still says why:
  session          a session ran (its id and outcome)
  skip             nothing started: nothing due, a hold, a limit (the reason says which)
  dream            the memory dreamed instead
  locked           another supervisor held the run lock
  refused          refused before anything was charged (a full disk, an invalid config or agent
                   file, a sandbox that cannot be made, a permission; run: a limit or the lock)
  failed to start  the tick failed before a session (the ledger cannot be opened, a bug)
  crashed          the supervisor died before it settled the fire (SIGKILL, power loss); the
                   next start settled it, and the ledger settles its session abandoned
  running          still under way
Each fire lists the due rules it passed over and why (held, invalid: the agent file; budget,
window: a limit; stopped) and whether it came late. Only fires of a tick count as the timer's
ticks in nightshift status's gap line.

  --days N      the last N days (24 hours each), default 1
  --agent NAME  only the fires that chose or passed over NAME
  --timeline    one line per hour, oldest first: a glyph per fire in time order (S session,
                . skip, D dream, L locked, R refused, F failed to start, X crashed, > running;
                coloured at a terminal, plain ASCII when NO_COLOR is set or stdout is not one),
                the agent and outcome of each session, and _ where an expected tick of the
                installed timer left no fire (DIR/nightshift.timer, --prefix, default
                /etc/systemd/system; not checked without one)
  --json        [{id, at, kind: "tick"|"run", trigger: "timer"|"daemon"|"hand", slot, late,
                status: "open"|"settled", action, agent, rule, session, outcome, reason,
                passed_over: [{rule, agent, cause, why}], exit_code, ended_at,
                supervisor_pid, supervisor_start, trace_id, spans_dropped}]
                (trace_id: the fire's OpenTelemetry trace, spans_dropped: its spans the
                collector did not take; both null with telemetry off)
  --fleet       every host's fires as the fleet's database knows them (NIGHTSHIFT_DATABASE_URL
                in the env file, docs/fleet.md): each claim of an agent's slot, newest first,
                with the host that claimed it, its session, and how it ended (the session's
                outcome; crashed: its host stopped beating and another settled it; running;
                a lease passed that the next host to connect settles crashed). A fire that
                claimed nothing (a skip, a dream, a locked tick) is in its own host's fires only.
                --json: [{agent, slot, host, session, claimed_at, lease_until, ended_at,
                outcome, live}]

Exit codes:
  0   listed (none is a list too)
  64  usage: --days is not a positive whole number; --fleet without NIGHTSHIFT_DATABASE_URL,
      or with --timeline
  69  --fleet: the fleet's database cannot be reached (the message names its host:port/database)
  70  internal: state_dir/fires.db cannot be opened (damaged: move it aside)
  77  permission: state_dir/fires.db cannot be read by this user (the message says whose it is)
  78  config: the config file is invalid; --fleet: a database schema this nightshift does not know`;

export const stage = 'full';

// A parser's message can span lines (YAML's caret): one line in a table.
const oneLine = (t: string) => t.replace(/\s*\n\s*/g, ' ');

// Pure: the fires as lines (times in budget.timezone), a passed-over rule and lateness under each.
export function firesText(rows: FireRow[], timezone: string): string {
  if (!rows.length) return 'no fires recorded in this window';
  const out: string[][] = [];
  for (const r of rows) {
    const what = r.status === 'open' ? 'running' : r.action ?? '?';
    const reason = oneLine(r.reason ?? '');
    out.push([zoneStamp(r.at, timezone), `${r.kind}/${r.trigger}`, what, r.agent ?? '-', r.exit_code === null ? '-' : `exit ${r.exit_code}`, reason]);
    // The why once: a skip's reason already holds it.
    for (const p of r.passed_over) out.push(['', '', '', '', '', `passed over: rule ${p.rule ?? '-'} (${p.agent}), ${p.cause}${reason.includes(oneLine(p.why)) ? '' : `: ${oneLine(p.why)}`}`]);
    if (r.late) out.push(['', '', '', '', '', r.late]);
    // Its OpenTelemetry trace (telemetry on), and what of it the collector did not take.
    if (r.trace_id) out.push(['', '', '', '', '', `trace ${r.trace_id}${r.spans_dropped ? ` (${r.spans_dropped} span${r.spans_dropped === 1 ? '' : 's'} not delivered)` : ''}`]);
  }
  return table(out);
}

// Pure: the fleet's claims as lines (times in budget.timezone), newest first.
export function fleetFiresText(rows: ClaimRow[], timezone: string, database: string): string {
  if (!rows.length) return `no fire claimed in this window on any host (${database})`;
  const at = (iso: string | null) => (iso ? zoneStamp(iso, timezone) : '-');
  return table([
    ['claimed', 'agent', 'slot', 'host', 'session', 'outcome', 'ended'],
    ...rows.map((c) => [at(c.claimed_at), c.agent, at(c.slot), c.host, c.session ?? '-', claimState(c), at(c.ended_at)]),
  ]);
}

export async function run({ config, flags, io, env }: FullContext): Promise<number> {
  const days = flags.days === undefined ? 1 : Number(flags.days);
  if (!Number.isInteger(days) || days < 1) throw new UsageError(`Expected --days as a positive whole number, got \`${flags.days}\``);
  if (flags.fleet) {
    if (flags.timeline) throw new UsageError('`--fleet` and `--timeline` do not go together: the timeline is this host\'s fires (nightshift fires --timeline)');
    const { fleetTarget, FLEET_URL_VAR } = await import('../../config/fleet-url.js');
    const target = fleetTarget(env);
    if (!target) throw new UsageError(`\`--fleet\` reads the fleet's database, and ${FLEET_URL_VAR} is not set in the env file: this host's own fires are \`nightshift fires\` (docs/fleet.md sets up a fleet)`);
    const { fleetFires } = await import('../../daemon/tick/fleet-look.js');
    const rows = await fleetFires(config, env, io.redact, new Date(Date.now() - days * 86_400_000), flags.agent);
    io.out(flags.json ? JSON.stringify(rows) : fleetFiresText(rows, config.budget.timezone, target.where));
    return EXIT.OK;
  }
  const { readFires } = await import('../../daemon/tick/fires-view.js');
  const now = new Date();
  const all = readFires(config, { since: new Date(now.getTime() - days * 86_400_000) }, now);
  const rows = flags.agent ? all.filter((r) => r.agent === flags.agent || r.passed_over.some((p) => p.agent === flags.agent)) : all;
  if (flags.timeline && !flags.json) {
    const [{ firesTimeline }, { timerTicks }, { timerGaps }] = await Promise.all([import('../fires-timeline.js'), import('../../daemon/schedule/timer-ticks.js'), import('../../daemon/tick/fires-view.js')]);
    const from = new Date(now.getTime() - days * 86_400_000);
    // The gaps are the timer's, whoever a fire chose: every fire of the window counts.
    const gaps = timerGaps(all, now, timerTicks(flags.prefix, now, env.PATH).calendar, (t) => timerTicks(flags.prefix, t, env.PATH).ticks, days * 86_400_000);
    const colour = !!io.stdoutIsTTY && !env.NO_COLOR && !!io.outPainted;
    const text = firesTimeline(rows, { from, to: now, timezone: config.budget.timezone, missed: gaps ? gaps.missed : null, colour });
    // Painted: our own colours only; every other part of the line is our own words, times and agent names.
    if (colour) io.outPainted!(text);
    else io.out(text);
    return EXIT.OK;
  }
  io.out(flags.json ? JSON.stringify(rows) : firesText(rows, config.budget.timezone));
  return EXIT.OK;
}
