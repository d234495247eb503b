// A session's vault, before and after it: nested repositories set aside, the pull (and, beside
// other sessions, the worktree the session works in), the git config guarded while it runs, then
// what it left: a .git it made, config it planted, and its work committed and pushed (or landed
// from its worktree). Every failure lands in the git report, never in an exception.
import fs from 'node:fs';
import path from 'node:path';
import type { Ledger } from '../../budget/ledger.js';
import type { SessionRecord } from '../../budget/session-record.js';
import type { Config } from '../../config/schema.js';
import { guardGitConfig, quarantineGitDir, untrustedGitMarker, type GitConfigGuard } from '../../vault/git-guard.js';
import type { GitReport, VaultGit } from '../../vault/git-sync.js';
import { nestedQuarantine, sweepNestedGit } from '../../vault/nested-repos.js';
import { worktreesDir } from '../../vault/worktree-paths.js';
import type { RunDeps } from './types.js';

export type VaultBefore = {
  // The config the session runs with: beside other sessions, its worktree in the vault's place.
  config: Config;
  // The charge was refused: what was set up for the session is put back.
  undo: () => Promise<void>;
  // After the session, whatever its outcome.
  after: (session: SessionRecord) => Promise<void>;
};

// `id`: the session's, which names its worktree (a left one is told from a running one by it).
// `vault`: null with git off. `inRepo`: the vault is a work tree; `untrusted`: a session left a
// .git nightshift could not move aside (git stays off). Beside other sessions
// (sessions.max_concurrent above 1) the session works in a worktree of its own.
export async function vaultBefore(config: Config, id: string, o: { vault: VaultGit | null; inRepo: boolean; untrusted: boolean; git: GitReport; startedAt: Date; deps: RunDeps }): Promise<VaultBefore | { skip: string }> {
  const { vault, inRepo, untrusted, git, deps } = o;
  const repo = vault && inRepo ? vault : null;
  // A repository an abandoned session left inside the vault is moved aside before our first git.
  const nestedTrusted = repo ? setAsideNested(config, `start-${id}`, git, deps) : true;
  const side = repo && nestedTrusted && config.sessions.max_concurrent > 1 && deps.gitChecks?.worktrees !== false;
  const worktrees = side ? await import('../../vault/worktrees.js') : null;
  if (repo && nestedTrusted) await repo.pull(git);
  if (side) {
    const wt = await worktrees!.addWorktree(repo, id, { checks: deps.gitChecks });
    if ('error' in wt) return { skip: `could not make the session's worktree in ${config.vault}: ${deps.redact(wt.error)}` };
    const cfg: Config = { ...config, vault: wt.dir };
    return {
      config: cfg,
      undo: () => worktrees!.removeWorktree(repo, wt),
      after: async (session) => {
        if (!setAsideNested(cfg, session.id, git, deps)) return;
        try {
          await worktrees!.landWorktree(repo, wt, session, deps.redact, git);
        } catch (err) {
          git.error = deps.redact((err as Error).message);
          deps.logger.error({ event: 'git_error', err }, `git: ${git.error}`);
        }
      },
    };
  }
  const guard: GitConfigGuard | null = repo ? guardGitConfig(config.vault) : null;
  return {
    config,
    undo: async () => {
      guard?.restore();
    },
    after: async (session) => {
      const planted = guard?.restore() ?? [];
      if (vault && !inRepo && !untrusted) quarantineNewGit(config, session.id, git, deps);
      if (planted.length) deps.logger.warn({ event: 'git_config_restored', files: planted }, `the session changed ${planted.join(', ')}: put back before nightshift's git ran`);
      if (guard?.replaced()) {
        git.error = 'the session replaced the vault\'s .git folder: nothing committed (restore it by hand)';
        git.uncommitted = true;
        deps.logger.error({ event: 'git_dir_replaced' }, git.error);
      } else if (repo && nestedTrusted && setAsideNested(config, session.id, git, deps)) {
        try {
          await repo.commitAndPush(session, deps.redact, git);
        } catch (err) {
          git.error = deps.redact((err as Error).message);
          deps.logger.error({ event: 'git_error', err }, `git: ${git.error}`);
        }
      }
    },
  };
}

