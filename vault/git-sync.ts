// Git sync of the vault: pull before a session, commit and push after it, under the host-wide git
// lock. Nothing the agent wrote is lost or corrupted silently: every step's failure lands in
// `git.error`; a push that cannot land stays committed locally (the next tick pushes it); a true
// conflict is saved on a branch `nightshift/<session-id>`; conflict markers never reach the branch.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logs/logger.js';
import type { Redactor } from '../core/redact.js';
import { listProcs } from '../core/process-tree.js';
import type { Config } from '../config/schema.js';
import { acquireLock } from '../core/lock.js';
import { startChild } from '../core/child-process.js';
import { headBranch, refSha } from './refs.js';
import { formatSize } from '../config/size.js';
import { sessionUserFor } from '../config/session-user.js';

// `uncommitted`: the work tree still holds changes that no commit saved (exit 1, OnFailure= fires).
export type GitReport = { pulled: boolean; committed: boolean; pushed: boolean; branch: string | null; error: string | null; uncommitted: boolean };
export const emptyGitReport = (): GitReport => ({ pulled: false, committed: false, pushed: false, branch: null, error: null, uncommitted: false });

// `raw`: stdout untrimmed, for output whose leading blanks mean something (`status --porcelain`).
type GitResult = { ok: boolean; stdout: string; stderr: string; raw?: string };
type Git = (args: string[], input?: string) => Promise<GitResult>;

// After SIGTERM to a git's process group, this long before SIGKILL.
const GIT_KILL_GRACE_MS = 2000;
// Settings that would run a command, neutralised on every git nightshift runs (the operator's own
// hooks included: a session could have planted one), and no walk into a submodule or nested
// repository, whose own config (a filter, an fsmonitor) would run as the supervisor.
const NEUTRAL = [
  '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.pager=cat', '-c', 'protocol.ext.allow=never',
  '-c', 'submodule.recurse=false', '-c', 'diff.ignoreSubmodules=all', '-c', 'status.submoduleSummary=false',
];
// `git status` enters every submodule and nested repository unless told not to.
export const STATUS = ['status', '--porcelain', '--ignore-submodules=all'];

