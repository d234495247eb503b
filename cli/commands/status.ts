// `nightshift status`: budget, the next decision, holds, locks, unpushed commits, last sessions.
import path from 'node:path';
import { money } from '../../core/money.js';
import { windowLines } from '../../budget/windows.js';
import { EXIT } from '../../core/errors.js';
import type { LockOwner } from '../../core/lock.js';
import type { FullContext } from '../context.js';
import type { Flags } from '../args.js';
import type { TickCalendar } from '../../daemon/schedule/timer-ticks.js';
import { withLedger } from '../with-ledger.js';
import { shortDuration, table, zoneStamp } from '../table.js';
import { counted } from '../../core/words.js';
import { terminalText } from '../../logs/terminal-text.js';
import { mark } from '../../core/profile.js';

export const help = `Usage: nightshift status [--json] [--prefix DIR] [--config PATH]

Budget, the next tick's decision (the ticks of the installed timer, DIR/nightshift.timer with
--prefix, default /etc/systemd/system: see nightshift next), held agents (rate limited or backed
off, and until when), the last ok session, locks, unpushed commits, the nightshift/ branches
holding work not on main (a conflict, conflict markers), the sessions running now (each with its
agent, how long, and its spend of what it reserved) and the last sessions.
The ticks line checks the installed timer's expected ticks of the last day (since the timer file
was written, if later) against the fires: "no tick recorded since 06:00; 3 expected" when the
timer went silent (a tick still running covers the ticks systemd folds into it); nothing is
checked where no timer is installed. The last fires are listed (see nightshift fires).
With NIGHTSHIFT_DATABASE_URL in the env file (a fleet, docs/fleet.md), the fleet's hosts too,
as the database knows them: each host's last heartbeat, its sessions running (live claims), its
spend and reservations of the fleet's day, its clock against the database's; and the sessions
running on any host. A database that cannot be reached is said in one line naming its
host:port/database (never the URL), and the rest is this host's own state as ever (exit 0).
--json: {budget: <as budget --json>, last_sessions: [...], next: <as next --json, with next_ticks>, holds: {...},
         locks: {run, git}, unpushed, branches: [{name, local, remote}], last_ok_at,
         invalid_agents: [{name, file, problems}], max_concurrent,
         running: [{id, agent, started_at, elapsed_ms, cost_usd, reserved_usd, supervisor_pid}],
         last_fires: [<as fires --json>, at most 5], fires_error: null|why,
         tick_gaps: null|{from, on_calendar, expected, missed: [ISO time], last_fire, since_last},
         fleet: null|{database, this_host, error: null|why, day: {date, sessions, cost_usd, reserved_usd},
                hosts: [{host, seen_at, age_ms, skew_ms, version, running, spent_today_usd, reserved_today_usd}],
                running: [<as fires --fleet --json>]}}
         branches: nightshift/ branches not merged into the vault's HEAD (remote: as last fetched
         or pushed)`;

export const stage = 'full';

type Early = { path: string | undefined; now: Date; modules: Promise<[typeof import('../../daemon/schedule/timer-ticks.js'), typeof import('../../daemon/tick/fires-view.js')]> };
let started: Early | null = null;

// Before the config loads (cli/main.ts): the modules the timer's ticks need, loaded beside it.
export function early({ env }: { flags: Flags; env: NodeJS.ProcessEnv }): Early {
  const modules = Promise.all([import('../../daemon/schedule/timer-ticks.js'), import('../../daemon/tick/fires-view.js')]);
  modules.catch(() => {});
  return (started = { path: env.PATH, now: new Date(), modules });
}

// The timer's ticks from now, and from where the tick gaps are looked for: systemd-analyze's lists
// as kept in state_dir while they cover them (daemon/schedule/elapses-kept.ts).
async function timerOf(ahead: Early, prefix: string | undefined, stateDir: string) {
  const [{ tickCalendar, timerTicksAsync }, { gapsFrom }] = await ahead.modules;
  const from = gapsFrom(ahead.now, tickCalendar(prefix));
  return Promise.all([
    timerTicksAsync(prefix, ahead.now, ahead.path, stateDir),
    from ? timerTicksAsync(prefix, from, ahead.path, stateDir).then((t) => ({ from, ticks: t.ticks })) : null,
  ]);
}

