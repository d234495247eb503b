// Git sync of the vault: pull before a session, commit and push after it, under the host-wide git
// lock. Nothing the agent wrote is lost: a push that cannot land stays committed locally (the next
// tick pushes it), and a true conflict is saved on a branch `nightshift/<session-id>`.
import type { Logger } from '../logs/logger.js';
import type { Redactor } from '../logs/redact.js';
import type { Config } from './config.js';
import { acquireLock } from './lock.js';

export type GitReport = { pulled: boolean; committed: boolean; pushed: boolean; branch: string | null; error: string | null };
export const emptyGitReport = (): GitReport => ({ pulled: false, committed: false, pushed: false, branch: null, error: null });

type Git = (args: string[], input?: string) => Promise<{ ok: boolean; stdout: string; stderr: string }>;

function gitIn(dir: string): Git {
  return async (args, input) => {
    const { execa } = await import('execa');
    const r = await execa('git', args, { cwd: dir, reject: false, input, env: { GIT_TERMINAL_PROMPT: '0' } });
    return { ok: r.exitCode === 0, stdout: String(r.stdout ?? '').trim(), stderr: String(r.stderr ?? '').trim() };
  };
}

export type SessionSummary = { id: string; agent: string; outcome: string; cost_usd: number; turns: number; result: string | null };

// The commit message other tools parse: `nightshift(<agent>): <outcome>` and three trailers.
export function commitMessage(s: SessionSummary, redact: Redactor): string {
  const summary = (s.result ?? '').trim().slice(0, 1000);
  return [
    `nightshift(${s.agent}): ${s.outcome}`,
    '',
    ...(summary ? [redact(summary), ''] : []),
    `Session-Id: ${s.id}`,
    `Cost-USD: ${s.cost_usd.toFixed(4)}`,
    `Turns: ${s.turns}`,
    '',
  ].join('\n');
}

export class VaultGit {
  private readonly git: Git;
  constructor(private readonly config: Config, private readonly log: Logger) {
    this.git = gitIn(config.vault);
  }

  async isRepo(): Promise<boolean> {
    return (await this.git(['rev-parse', '--is-inside-work-tree'])).stdout === 'true';
  }

  private async branch(): Promise<string> {
    return this.config.git.branch ?? (await this.git(['rev-parse', '--abbrev-ref', 'HEAD'])).stdout;
  }

  private async hasRemote(): Promise<boolean> {
    return (await this.git(['remote'])).stdout.split('\n').includes(this.config.git.remote);
  }

  // Runs fn under the git lock; `held: false` when the lock was not had in time.
  private async locked<T>(purpose: string, fn: () => Promise<T>): Promise<{ held: true; value: T } | { held: false }> {
    const held = await acquireLock(this.config.git.lock_file, { timeoutMs: this.config.git.lock_timeout, purpose, logger: this.log });
    if (!held) return { held: false };
    try {
      return { held: true, value: await fn() };
    } finally {
      await held.release();
    }
  }

  // Before a session: pull --rebase --autostash. A failure is reported, never fatal: the agent can
  // still work on what is here.
  async pull(report: GitReport): Promise<void> {
    const r = await this.locked('pull', async () => {
      if (!(await this.hasRemote())) return `no remote \`${this.config.git.remote}\``;
      const branch = await this.branch();
      const p = await this.git([...(await this.identity()), 'pull', '--rebase', '--autostash', this.config.git.remote, branch]);
      if (p.ok) return null;
      await this.git(['rebase', '--abort']);
      return `pull failed: ${lastLine(p.stderr)}`;
    });
    if (!r.held) report.error = 'git lock not obtained in time: pull skipped';
    else if (r.value === null) report.pulled = true;
    else report.error = r.value;
    if (report.error) this.log.warn({ event: 'git_pull', error: report.error }, `git: ${report.error}`);
  }

  // After a session, whatever its outcome: commit everything not ignored, then push.
  async commitAndPush(s: SessionSummary, redact: Redactor, report: GitReport): Promise<void> {
    const committed = await this.commit(s, redact);
    report.committed = committed;
    const pushed = await this.locked('push', () => this.push(s, report));
    if (!pushed.held) {
      report.error = 'git lock not obtained in time: committed locally, push skipped (the next tick pushes it)';
      this.log.warn({ event: 'git_push', error: report.error }, `git: ${report.error}`);
    }
  }

