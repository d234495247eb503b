// `nightshift sessions` (aligned columns, filters) and `nightshift show ID [--transcript]`.
import fs from 'node:fs';
import { dayOf } from '../../config/day.js';
import { money } from '../../core/money.js';
import { counted } from '../../core/words.js';
import type { Logger } from '../../logs/logger.js';
import { terminalText } from '../../logs/terminal-text.js';
import { OUTCOMES } from '../../sessions/run/outcome.js';
import { agentNames } from '../../config/agent-names.js';
import type { Config } from '../../config/schema.js';
import { parseDuration } from '../../config/duration.js';
import { EXIT, UsageError } from '../../core/errors.js';
import { toRecord, type SessionRecord } from '../../budget/session-record.js';
import { didYouMean } from '../../core/suggest.js';
import { shortDuration, table, zoneStamp } from '../table.js';
import { renderTranscript } from '../transcript-view.js';
import { gitLine, gitNotes } from '../git-line.js';
import { withLedger } from '../with-ledger.js';
import type { FullContext } from '../context.js';

type Out = { out: (text: string) => void };
export type SessionsFlags = { json?: boolean; limit?: string; agent?: string; outcome?: string; since?: string; transcript?: boolean };

// The first instant of `date` (YYYY-MM-DD) in `timezone`.
export function dayStart(date: string, timezone: string): Date {
  let t = Date.parse(`${date}T00:00:00Z`) - 15 * 3_600_000;
  while (dayOf(new Date(t), timezone) < date) t += 15 * 60_000;
  return new Date(t);
}

// --since: a duration back from now (`2d`, `12h`), a day (`2026-12-01`, in budget.timezone) or an ISO time.
export function parseSince(value: string, now: Date, timezone: string): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return dayStart(value, timezone);
  const days = /^(\d+)d$/.exec(value);
  if (days) return new Date(now.getTime() - Number(days[1]) * 86_400_000);
  const ms = parseDuration(value);
  if (ms !== null) return new Date(now.getTime() - ms);
  const at = new Date(value);
  if (!Number.isNaN(at.getTime()) && /^\d{4}-/.test(value)) return at;
  throw new UsageError(`Expected --since as a time back (\`2d\`, \`12h\`), a day (\`2026-12-01\`) or an ISO time, got \`${value}\``);
}

// The model turns, and the API calls the proxy metered beside them (`1/2`: 1 turn, 2 calls).
const turnsCell = (r: SessionRecord) => (r.api_calls === null ? String(r.turns) : `${r.turns}/${r.api_calls}`);

// Pure: the rows as aligned columns, times in the budget's zone; each cell one escaped line.
export function sessionsTable(rows: SessionRecord[], timezone: string): string {
  const head = ['START', 'AGENT', 'OUTCOME', 'COST', 'TURNS/CALLS', 'DURATION', 'ID'];
  const body = rows.map((r) => [
    zoneStamp(r.started_at, timezone), r.agent, r.outcome, `${r.cost_estimated ? '~' : ''}${money(r.cost_usd)}`, turnsCell(r), shortDuration(r.duration_ms), r.id,
  ].map((c) => terminalText(c)));
  return table([head, ...body], [3, 4, 5]);
}

// Pure: below the table, each session whose work is not on main, and where it is.
export function branchNotes(rows: SessionRecord[]): string[] {
  const held = rows.filter((r) => r.git?.branch);
  if (!held.length) return [];
  return ['', ...held.map((r) => terminalText(`${r.id}: work on branch ${r.git!.branch} (${r.git!.branch_pushed ? 'pushed' : 'local only'}), not on main until merged`))];
}

export async function sessionsCommand(config: Config, flags: SessionsFlags, io: Out, logger: Logger, now = new Date()): Promise<number> {
  const limit = flags.limit === undefined ? 20 : Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`Expected --limit to be a whole number above 0, got \`${flags.limit}\``);
  const outcomes = [...OUTCOMES, 'running'];
  if (flags.outcome !== undefined && !outcomes.includes(flags.outcome)) {
    throw new UsageError(`Expected --outcome to be one of ${outcomes.join(', ')}, got \`${flags.outcome}\`.${didYouMean(flags.outcome, outcomes)}`);
  }
  const since = flags.since === undefined ? undefined : parseSince(flags.since, now, config.budget.timezone).toISOString();
  const rows = await withLedger(config, logger, (l) => l.list({ limit, agent: flags.agent, outcome: flags.outcome, since }).map(toRecord));
  if (flags.agent !== undefined && !rows.length) {
    // A typo is the likelier story than an agent with no sessions: say what was meant.
    const known = agentNames(config.agents_dir);
    if (!known.includes(flags.agent)) throw new UsageError(`No agent \`${flags.agent}\` (known: ${known.join(', ') || 'none'}).${didYouMean(flags.agent, known)}`);
  }
  if (flags.json) {
    // Each one's fire's trace, only where there is one, as show and run --json say it.
    const { sessionTraces } = await import('../../daemon/tick/fires-view.js');
    const traces = sessionTraces(config, rows.map((r) => r.id));
    for (const r of rows) {
      const trace = traces.get(r.id);
      if (trace) r.trace_id = trace;
    }
    io.out(terminalText(JSON.stringify(rows)));
  }
  else if (!rows.length) io.out(flags.agent || flags.outcome || flags.since ? 'no sessions match' : 'no sessions yet');
  else io.out([sessionsTable(rows, config.budget.timezone), ...branchNotes(rows)].join('\n'));
  return EXIT.OK;
}