export async function run({ config, flags, io, logger, env }: FullContext): Promise<number> {
  const [{ status, unpushedOf, openBranchesOf }, { timerTicks, calendarLine }, { fleetLook }] = await Promise.all([import('../../daemon/tick/status.js'), import('../../daemon/schedule/timer-ticks.js'), import('../../daemon/tick/fleet-look.js')]);
  mark('status_modules');
  // The env file may have changed PATH, where systemd-analyze is looked for.
  const ahead = started && started.path === env.PATH ? started : early({ flags, env });
  const now = ahead.now;
  // The fleet's database (null without one), asked beside git and the ledger; never a failure.
  const fleet = fleetLook(config, env, io.redact, now);
  const unpushed = unpushedOf(config);
  const branches = openBranchesOf(config);
  mark('git_started');
  const [timer, before] = await timerOf(ahead, flags.prefix, config.state_dir);
  mark('timer_ticks');
  const past = (from: Date) => (before && from.getTime() === before.from.getTime() ? before.ticks : timerTicks(flags.prefix, from, env.PATH).ticks);
  // No ledger yet: the look made none (a file root made here would shut the service user out).
  let fresh = false;
  const s = await withLedger(config, logger, (ledger) => ((fresh = ledger.empty), status(config, ledger, now, timer, unpushed, past, branches, fleet)));
  mark('status_looked');
  if (flags.json) io.out(JSON.stringify(s));
  else {
    const tz = config.budget.timezone;
    const at = (iso: string) => zoneStamp(iso, tz);
    const age = s.last_ok_at ? `${shortDuration(Math.max(0, now.getTime() - Date.parse(s.last_ok_at)))} ago (${at(s.last_ok_at)})` : 'never';
    const lock = (l: LockOwner | null) => (l ? `held by pid ${l.pid} since ${at(l.since)}` : 'free');
    const rows: string[][] = [
      ['budget', `${s.budget.sessions} of ${s.budget.max_sessions} sessions, ${money(s.budget.cost_usd)} of ${money(s.budget.max_usd)} (${s.budget.date})`],
      ['next', `${s.next.starts ? s.next.agent : 'nothing'} (${s.next.reason})`],
      ['next at', `${s.next.tick_at ? at(s.next.tick_at) : 'none within 8 days'} (${calendarLine(s.next.calendar)})`],
      // The timer's ticks after the next, under it (the label as short as the others: the column stays).
      ...(s.next.next_ticks.length > 1 ? [['then', s.next.next_ticks.slice(1).map(at).join(', ')]] : []),
      ...windowLines(s.windows, config.budget.max_window_utilization).map((l) => ['window', l]),
      ...(s.window_hold ? [['held', `every agent: ${s.window_hold.reason}`]] : []),
      ...Object.entries(s.holds).map(([agent, h]) => ['held', `${agent} until ${at(h.until)}: ${h.reason}`]),
      ...s.invalid_agents.map((b) => ['invalid', `${b.name}: ${b.file}: ${b.problems.join('; ')} (skipped by the tick)`]),
      // Sessions running now, each with its agent, how long, and its spend of what it reserved.
      ...s.running.map((r) => ['running', `${r.agent} for ${shortDuration(r.elapsed_ms)}, ${money(r.cost_usd)}${r.reserved_usd === null ? '' : ` of ${money(r.reserved_usd)} reserved`} (${r.id}, pid ${r.supervisor_pid})`]),
      ...(s.max_concurrent > 1 ? [['slots', `${s.running.length} of ${s.max_concurrent} in use (sessions.max_concurrent)`]] : []),
      ['last ok', age],
      ...(fresh ? [['sessions', `no sessions yet (${path.join(config.state_dir, 'ledger.db')} is made by the first tick or run)`]] : []),
      ['run lock', lock(s.locks.run)],
      ['git lock', lock(s.locks.git)],
      ['unpushed', String(s.unpushed ?? 'n/a')],
      ['ticks', ticksLine(s, at)],
      ...s.branches.map((b) => ['branch', terminalText(`${b.name} (${b.remote ? `on ${config.git.remote}` : 'local only'}): work not on main until you merge it`)]),
    ];
    const note = (r: (typeof s.last_sessions)[number]) => [r.memory === 'unavailable' ? '(no memory tools)' : '', r.git?.branch ? terminalText(`(work on branch ${r.git.branch}, ${r.git.branch_pushed ? 'pushed' : 'local only'}: not on main until merged)`) : ''].filter(Boolean).join(' ');
    const sessions = s.last_sessions.map((r) => [at(r.started_at), r.agent, r.outcome, money(r.cost_usd), counted(r.turns, 'turn'), r.id, note(r)]);
    const fires = s.last_fires.map((f) => [at(f.at), `${f.kind}/${f.trigger}`, f.status === 'open' ? 'running' : f.action ?? '?', f.agent ?? '-', f.exit_code === null ? '-' : `exit ${f.exit_code}`, (f.reason ?? '').replace(/\s*\n\s*/g, ' ')]);
    io.out([table(rows), ...fleetLines(s.fleet, at), ...(fires.length ? ['', 'last fires (nightshift fires for more)', table(fires)] : []), ...(sessions.length ? ['', 'last sessions', table(sessions, [3])] : [])].join('\n'));
  }
  return EXIT.OK;
}