  // Commits and rebases need an identity; the configured one when the vault has none of its own.
  private identityArgs: string[] | null = null;
  private async identity(): Promise<string[]> {
    if (!this.identityArgs) {
      const has = (await this.git(['config', 'user.email'])).ok;
      this.identityArgs = has ? [] : ['-c', `user.name=${this.config.git.author_name}`, '-c', `user.email=${this.config.git.author_email}`];
    }
    return this.identityArgs;
  }

  // The commit itself needs no lock: it touches only this work tree.
  private async commit(s: SessionSummary, redact: Redactor): Promise<boolean> {
    await this.git(['add', '--all']);
    const staged = await this.git(['diff', '--cached', '--quiet']);
    if (staged.ok) return false; // nothing to commit
    const c = await this.git([...(await this.identity()), 'commit', '--quiet', '-F', '-'], commitMessage(s, redact));
    if (!c.ok) throw new Error(`git commit failed: ${lastLine(c.stderr)}`);
    return true;
  }

  private async push(s: SessionSummary, report: GitReport): Promise<true> {
    if (!(await this.hasRemote())) {
      report.error = `no remote \`${this.config.git.remote}\`: committed locally`;
      return true;
    }
    const branch = await this.branch();
    for (let attempt = 1; attempt <= this.config.git.push_retries; attempt++) {
      const p = await this.git(['push', '--quiet', this.config.git.remote, `HEAD:refs/heads/${branch}`]);
      if (p.ok) {
        report.pushed = true;
        report.error = null;
        return true;
      }
      if (!/rejected|non-fast-forward|fetch first/i.test(p.stderr)) {
        report.error = `push failed (kept locally, the next tick pushes it): ${lastLine(p.stderr)}`;
        this.log.warn({ event: 'git_push', error: report.error }, `git: ${report.error}`);
        return true;
      }
      // Someone else pushed first: rebase on theirs and try again.
      const r = await this.git([...(await this.identity()), 'pull', '--rebase', this.config.git.remote, branch]);
      if (!r.ok) {
        await this.git(['rebase', '--abort']);
        await this.saveConflict(s, branch, report, lastLine(r.stderr || r.stdout));
        return true;
      }
      this.log.info({ event: 'git_rebased', attempt }, `git: push rejected, rebased (attempt ${attempt})`);
    }
    report.error = `push rejected ${this.config.git.push_retries} times: committed locally`;
    this.log.warn({ event: 'git_push', error: report.error }, `git: ${report.error}`);
    return true;
  }

  // A true conflict: the session's work goes to its own branch (local and remote), and main is
  // reset to the remote's, clean, for the next session.
  private async saveConflict(s: SessionSummary, branch: string, report: GitReport, why: string): Promise<void> {
    const name = `nightshift/${s.id}`;
    await this.git(['branch', '--force', name, 'HEAD']);
    report.branch = name;
    const p = await this.git(['push', '--quiet', this.config.git.remote, `${name}:refs/heads/${name}`]);
    await this.git(['reset', '--hard', '--quiet', `${this.config.git.remote}/${branch}`]);
    report.error = `conflict: could not rebase onto ${this.config.git.remote}/${branch} (${why}): saved on branch ${name}${p.ok ? '' : ' (local only: push failed)'}`;
    this.log.warn({ event: 'git_conflict', branch: name, pushed: p.ok }, `git: ${report.error}`);
  }

  // Commits on this branch the remote does not have yet (null: unknown).
  async unpushedCount(): Promise<number | null> {
    if (!(await this.isRepo()) || !(await this.hasRemote())) return null;
    const r = await this.git(['rev-list', '--count', `${this.config.git.remote}/${await this.branch()}..HEAD`]);
    return r.ok ? Number(r.stdout) : null;
  }
}

const lastLine = (s: string) => s.trim().split('\n').filter(Boolean).at(-1) ?? 'unknown error';
