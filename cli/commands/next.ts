// `nightshift next [--at TIME]`: what the tick will do, explained, and when each agent will run.
import { EXIT, UsageError } from '../../core/errors.js';
import type { FullContext } from '../context.js';
import { withLedger } from '../with-ledger.js';
import { zoneStamp } from '../table.js';

export const help = `Usage: nightshift next [--at ISO-TIME] [--prefix DIR] [--json] [--config PATH]

Explains what the first tick from --at (default now) will do, without running anything: which rule won,
for every rule before it why not, and whether its agent starts (the day's budget and a usage window
are checked after dispatch, as the tick does: a rule can be due while nothing starts). A held
agent's rule says "held until TIME: why" (a rate limit: the API's reset time, or a backoff;
backoff.after_failures failures in a row wait backoff.base, doubling with each further failure up
to backoff.max). Then when each agent will really run, within 8 days, in budget.timezone: the ticks
played forward, each start counted, so a cap reached today, a hold and a rule an earlier always-due
rule shadows are in the answer; an agent that will not run, or not before then, says why (a
max_runs_per_day used up: every session started counts, a failed one too). The ticks are the times the
installed timer fires: the OnCalendar= of DIR/nightshift.timer (--prefix, default
/etc/systemd/system, as systemd install writes it), else the default hourly, expanded by
systemd-analyze calendar; without systemd-analyze, hourly ticks are assumed, and said.
--json: {agent: name|null, rule: index|null, starts: bool, reason, tick_at: ISO time|null,
         next_ticks: [ISO time] (the timer's next 6 ticks),
         calendar: {on_calendar: [spec], source: "timer"|"default", file, assumed: null|why},
         rules: [{index, agent, matched, why, next_due}],
         holds: {agent: {kind: "rate_limited"|"backoff", until, reason, failures, session}},
         next_due: {<agent>: ISO time|null}, why: {<agent>: reason it will not run},
         waits: {<agent>: reason it will not run before its next_due}, windows, window_hold,
         beside: {max_concurrent, running: [agent], starts: [agent], waits: [{agent, why}]}: the
         agents that tick starts side by side, if the sessions running now still run then)
         (an agent no rule names is null)`;

export const stage = 'full';

const roughly = (ms: number) => {
  const m = Math.ceil(ms / 60_000);
  return m < 60 ? `${m}m` : m < 48 * 60 ? `${Math.floor(m / 60)}h${m % 60 ? ` ${m % 60}m` : ''}` : `${Math.round(m / 1440)}d`;
};

export async function run({ config, flags, io, logger, env }: FullContext): Promise<number> {
  const at = flags.at === undefined ? new Date() : new Date(flags.at);
  if (Number.isNaN(at.getTime())) throw new UsageError(`Expected --at as an ISO time like 2026-12-01T15:00:00Z, got \`${flags.at}\``);
  const [{ readAgents }, { forecastOf }, { timerTicks, calendarLine, nextTicks }] = await Promise.all([
    import('../../config/agents.js'), import('../../daemon/schedule/explain.js'), import('../../daemon/schedule/timer-ticks.js'),
  ]);
  const { agents, broken } = readAgents(config);
  const tz = config.budget.timezone;
  const { windowHold, windowLines } = await import('../../budget/windows.js');
  const { ticks, calendar } = timerTicks(flags.prefix, at, env.PATH);
  const { besidePlan } = await import('../../daemon/tick/beside-plan.js');
  const { f, windows, beside } = await withLedger(config, logger, (l) => {
    const f = forecastOf(config, agents, l, at, ticks, broken);
    return { windows: l.windows(), f, beside: besidePlan(config, agents, broken, l, f.tickAt ?? at) };
  });
  const d = f.tick;
  const iso = (t: Date | null | undefined) => (t ? t.toISOString() : null);
  // Every agent, those no rule names too (they run only by `nightshift run`).
  const nextDue = Object.fromEntries(agents.map((a) => [a.name, iso(f.agents[a.name])]));
  if (flags.json) {
    io.out(JSON.stringify({
      agent: d.agent, rule: d.rule, starts: d.starts, reason: d.reason, tick_at: iso(f.tickAt), next_ticks: nextTicks(ticks, at), calendar, rules: d.decision.rules.map((r) => ({ ...r, next_due: iso(f.rules[r.index]) })),
      holds: f.holds, next_due: nextDue, why: f.why, waits: f.waits, windows, window_hold: windowHold(windows, config.budget.max_window_utilization, at), beside,
    }));
  } else {
    const when = (t: Date) => (t.getTime() === at.getTime() ? 'now' : `${zoneStamp(t.toISOString(), tz)} (in ${roughly(t.getTime() - at.getTime())})`);
    const lines = [d.starts ? `next: ${d.agent} (${d.reason})` : `next: nothing (${d.reason})`];
    lines.push(`  tick ${f.tickAt ? when(f.tickAt) : 'none within 8 days'}: ${calendarLine(calendar)}`);
    const upcoming = nextTicks(ticks, at);
    if (upcoming.length) lines.push(`  next ticks ${upcoming.map((t) => zoneStamp(t, tz)).join(', ')}`);
    for (const l of windowLines(windows, config.budget.max_window_utilization)) lines.push(`  window ${l}`);
    if (beside.max_concurrent > 1) {
      lines.push(`  side by side (sessions.max_concurrent ${beside.max_concurrent}${beside.running.length ? `, running now: ${beside.running.join(', ')}` : ''}): the tick starts ${beside.starts.length ? beside.starts.join(', ') : 'none'}`);
      for (const w of beside.waits) lines.push(`    ${w.agent} waits: ${w.why}`);
    }
    for (const r of d.decision.rules) lines.push(`  [${r.index}] ${r.agent.padEnd(16)} ${r.matched ? 'due' : r.why}`);
    for (const [agent, h] of Object.entries(f.holds)) if (!d.decision.rules.some((r) => r.agent === agent)) lines.push(`  held: ${agent} until ${zoneStamp(h.until, tz)} (${h.reason})`);
    lines.push('will run:');
    for (const a of agents) {
      const t = f.agents[a.name];
      lines.push(`  ${a.name.padEnd(16)} ${t === undefined ? 'no dispatch rule (run it with nightshift run)' : t === null ? `not within 8 days${f.why[a.name] ? `: ${f.why[a.name]}` : ''}` : `${when(t)}${f.waits[a.name] ? `, not before: ${f.waits[a.name]}` : ''}`}`);
    }
    io.out(lines.join('\n'));
  }
  return EXIT.OK;
}