type Look = Awaited<ReturnType<typeof import('../../daemon/tick/status.js').status>>;

// Pure: the fleet's part of status: its database, the fleet's day, each host as its heartbeat left
// it (how long ago, its live claims, its spend and holds of the day, its clock), the sessions
// running anywhere; or why the database cannot be seen (this host's own state is the rest).
export function fleetLines(f: Look['fleet'], at: (iso: string) => string): string[] {
  if (!f) return [];
  if (f.error) return ['', table([['fleet', `${f.database}: ${f.error} (this host's own state above; nothing from the other hosts)`]])];
  const day = f.day ? `the fleet's day ${f.day.date}: ${counted(f.day.sessions, 'session')}, ${money(f.day.cost_usd)} spent${f.day.reserved_usd ? `, ${money(f.day.reserved_usd)} reserved` : ''}` : '';
  const hosts = f.hosts.map((h) => [
    `${h.host}${h.host === f.this_host ? ' (this one)' : ''}`, `heard ${shortDuration(h.age_ms)} ago`, `${h.running} running`,
    `${money(h.spent_today_usd)} spent`, h.reserved_today_usd ? `${money(h.reserved_today_usd)} reserved` : '', `clock ${h.skew_ms >= 0 ? '+' : ''}${(h.skew_ms / 1000).toFixed(1)} s`, `v${h.version}`,
  ]);
  const running = f.running.map((c, i) => [i ? '' : 'running', `${c.agent} on ${c.host} since ${at(c.claimed_at)}${c.session ? ` (${c.session})` : ''}`]);
  return [
    '', `fleet ${f.database}: ${counted(f.hosts.length, 'host')}; ${day}`,
    hosts.length ? table(hosts) : 'no host heard yet (a host is heard at each start that connects)',
    ...(running.length ? [table(running)] : []),
  ];
}

// The timer's expected ticks against the fires: the silence now and any earlier gap, or that none
// was missed; nothing is claimed where no timer is installed.
function ticksLine(s: Look, at: (iso: string) => string): string {
  if (s.fires_error) return `fires cannot be read: ${s.fires_error}`;
  const g = s.tick_gaps;
  if (!g) return s.next.calendar.source === 'timer' ? `not checked (${s.next.calendar.assumed ?? 'the timer\'s times are unknown'})` : `not checked: no timer installed at ${s.next.calendar.file}`;
  if (!g.missed.length) return `every expected tick since ${at(g.from)} left a fire (${g.expected})`;
  const stamp = (iso: string) => at(iso);
  const now = g.since_last ? `no tick recorded since ${g.last_fire ? stamp(g.last_fire) : `${stamp(g.from)} (none since)`}; ${g.since_last} expected` : null;
  const earlier = g.missed.length - g.since_last;
  const before = earlier ? `${earlier} earlier expected tick${earlier === 1 ? '' : 's'} left no fire (the first at ${stamp(g.missed[0])})` : null;
  return [now, before].filter(Boolean).join('; ');
}