// One session as `show`, `run` and `tick` print it; the session's own words (result, error) are
// escaped for the terminal, the result as a block that keeps its lines.
export function printRecord(io: Out, r: SessionRecord, json: boolean | undefined): void {
  if (json) return io.out(terminalText(JSON.stringify(r)));
  const one = (t: string) => terminalText(t);
  const lines = [
    `session   ${one(r.id)}`,
    `agent     ${one(r.agent)}`,
    `outcome   ${one(r.outcome)}`,
    `cost      ${money(r.cost_usd)}${r.cost_estimated ? ' (estimated)' : ''} metered${r.cli_cost_usd !== null ? `, ${money(r.cli_cost_usd)} by the CLI's count` : ', none reported by the CLI'}${r.reserved_usd !== null ? ` (reserved ${money(r.reserved_usd)})` : ''}`,
    `turns     ${counted(r.turns, 'turn')}${r.api_calls === null ? '' : ` (${counted(r.api_calls, 'API call')} metered by the proxy)`}`,
    `duration  ${shortDuration(r.duration_ms)}`,
    `started   ${r.started_at}`,
  ];
  if (r.error) lines.push(`error     ${terminalText(r.error, { block: true })}`);
  if (r.result) lines.push(`result    ${terminalText(r.result.length > 400 ? `${r.result.slice(0, 400)}…` : r.result, { block: true })}`);
  if (r.git) lines.push(`git       ${terminalText(gitLine(r.git), { block: true })}`, ...gitNotes(r.git).map((n) => `          ${one(n)}`));
  if (r.transcript) lines.push(`transcript ${one(r.transcript)}`);
  if (r.trace_id) lines.push(`trace     ${one(r.trace_id)}`);
  io.out(lines.join('\n'));
}

export async function showCommand(config: Config, id: string, flags: SessionsFlags, io: Out, logger: Logger): Promise<number> {
  // A unique prefix of an id names it (the stamp and agent are enough to type).
  const row = await withLedger(config, logger, (l) => {
    const exact = l.get(id);
    if (exact || !id) return exact;
    const matches = l.recent(1000).filter((r) => r.id.startsWith(id));
    if (matches.length > 1) throw new UsageError(`\`${id}\` is the start of ${matches.length} sessions (${matches.slice(0, 5).map((r) => r.id).join(', ')}${matches.length > 5 ? ', …' : ''}): give more of the id`);
    return matches[0] ?? null;
  });
  if (!row) {
    const near = await withLedger(config, logger, (l) => l.recent(200).map((r) => r.id));
    throw new UsageError(`No session \`${id}\` in the ledger.${didYouMean(id, near)} See \`nightshift sessions\`.`);
  }
  const r = toRecord(row);
  // Its fire's trace (telemetry on): where to look it up in the collector.
  const { sessionTraces } = await import('../../daemon/tick/fires-view.js');
  // Only where there is one, as run --json says it: a site without telemetry sees no such field.
  const trace = sessionTraces(config, [r.id]).get(r.id);
  if (trace) r.trace_id = trace;
  if (!flags.transcript) return printRecord(io, r, flags.json), EXIT.OK;
  if (!r.transcript) throw new UsageError(`Session \`${id}\` has no transcript`);
  let text: string;
  try {
    text = fs.readFileSync(r.transcript, 'utf8');
  } catch (err) {
    throw new UsageError(`Cannot read the transcript ${r.transcript}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  // The raw JSONL as the CLI wrote it, with C1, bidi and any raw control shown as `\u` escapes:
  // inside a JSON string that is the same text, so each line parses to what was stored.
  if (flags.json) io.out(terminalText(text.trimEnd(), { block: true }));
  else io.out(`${terminalText(`${r.id}  ${r.agent}  ${r.outcome}`)}\n${renderTranscript(text, { turns: r.turns })}`);
  return EXIT.OK;
}

export const help = `Usage: nightshift sessions [--json] [--limit N] [--agent NAME] [--outcome O] [--since WHEN] [--config PATH]

The latest sessions, newest first (default 20), as columns: start (budget.timezone), agent,
outcome, cost (~ an estimate), turns/calls (the session's model turns, then the API calls its
proxy metered: the CLI makes calls of its own, so 1/2 is a normal one-turn session), duration, id.
  --agent NAME   only this agent's
  --outcome O    only this outcome (ok, error, rate_limited, max_turns, timeout, stalled, loop,
                 budget, spawn_failed, abandoned, running)
  --since WHEN   started since: a time back (2d, 12h, 30m), a day (2026-12-01) or an ISO time
--json: an array, each shaped like \`run --json\` (trace_id where its fire was traced).`;

export const stage = 'full';

export async function run({ config, flags, io, logger }: FullContext): Promise<number> {
  return sessionsCommand(config, flags, io, logger);
}
