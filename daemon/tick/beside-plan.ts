// The tick's plan beside other sessions (daemon/schedule/tick-plan.ts) over this site's ledger:
// the sessions running now take slots and their agents, and where sessions sharing a vault take
// turns (git off), their vaults too. For `next`, and for the fire rows of a tick at capacity.
import type { Ledger } from '../../budget/ledger.js';
import type { Agent, BrokenAgent } from '../../config/agents.js';
import { vaultOf } from '../../config/rules.js';
import type { Config } from '../../config/schema.js';
import { isAlive } from '../../core/process-tree.js';
import { explain } from '../schedule/explain.js';
import { tickPlan } from '../schedule/tick-plan.js';
import { sharingTakesTurns } from './supervise.js';

export type BesidePlan = { max_concurrent: number; running: string[]; starts: string[]; waits: Array<{ agent: string; rule: number | null; why: string }> };

export function besidePlan(config: Config, agents: Agent[], broken: BrokenAgent[], ledger: Ledger, at: Date, free?: number): BesidePlan {
  const n = config.sessions.max_concurrent;
  const live = ledger.live(isAlive);
  const turns = sharingTakesTurns(config);
  const busy: Record<string, string> = {};
  for (const r of live) busy[r.agent] = `${r.agent} is running (session ${r.id})`;
  if (turns) {
    for (const a of agents) {
      const other = live.find((r) => vaultOf(config, r.agent) === vaultOf(config, a.name));
      if (other && !busy[a.name]) busy[a.name] = `its vault is in use by ${other.agent} (session ${other.id}): sessions sharing a vault take turns`;
    }
  }
  const plan = tickPlan((taken) => explain(config, agents, ledger, at, broken, { ...busy, ...taken }), free ?? Math.max(0, n - live.length), {
    limit: n,
    turnsWith: turns ? (agent, started) => started.find((s) => vaultOf(config, s) === vaultOf(config, agent)) ?? null : undefined,
  });
  return { max_concurrent: n, running: live.map((r) => r.agent), starts: plan.start.map((s) => s.agent), waits: plan.wait };
}
