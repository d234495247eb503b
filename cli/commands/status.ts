// `nightshift status`: budget, the next decision, holds, locks, unpushed commits, last sessions.
import { money } from '../../budget/money.js';
import { windowLines } from '../../budget/windows.js';
import { EXIT } from '../../daemon/errors.js';
import type { LockOwner } from '../../daemon/lock.js';
import type { FullContext } from '../context.js';
import { withLedger } from '../with-ledger.js';

export const help = `Usage: nightshift status [--json] [--config PATH]

Budget, the next decision, held agents (rate limited or backed off, and until when), the last ok
session, locks, unpushed commits and the last sessions.
--json: {budget: <as budget --json>, last_sessions: [...], next: <as next --json>, holds: {...},
         locks: {run, git}, unpushed, last_ok_at, invalid_agents: [{name, file, problems}]}`;

export const stage = 'full';

export async function run({ config, flags, io, logger }: FullContext): Promise<number> {
  const { status, unpushedOf } = await import('../../daemon/tick/status.js');
  const now = new Date();
  const unpushed = unpushedOf(config);
  const s = await withLedger(config, logger, (ledger) => status(config, ledger, now, unpushed));
  if (flags.json) io.out(JSON.stringify(s));
  else {
    const age = s.last_ok_at ? `${Math.round((now.getTime() - Date.parse(s.last_ok_at)) / 3_600_000)}h ago (${s.last_ok_at})` : 'never';
    const lock = (l: LockOwner | null) => (l ? `held by pid ${l.pid} since ${l.since}` : 'free');
    io.out([
      `budget    ${s.budget.sessions} of ${s.budget.max_sessions} sessions, ${money(s.budget.cost_usd)} of ${money(s.budget.max_usd)} (${s.budget.date})`,
      `next      ${s.next.starts ? s.next.agent : 'nothing'} (${s.next.reason})`,
      ...windowLines(s.windows, config.budget.max_window_utilization).map((l) => `window    ${l}`),
      ...(s.window_hold ? [`held      every agent: ${s.window_hold.reason}`] : []),
      ...Object.entries(s.holds).map(([agent, h]) => `held      ${agent} until ${h.until}: ${h.reason}`),
      ...s.invalid_agents.map((b) => `invalid   ${b.name}: ${b.file}: ${b.problems.join('; ')} (skipped by the tick)`),
      `last ok   ${age}`,
      `run lock  ${lock(s.locks.run)}`,
      `git lock  ${lock(s.locks.git)}`,
      `unpushed  ${s.unpushed ?? 'n/a'}`,
      ...s.last_sessions.map((r) => `  ${r.id}  ${r.outcome.padEnd(12)} ${money(r.cost_usd)}${r.memory === 'unavailable' ? '  (no memory tools)' : ''}`),
    ].join('\n'));
  }
  return EXIT.OK;
}
