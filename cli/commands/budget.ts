// `nightshift budget [--date D] [--days N]`: one day against the limits, or N days side by side
// with a bar each (the same numbers in --json as data).
import { dayOf } from '../../config/day.js';
import { money } from '../../core/money.js';
import { windowHold, windowLines } from '../../budget/windows.js';
import type { Logger } from '../../logs/logger.js';
import { budgetReport } from '../../daemon/tick/budget-report.js';
import type { Config } from '../../config/schema.js';
import { EXIT, UsageError } from '../../core/errors.js';
import { table } from '../table.js';
import { withLedger } from '../with-ledger.js';
import type { FullContext } from '../context.js';
import { counted } from '../../core/words.js';

type Out = { out: (text: string) => void };
type Day = ReturnType<typeof budgetReport>;

// The N calendar days ending at `last` (YYYY-MM-DD), oldest first.
export function daysEnding(last: string, n: number): string[] {
  const end = Date.parse(`${last}T12:00:00Z`);
  return Array.from({ length: n }, (_, i) => new Date(end - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

// Pure: a bar of `width` cells for `value` out of `max` (eighths, so small spends still show);
// `ascii`: whole cells of `#` (a pipe, a log, NO_COLOR), at least one for any spend.
export function bar(value: number, max: number, width = 20, ascii = false): string {
  if (max <= 0 || value <= 0) return '';
  if (ascii) return '#'.repeat(Math.max(1, Math.round((value / max) * width)));
  const eighths = Math.max(1, Math.round((value / max) * width * 8));
  return '█'.repeat(Math.floor(eighths / 8)) + (eighths % 8 ? ' ▏▎▍▌▋▊▉'[eighths % 8] : '');
}

// Pure: the days as rows, each with its bar scaled to the day's USD limit (or the largest day).
export function daysChart(days: Day[], o: { ascii?: boolean } = {}): string {
  const scale = Math.max(days[0]?.max_usd ?? 0, ...days.map((d) => d.cost_usd));
  const rows = days.map((d) => [d.date, `${d.sessions}/${d.max_sessions}`, money(d.cost_usd), d.reserved_usd ? money(d.reserved_usd) : '-', bar(d.cost_usd + d.reserved_usd, scale, 20, o.ascii)]);
  return table([['DAY', 'SESSIONS', 'SPENT', 'RESERVED', `OF ${money(days[0]?.max_usd ?? 0)} A DAY`], ...rows], [1, 2, 3]);
}

// The subscription's usage windows (none with an API key), and whether they hold starts now.
function windowText(windows: Parameters<typeof windowLines>[0], limit: number): string[] {
  if (!windows.length) return [];
  const hold = windowHold(windows, limit, new Date());
  return ['usage windows (subscription)', ...windowLines(windows, limit).map((l) => `  ${l}`), ...(hold ? [`  no session starts: ${hold.reason}`] : [])];
}

// `ascii`: the bars in plain `#` (stdout not a terminal, or NO_COLOR set).
export async function budgetCommand(config: Config, flags: { json?: boolean; date?: string; days?: string }, io: Out, logger: Logger, ascii = true): Promise<number> {
  // A real calendar day: 2026-13-01 and 2026-02-30 are not.
  if (flags.date !== undefined && !isCalendarDay(flags.date)) throw new UsageError(`Expected --date as a calendar day YYYY-MM-DD, got \`${flags.date}\``);
  const n = flags.days === undefined ? null : Number(flags.days);
  if (n !== null && (!Number.isInteger(n) || n < 1 || n > 366)) throw new UsageError(`Expected --days to be a whole number from 1 to 366, got \`${flags.days}\``);
  const date = flags.date ?? dayOf(new Date(), config.budget.timezone);
  if (n !== null) {
    const { days, windows } = await withLedger(config, logger, (l) => ({ days: daysEnding(date, n).map((d) => budgetReport(config, l, d)), windows: l.windows() }));
    if (flags.json) io.out(JSON.stringify({ timezone: config.budget.timezone, days, windows }));
    else io.out([`${days[0].date} .. ${date} (${config.budget.timezone})`, daysChart(days, { ascii }), ...windowText(windows, config.budget.max_window_utilization)].join('\n'));
    return EXIT.OK;
  }
  const { b, windows } = await withLedger(config, logger, (l) => ({ b: budgetReport(config, l, date), windows: l.windows() }));
  if (flags.json) io.out(JSON.stringify({ ...b, windows }));
  else {
    const lines = [
      `${b.date} (${config.budget.timezone})`,
      `sessions  ${b.sessions} of ${b.max_sessions}`,
      `spent     ${money(b.cost_usd)} of ${money(b.max_usd)} (metered at the API proxy)`,
      `reserved  ${money(b.reserved_usd)} by running sessions`,
      `left      ${money(b.left_usd)}: a session starts with up to ${money(b.max_usd_per_session)}, and not below ${money(b.min_session_usd)}`,
    ];
    for (const [name, v] of Object.entries(b.by_agent)) lines.push(`  ${name.padEnd(16)} ${counted(v.sessions, 'session')}  ${money(v.cost_usd)}`);
    lines.push(...windowText(windows, config.budget.max_window_utilization));
    io.out(lines.join('\n'));
  }
  return EXIT.OK;
}

export const help = `Usage: nightshift budget [--json] [--date YYYY-MM-DD] [--days N] [--config PATH]

The day's sessions and spend against the limits (the day in budget.timezone; default today).
Spend is the meter's: every API call priced at the proxy from the API's own usage. Reserved is
what running sessions still hold: a session reserves up to max_usd_per_session of what is left
when it starts, and its calls are fitted into that.
--days N: the N days ending at --date (default today), one row each with a bar of the day's spend
and reservations against max_usd_per_day: unicode blocks at a terminal, plain # when stdout is
not a terminal or NO_COLOR is set.
With a subscription (CLAUDE_CODE_OAUTH_TOKEN), the usage windows its replies last reported, each
with its reset; past budget.max_window_utilization no session starts until that window resets.
--json: {date, sessions, max_sessions, cost_usd, reserved_usd, left_usd, max_usd,
         max_usd_per_session, min_session_usd, by_agent: {name: {sessions, cost_usd}},
         windows: [{name, utilization, resets_at, seen_at}]}
--json --days N: {timezone, days: [<as --json>, ...]} oldest first`;

export const stage = 'full';

export async function run({ config, flags, io, logger, env }: FullContext): Promise<number> {
  return budgetCommand(config, flags, io, logger, !io.stdoutIsTTY || !!env.NO_COLOR);
}

const isCalendarDay = (d: string) => {
  const t = Date.parse(`${d}T00:00:00Z`);
  return /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === d;
};
