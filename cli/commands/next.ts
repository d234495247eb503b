// `nightshift next [--at TIME]`: the dispatch decision explained, and when each agent is next due.
import { dayOf } from '../../budget/day.js';
import { EXIT, UsageError } from '../../daemon/errors.js';
import type { FullContext } from '../context.js';
import { withLedger } from '../with-ledger.js';

export const help = `Usage: nightshift next [--at ISO-TIME] [--json] [--config PATH]

Explains the dispatch decision at --at (default now) without running anything: which rule won, and
for every rule before it, why not. A held agent's rule says "held until TIME: why" (a rate limit:
the API's reset time, or a backoff; backoff.after_failures failures in a row wait backoff.base,
doubling with each further failure up to backoff.max). Then when each agent is next due (its
rules' days, hours, run limits and min_interval; within 8 days), in budget.timezone.
--json: {agent: name|null, rule: index|null, reason, rules: [{index, agent, matched, why, next_due}],
         holds: {agent: {kind: "rate_limited"|"backoff", until, reason, failures, session}},
         next_due: {<agent>: ISO time|null}}   (an agent no rule names is null)`;

export const stage = 'full';

// `2026-12-01 14:00` in the time zone (the budget's: the one rules are written in).
function localStamp(t: Date, timezone: string): string {
  return new Intl.DateTimeFormat('sv-SE', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t);
}

const roughly = (ms: number) => {
  const m = Math.ceil(ms / 60_000);
  return m < 60 ? `${m}m` : m < 48 * 60 ? `${Math.floor(m / 60)}h${m % 60 ? ` ${m % 60}m` : ''}` : `${Math.round(m / 1440)}d`;
};

export async function run({ config, flags, io, logger }: FullContext): Promise<number> {
  const at = flags.at === undefined ? new Date() : new Date(flags.at);
  if (Number.isNaN(at.getTime())) throw new UsageError(`Expected --at as an ISO time like 2026-12-01T15:00:00Z, got \`${flags.at}\``);
  const [{ readAgents }, { explain }, { nextDueByAgent }] = await Promise.all([import('../../daemon/config/agents.js'), import('../../daemon/schedule/explain.js'), import('../../daemon/schedule/next-due.js')]);
  const { agents, broken } = readAgents(config);
  const tz = config.budget.timezone;
  const { windowHold, windowLines } = await import('../../budget/windows.js');
  const { d, due, windows } = await withLedger(config, logger, (l) => ({
    windows: l.windows(),
    d: explain(config, agents, l, at, broken),
    due: nextDueByAgent(config.dispatch, l.history(dayOf(at, tz)), Object.fromEntries(agents.map((a) => [a.name, { maxRunsPerDay: a.maxRunsPerDay }])), at, tz),
  }));
  const iso = (t: Date | null | undefined) => (t ? t.toISOString() : null);
  // Every agent, those no rule names too (they run only by `nightshift run`).
  const nextDue = Object.fromEntries(agents.map((a) => [a.name, iso(due.agents[a.name])]));
  // A window past its share holds every start until it resets (budget/windows.ts).
  const hold = windowHold(windows, config.budget.max_window_utilization, at);
  if (flags.json) io.out(JSON.stringify({ ...d, rules: d.rules.map((r) => ({ ...r, next_due: iso(due.rules[r.index]) })), next_due: nextDue, windows, window_hold: hold }));
  else {
    const lines = [d.agent ? `next: ${d.agent} (${d.reason})` : `next: nothing (${d.reason})`];
    if (hold) lines.push(`  but nothing starts: ${hold.reason}`);
    for (const l of windowLines(windows, config.budget.max_window_utilization)) lines.push(`  window ${l}`);
    for (const r of d.rules) lines.push(`  [${r.index}] ${r.agent.padEnd(16)} ${r.matched ? 'due' : r.why}`);
    for (const [agent, h] of Object.entries(d.holds)) if (!d.rules.some((r) => r.agent === agent)) lines.push(`  held: ${agent} until ${h.until} (${h.reason})`);
    lines.push(`next due (${tz}):`);
    for (const a of agents) {
      const t = due.agents[a.name];
      const when = t === undefined ? 'no dispatch rule (run it with nightshift run)' : t === null ? 'not within 8 days' : t.getTime() === at.getTime() ? 'now' : `${localStamp(t, tz)} (in ${roughly(t.getTime() - at.getTime())})`;
      lines.push(`  ${a.name.padEnd(16)} ${when}`);
    }
    io.out(lines.join('\n'));
  }
  return EXIT.OK;
}
