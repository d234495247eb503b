// `nightshift status`: one look at the host, without the session machinery.
import { mark } from '../../core/profile.js';
import path from 'node:path';
import { silentLogger } from '../../logs/logger.js';
import { dayOf } from '../../config/day.js';
import type { Ledger } from '../../budget/ledger.js';
import { readAgentsCached } from '../../config/agent-file.js';
import type { Config } from '../../config/schema.js';
import { VaultGit } from '../../vault/git-sync.js';
import { lockOwner } from '../../core/lock.js';
import { isAlive } from '../../core/process-tree.js';
import { forecastOf } from '../schedule/explain.js';
import type { Forecast } from '../schedule/forecast.js';
import { nextTicks, type TickCalendar } from '../schedule/timer-ticks.js';
import { currentHolds } from '../schedule/holds.js';
import { windowHold } from '../../budget/windows.js';
import { budgetReport } from './budget-report.js';
import { toRecord } from '../../budget/session-record.js';
import { GAP_WINDOW_MS, readFires, timerGaps } from './fires-view.js';
import type { FleetLook } from './fleet-look.js';

// Git's answer starts before the ledger opens: its process runs while the ledger is read. (A
// failure still reaches the caller, when it awaits.)
export function unpushedOf(config: Config): Promise<number | null> {
  if (!config.git.enabled) return Promise.resolve(null);
  const pending = new VaultGit(config, silentLogger()).unpushedCount();
  pending.catch(() => {});
  return pending;
}

// The nightshift/ branches holding work that is not on main (empty: git sync off, or none).
export function openBranchesOf(config: Config): Promise<Array<{ name: string; local: boolean; remote: boolean }>> {
  if (!config.git.enabled) return Promise.resolve([]);
  const pending = new VaultGit(config, silentLogger()).openBranches();
  pending.catch(() => {});
  return pending;
}

// status's `next`: the tick's decision, whether it starts, and each agent's next run.
function nextOf(f: Forecast, calendar: TickCalendar, ticks: Date[], at: Date) {
  const iso = (t: Date | null) => (t ? t.toISOString() : null);
  return { ...f.tick.decision, agent: f.tick.agent, starts: f.tick.starts, reason: f.tick.reason, tick_at: iso(f.tickAt), next_ticks: nextTicks(ticks, at), calendar, next_due: Object.fromEntries(Object.entries(f.agents).map(([a, t]) => [a, iso(t)])), why: f.why, waits: f.waits };
}

// `nightshift status --json`: one look at the host. `timer`: when its ticks come (../schedule/timer-ticks.ts).
// `past`: the timer's elapses from an instant (timer-ticks.ts), for the ticks it left without a fire.
// `fleet`: the fleet as its database answers (./fleet-look.ts; null without one), started by the
// caller before the ledger opens, so its round trips run beside the look.
export async function status(config: Config, ledger: Ledger, at: Date, timer: { ticks: Date[]; calendar: TickCalendar }, unpushed: Promise<number | null> = unpushedOf(config), past: (from: Date) => Date[] = () => [], branches = openBranchesOf(config), fleet: Promise<FleetLook | null> = Promise.resolve(null)) {
  const { agents, broken } = await readAgentsCached(config);
  const fires = firesLook(config, at, timer.calendar, past);
  mark('fires_looked');
  const look = {
    invalid_agents: broken,
    budget: budgetReport(config, ledger, dayOf(at, config.budget.timezone)),
    last_sessions: ledger.recent(5).map(toRecord),
    // What the tick will really do (the budget and a usage window too), and when each agent runs.
    next: nextOf(forecastOf(config, agents, ledger, at, timer.ticks, broken), timer.calendar, timer.ticks, at),
    holds: currentHolds(config, ledger, at),
    // A subscription's usage windows as replies last reported them, and whether they hold starts.
    windows: ledger.windows(),
    window_hold: windowHold(ledger.windows(), config.budget.max_window_utilization, at),
    locks: { run: lockOwner(path.join(config.state_dir, 'run')), git: lockOwner(config.git.lock_file) },
    // The sessions running now, side by side (sessions.max_concurrent): a live supervisor's rows.
    running: ledger.live(isAlive).map((r) => ({
      id: r.id, agent: r.agent, started_at: r.started_at, elapsed_ms: Math.max(0, at.getTime() - Date.parse(r.started_at)),
      cost_usd: r.cost_usd ?? 0, reserved_usd: r.reserved_usd ?? null, supervisor_pid: r.supervisor_pid,
    })),
    max_concurrent: config.sessions.max_concurrent,
  };
  mark('ledger_looked');
  const [u, b] = [await unpushed, await branches];
  mark('git_answered');
  const f = await fleet;
  mark('fleet_answered');
  return { ...look, ...fires, unpushed: u, branches: b, last_ok_at: ledger.lastOkAt(), fleet: f };
}

// The last fires and the timer's gaps; a fires file that cannot be read is said, not fatal.
function firesLook(config: Config, at: Date, calendar: TickCalendar, past: (from: Date) => Date[]) {
  try {
    const rows = readFires(config, { since: new Date(at.getTime() - GAP_WINDOW_MS) }, at);
    const g = timerGaps(rows, at, calendar, past);
    const iso = (d: Date | null) => (d ? d.toISOString() : null);
    const gaps = g ? { from: g.from.toISOString(), on_calendar: g.calendar, expected: g.expected, missed: g.missed.map((d) => d.toISOString()), last_fire: iso(g.last_fire), since_last: g.since_last } : null;
    return { last_fires: rows.slice(0, LAST_FIRES), tick_gaps: gaps, fires_error: null as string | null };
  } catch (err) {
    return { last_fires: [], tick_gaps: null, fires_error: (err as Error).message };
  }
}

const LAST_FIRES = 5;