// Every git command runs in its own process group with a timeout; a stop request or the timeout
// ends the whole group (git's own children: ssh, remote helpers, hooks).
// `groupWrite`: the files git writes keep group write (umask without 020), so a root supervisor's
// session user, whose group the vault has, can still edit what a pull brought (config/session-user.ts).
// `sessionUid`: a vault owned by the session user is as much ours as root's own (nobody runs as
// that user outside the wall, and inside it .git is read-only), so git's "dubious ownership" check
// is lifted for it, and for it only: a vault of any other user's stays refused (its .git/config
// could run a command as root). Only the command line may say so (a protected config).
export function gitIn(dir: string, o: { timeoutMs: number; signal?: AbortSignal; groupWrite?: boolean; sessionUid?: number | null }): Git {
  const owned = o.sessionUid != null && fs.statSync(dir, { throwIfNoEntry: false })?.uid === o.sessionUid;
  const safe = owned ? ['-c', `safe.directory=${path.resolve(dir)}`] : [];
  const umask = o.groupWrite ? groupWritable : undefined;
  return async (args, input) => {
    if (o.signal?.aborted) return { ok: false, stdout: '', stderr: `not run: stop requested (git ${args[0]})` };
    // No hooks: a session could have planted one (post-commit, pre-push) to run after it ended,
    // outside the watchdog; nightshift's own git runs none.
    const { child, done } = startChild('git', [...NEUTRAL, ...safe, ...args], { cwd: dir, input, detached: true, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, umask });
    let ended: string | null = null;
    const endGroup = (why: string) => {
      if (ended || !child.pid) return;
      ended = why;
      const group = -child.pid;
      try {
        process.kill(group, 'SIGTERM');
      } catch {
        return;
      }
      setTimeout(() => {
        try {
          process.kill(group, 'SIGKILL');
        } catch {
          // gone
        }
      }, GIT_KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => endGroup(`timed out after ${o.timeoutMs} ms`), o.timeoutMs);
    const onAbort = () => endGroup('stop requested');
    o.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const r = await done;
      const stderr = (r.error ? `cannot run git: ${r.error.message}` : r.stderr).trim();
      return { ok: r.exitCode === 0 && !ended, stdout: r.stdout.trim(), raw: r.stdout, stderr: ended ? `git ${args[0]} ${ended}` : stderr };
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  };
}

export type SessionSummary = { id: string; agent: string; outcome: string; cost_usd: number; turns: number; result: string | null };

// The commit message other tools parse: `nightshift(<agent>): <outcome>` and three trailers.
export function commitMessage(s: SessionSummary, redact: Redactor): string {
  const summary = redact((s.result ?? '').trim()).slice(0, 1000);
  return [
    `nightshift(${s.agent}): ${s.outcome}`,
    '',
    ...(summary ? [summary, ''] : []),
    `Session-Id: ${s.id}`,
    `Cost-USD: ${s.cost_usd.toFixed(4)}`,
    `Turns: ${s.turns}`,
    '',
  ].join('\n');
}

// Pure: does `git diff --cached --check` output report conflict markers?
export const hasConflictMarkers = (checkOutput: string): boolean => /leftover conflict marker/.test(checkOutput);

// A git index.lock is stale when no process holds it open: git keeps the file's descriptor open
// from creating it until it commits or rolls back. A git whose descriptors we cannot read (another
// user's) counts as a holder.
export function indexLockHolder(lockPath: string): number | null {
  const target = path.resolve(lockPath);
  for (const p of listProcs()) {
    if (p.pid === process.pid) continue;
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${p.pid}/fd`);
    } catch {
      try {
        if (fs.readFileSync(`/proc/${p.pid}/comm`, 'utf8').trim() === 'git') return p.pid;
      } catch {
        // gone
      }
      continue;
    }
    for (const fd of fds) {
      try {
        if (fs.readlinkSync(`/proc/${p.pid}/fd/${fd}`) === target) return p.pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}

export class VaultGit {
  private readonly git: Git;
  // Local steps after a stop request still run (they take milliseconds and save the work); only
  // waits and network steps are cut short by `signal`.
  private readonly localGit: Git;
  constructor(private readonly config: Config, private readonly log: Logger, private readonly signal?: AbortSignal) {
    const sessionUid = sessionUserFor(config).user?.uid ?? null;
    const groupWrite = sessionUid !== null;
    this.git = gitIn(config.vault, { timeoutMs: config.git.timeout, signal, groupWrite, sessionUid });
    this.localGit = gitIn(config.vault, { timeoutMs: config.git.timeout, groupWrite, sessionUid });
  }

  async isRepo(): Promise<boolean> {
    return (await this.localGit(['rev-parse', '--is-inside-work-tree'])).stdout === 'true';
  }

  // HEAD's branch, read from .git/HEAD first: an empty clone's is unborn, where rev-parse fails.
  private async branch(): Promise<string> {
    return this.config.git.branch ?? headBranch(this.config.vault) ?? (await this.localGit(['rev-parse', '--abbrev-ref', 'HEAD'])).stdout;
  }

  // No commit yet (an empty clone, a fresh git init): nothing to push.
  private async hasCommit(): Promise<boolean> {
    return (await this.localGit(['rev-parse', '--verify', '--quiet', 'HEAD'])).ok;
  }

  private async hasRemote(): Promise<boolean> {
    return (await this.localGit(['remote'])).stdout.split('\n').includes(this.config.git.remote);
  }

  // Runs fn under the git lock; `held: false` when the lock was not had in time (or a stop came).
  private async locked<T>(purpose: string, fn: () => Promise<T>): Promise<{ held: true; value: T } | { held: false }> {
    const held = await acquireLock(this.config.git.lock_file, { timeoutMs: this.config.git.lock_timeout, purpose, logger: this.log, signal: this.signal });
    if (!held) return { held: false };
    try {
      return { held: true, value: await fn() };
    } finally {
      await held.release();
    }
  }

  // A SIGKILLed git leaves `.git/index.lock` behind, and every later add/commit fails on it.
  private async clearStaleIndexLock(): Promise<void> {
    const p = await this.localGit(['rev-parse', '--git-path', 'index.lock']);
    if (!p.ok) return;
    const file = path.resolve(this.config.vault, p.stdout);
    if (!fs.existsSync(file)) return;
    const holder = indexLockHolder(file);
    if (holder !== null) {
      this.log.warn({ event: 'git_index_lock_held', file, pid: holder }, `git: ${file} is held by pid ${holder}; left alone`);
      return;
    }
    fs.rmSync(file, { force: true });
    this.log.warn({ event: 'git_stale_lock_cleared', file }, `git: removed stale ${file} (no process holds it)`);
  }

  private async dirty(): Promise<boolean> {
    const s = await this.localGit(STATUS);
    return !s.ok || s.stdout.length > 0;
  }

  // Before a session: leftovers of an abandoned session are committed as their own commit (never
  // autostashed: a stash pop onto an upstream edit of the same lines writes conflict markers),
  // then pull --rebase. A failure is reported, never fatal: the agent can still work on what is here.
  async pull(report: GitReport): Promise<void> {
    const r = await this.locked('pull', async () => {
      if (!(await this.hasRemote())) return `no remote \`${this.config.git.remote}\``;
      await this.clearStaleIndexLock();
      if (await this.dirty()) {
        const saved = await this.commitAll('nightshift: work left uncommitted by an earlier session\n');
        if (saved.error) return `leftover work could not be committed before the pull: ${saved.error}`;
        this.log.warn({ event: 'git_leftovers_committed' }, 'git: committed work an earlier session left uncommitted');
      }
      const branch = await this.branch();
      const p = await this.git([...(await this.identity()), 'pull', '--rebase', '--no-autostash', this.config.git.remote, branch]);
      if (p.ok) return null;
      // An empty remote (or one without this branch yet): nothing to pull; the first push makes it.
      if (/couldn't find remote ref/i.test(p.stderr)) {
        this.log.info({ event: 'git_pull_nothing', branch }, `git: ${this.config.git.remote} has no branch ${branch} yet: nothing to pull (the first push creates it)`);
        return undefined; // nothing failed, nothing was pulled
      }
      await this.localGit(['rebase', '--abort']);
      return `pull failed (working on the local state; a conflict is saved on a branch after the session): ${lastLine(p.stderr)}`;
    });
    if (!r.held) report.error = this.signal?.aborted ? 'stop requested: pull skipped' : 'git lock not obtained in time: pull skipped';
    else if (r.value === null) report.pulled = true;
    else if (r.value !== undefined) report.error = r.value;
    if (report.error) this.log.warn({ event: 'git_pull', error: report.error }, `git: ${report.error}`);
  }

  // After a session, whatever its outcome: commit everything not ignored, then push.
  async commitAndPush(s: SessionSummary, redact: Redactor, report: GitReport): Promise<void> {
    // The pull's own failure is kept for the report, but it must not hold back the commit or push.
    const pullError = report.error;
    report.error = null;
    try {
      await this.clearStaleIndexLock();
      const c = await this.commitAll(commitMessage(s, redact));
      report.committed = c.committed;
      if (c.error) report.error = `commit failed: ${redact(c.error)}`;
      else if (c.committed && c.markers) await this.moveAside(s, report, 'conflict markers in the committed files');
      if (!report.error && !report.branch) {
        if (this.signal?.aborted) report.error = 'stop requested: committed locally, push skipped (the next tick pushes it)';
        else {
          const pushed = await this.locked('push', () => this.push(s, report));
          if (!pushed.held) {
            report.error = this.signal?.aborted
              ? 'stop requested: committed locally, push skipped (the next tick pushes it)'
              : 'git lock not obtained in time: committed locally, push skipped (the next tick pushes it)';
          }
        }
      }
    } finally {
      report.uncommitted = await this.dirty();
      if (report.uncommitted && !report.error) report.error = 'the work tree still has uncommitted changes after the commit';
      if (!report.error && pullError) report.error = pullError;
      if (report.error) this.log.warn({ event: 'git_error', error: report.error, uncommitted: report.uncommitted }, `git: ${report.error}`);
    }
  }

  // Commits and rebases need an identity; the configured one when the vault has none of its own.
  private identityArgs: string[] | null = null;
  private async identity(): Promise<string[]> {
    if (!this.identityArgs) {
      const has = (await this.localGit(['config', 'user.email'])).ok;
      this.identityArgs = has ? [] : ['-c', `user.name=${this.config.git.author_name}`, '-c', `user.email=${this.config.git.author_email}`];
    }
    return this.identityArgs;
  }

  // The commit itself needs no lock: it touches only this work tree. Each step's failure is returned.
  private async commitAll(message: string): Promise<{ committed: boolean; markers: boolean; error: string | null }> {
    // What a session wrote is weighed before git reads it: a 1 GB file took 93 s to commit and push.
    const listed = await this.localGit(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=all']);
    if (!listed.ok) return { committed: false, markers: false, error: `git status failed: ${lastLine(listed.stderr)}` };
    const tooBig = oversized(this.config.vault, changedPaths(listed.raw ?? ''), { file: this.config.limits.commit_file, total: this.config.limits.commit_total });
    if (tooBig) return { committed: false, markers: false, error: `commit refused, nothing committed (the work stays in the vault): ${tooBig}` };
    const add = await this.localGit(['add', '--all']);
    if (!add.ok) return { committed: false, markers: false, error: `git add failed: ${lastLine(add.stderr)}` };
    const staged = await this.localGit(['diff', '--cached', '--quiet']);
    if (staged.ok) return { committed: false, markers: false, error: null };
    const check = await this.localGit(['diff', '--cached', '--check']);
    const markers = hasConflictMarkers(check.stdout);
    const c = await this.localGit([...(await this.identity()), 'commit', '--quiet', '--no-verify', '-F', '-'], message);
    if (!c.ok) return { committed: false, markers, error: `git commit failed: ${lastLine(c.stderr || c.stdout)}` };
    return { committed: true, markers, error: null };
  }

  private async push(s: SessionSummary, report: GitReport): Promise<true> {
    if (!(await this.hasRemote())) {
      report.error = `no remote \`${this.config.git.remote}\`: committed locally`;
      return true;
    }
    if (!(await this.hasCommit())) return true;
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
        return true;
      }
      // Someone else pushed first: rebase on theirs and try again.
      const r = await this.git([...(await this.identity()), 'pull', '--rebase', '--no-autostash', this.config.git.remote, branch]);
      if (!r.ok) {
        await this.localGit(['rebase', '--abort']);
        if (this.signal?.aborted) {
          report.error = 'stop requested during the rebase: committed locally, the next tick pushes it';
          return true;
        }
        await this.saveConflict(s, branch, report, lastLine(r.stderr || r.stdout));
        return true;
      }
      this.log.info({ event: 'git_rebased', attempt }, `git: push rejected, rebased (attempt ${attempt})`);
    }
    report.error = `push rejected ${this.config.git.push_retries} times: committed locally`;
    return true;
  }

  // A true conflict: the session's work goes to its own branch (local and remote), and main is
  // reset to the remote's, clean, for the next session.
  private async saveConflict(s: SessionSummary, branch: string, report: GitReport, why: string): Promise<void> {
    const name = `nightshift/${s.id}`;
    await this.localGit(['branch', '--force', name, 'HEAD']);
    report.branch = name;
    const p = await this.git(['push', '--quiet', this.config.git.remote, `${name}:refs/heads/${name}`]);
    await this.localGit(['reset', '--hard', '--quiet', `${this.config.git.remote}/${branch}`]);
    report.error = `conflict: could not rebase onto ${this.config.git.remote}/${branch} (${why}): saved on branch ${name}${p.ok ? '' : ' (local only: push failed)'}`;
    this.log.warn({ event: 'git_conflict', branch: name, pushed: p.ok }, `git: ${report.error}`);
  }

  // The session's commit carries conflict markers: it goes to its own branch, and main steps back
  // one commit, so markers never reach main (local or remote).
  private async moveAside(s: SessionSummary, report: GitReport, why: string): Promise<void> {
    const name = `nightshift/${s.id}`;
    await this.localGit(['branch', '--force', name, 'HEAD']);
    await this.localGit(['reset', '--hard', '--quiet', 'HEAD~1']);
    report.branch = name;
    const p = (await this.hasRemote()) ? await this.git(['push', '--quiet', this.config.git.remote, `${name}:refs/heads/${name}`]) : { ok: false };
    report.error = `${why}: saved on branch ${name}${p.ok ? '' : ' (local only)'}, not on the main branch`;
    this.log.warn({ event: 'git_conflict_markers', branch: name }, `git: ${report.error}`);
  }

  // Commits on this branch the remote does not have yet (null: unknown).
  // Two git processes, not five: `status` is what an operator types most. No repository, no
  // remote or a branch never pushed all read as "unknown" (null), as rev-list fails on each.
  async unpushedCount(): Promise<number | null> {
    // The common answer, everything pushed, needs no git process: HEAD and the remote branch
    // name one commit.
    const head = headBranch(this.config.vault);
    let branch = this.config.git.branch ?? head;
    if (head && branch) {
      const local = refSha(this.config.vault, `refs/heads/${head}`);
      if (local && local === refSha(this.config.vault, `refs/remotes/${this.config.git.remote}/${branch}`)) return 0;
    }
    if (!branch) {
      const head = await this.localGit(['rev-parse', '--is-inside-work-tree', '--abbrev-ref', 'HEAD']);
      const [inside, current] = head.stdout.split('\n');
      if (!head.ok || inside !== 'true') return null;
      branch = current;
    }
    const r = await this.localGit(['rev-list', '--count', `${this.config.git.remote}/${branch}..HEAD`]);
    return r.ok ? Number(r.stdout) : null;
  }
}