// Worktrees whose session's supervisor died (`live`: the sessions running now keep theirs): each
// one's work committed and landed on its vault's main, as work an earlier session left, before
// any new session pulls. A vault whose git is off or untrusted keeps them (said).
export async function landLeftWorktrees(config: Config, ledger: Ledger, live: Set<string>, deps: RunDeps, signal?: AbortSignal): Promise<void> {
  const [{ landLeft }, { VaultGit }, { sessionConfig }] = await Promise.all([import('../../vault/worktrees.js'), import('../../vault/git-sync.js'), import('../../config/rules.js')]);
  const left = fs.readdirSync(worktreesDir(config.state_dir)).filter((id) => !live.has(id));
  // By vault: the agent of each session names it.
  const byVault = new Map<string, { cfg: Config; ids: string[] }>();
  for (const id of left) {
    const cfg = sessionConfig(config, ledger.get(id)?.agent ?? '');
    const v = byVault.get(cfg.vault) ?? { cfg, ids: [] };
    v.ids.push(id);
    byVault.set(cfg.vault, v);
  }
  for (const { cfg, ids } of byVault.values()) {
    if (!cfg.git.enabled || fs.existsSync(untrustedGitMarker(cfg.state_dir))) {
      deps.logger.warn({ event: 'git_worktree_kept', sessions: ids }, `worktrees of ended sessions kept in ${worktreesDir(cfg.state_dir)} (git is off or untrusted): ${ids.join(', ')}`);
      continue;
    }
    const main = new VaultGit(cfg, deps.logger, signal, deps.gitChecks);
    // Each landing a span of this start's fire (telemetry on), as its own session's would be.
    if (deps.trace) main.trace = deps.trace;
    await landLeft(main, ids, deps.redact, { checks: deps.gitChecks, summary: (id) => summaryOf(ledger, id) });
  }
}

// The summary a left worktree's commit names, from its session's ledger row where there is one.
function summaryOf(ledger: Ledger, id: string) {
  const row = ledger.get(id);
  return { id, agent: row?.agent ?? 'unknown', outcome: row?.outcome ?? 'abandoned', cost_usd: row?.cost_usd ?? 0, turns: row?.turns ?? 0, result: null };
}

// The vault was no work tree when the session began, and has a .git now: moved aside, never
// entered by nightshift's git.
function quarantineNewGit(config: Config, id: string, git: GitReport, deps: RunDeps): void {
  try {
    const moved = quarantineGitDir(config.vault, path.join(config.state_dir, 'quarantine', id), id);
    if (moved) {
      git.error = `the vault was not a git work tree when the session began, and has a .git now: moved to ${moved} (nightshift never runs git in a repository a session made)`;
      deps.logger.error({ event: 'git_dir_quarantined', to: moved }, git.error);
    }
  } catch (err) {
    // It stays: no start trusts it until the operator has looked (the marker's text says how).
    git.error = `the session left a .git in the vault, which could not be moved aside: ${deps.redact((err as Error).message)}; git stays off until you remove it and ${untrustedGitMarker(config.state_dir)}`;
    fs.writeFileSync(untrustedGitMarker(config.state_dir), `${id}: ${git.error}\n`);
    deps.logger.error({ event: 'git_dir_quarantine_failed', err }, git.error);
  }
}

// Moves every repository nested in the vault aside before nightshift's git runs there; false
// (and the marker that keeps every later git of ours off, the state's included) when one could not
// be moved.
function setAsideNested(config: Config, id: string, git: GitReport, deps: RunDeps): boolean {
  const into = nestedQuarantine(config.vault, path.join(config.state_dir, 'quarantine'), id);
  const r = sweepNestedGit(config.vault, into);
  if (r.moved.length) {
    const error = `a session left ${r.moved.length === 1 ? 'a repository' : `${r.moved.length} repositories`} inside the vault (${r.moved.map((m) => m.from).join(', ')}): moved to ${into}, never entered by nightshift's git`;
    git.error = git.error ?? error;
    deps.logger.error({ event: 'nested_git_quarantined', moved: r.moved }, error);
  }
  if (!r.failed.length) return true;
  git.error = `a session left a repository inside the vault that could not be moved aside (${r.failed.map((f) => `${f.path}: ${f.error}`).join('; ')}): git stays off until you remove it and ${untrustedGitMarker(config.state_dir)}`;
  git.uncommitted = true;
  fs.writeFileSync(untrustedGitMarker(config.state_dir), `${id}: ${git.error}\n`);
  deps.logger.error({ event: 'nested_git_quarantine_failed', failed: r.failed }, git.error);
  return false;
}
