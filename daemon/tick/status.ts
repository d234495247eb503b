// `nightshift status`: one look at the host, without the session machinery.
import path from 'node:path';
import pino from 'pino';
import { dayOf } from '../../budget/day.js';
import type { Ledger } from '../../budget/ledger.js';
import { loadAgents } from '../config/agents.js';
import type { Config } from '../config/config.js';
import { VaultGit } from '../git/git-sync.js';
import { lockOwner } from '../lock.js';
import { explain } from '../schedule/explain.js';
import { currentHolds } from '../schedule/holds.js';
import { budgetReport } from './budget-report.js';
import { toRecord } from './session-record.js';

// `nightshift status --json`: one look at the host.
export async function status(config: Config, ledger: Ledger, at: Date) {
  const agents = loadAgents(config);
  const git = config.git.enabled ? new VaultGit(config, pino({ enabled: false })) : null;
  const unpushed = git ? await git.unpushedCount() : null;
  return {
    budget: budgetReport(config, ledger, dayOf(at, config.budget.timezone)),
    last_sessions: ledger.recent(5).map(toRecord),
    next: explain(config, agents, ledger, at),
    holds: currentHolds(config, ledger, at),
    locks: { run: lockOwner(path.join(config.state_dir, 'run')), git: lockOwner(config.git.lock_file) },
    unpushed,
    last_ok_at: ledger.lastOkAt(),
  };
}