// Pure: the paths `git status --porcelain=v1 -z` names as added or changed (a rename's old path and
// deletions left out).
export function changedPaths(z: string): string[] {
  const out: string[] = [];
  const parts = z.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const e = parts[i];
    if (e.length < 4) continue;
    const [x, y, p] = [e[0], e[1], e.slice(3)];
    if (x === 'R' || x === 'C') i++;
    if (x === 'D' || y === 'D') continue;
    out.push(p);
  }
  return out;
}

// Why these files may not be committed (limits.commit_file, limits.commit_total), or null. Sizes
// as lstat tells them: a link weighs its target's name, never its target.
export function oversized(vault: string, paths: string[], max: { file: number; total: number }): string | null {
  let total = 0;
  for (const p of paths) {
    const st = fs.lstatSync(path.join(vault, p), { throwIfNoEntry: false });
    if (!st || st.isDirectory()) continue;
    if (st.size > max.file) return `\`${p}\` is ${formatSize(st.size)} (limits.commit_file is ${formatSize(max.file)})`;
    total += st.size;
  }
  return total > max.total ? `the session added ${formatSize(total)} (limits.commit_total is ${formatSize(max.total)})` : null;
}

// The line that says what went wrong: git's `fatal:`/`error:` line when there is one.
const lastLine = (s: string) => {
  const lines = s.trim().split('\n').filter(Boolean);
  return lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.at(-1) ?? 'unknown error';
};

// Pure: a umask that no longer takes group write away.
export const groupWritable = (mask: number) => mask & ~0o020;
