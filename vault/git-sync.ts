// Git sync of the vault: pull before a session, commit and push after it, under the vault's git
// lock (./git-run.ts runs git, ./git-words.ts reads and says what it answers). Nothing the agent wrote is lost or corrupted silently: every step's failure lands in
// `git.error`; a push that cannot land stays committed locally (the next tick pushes it); a true
// conflict is saved on a branch `nightshift/<session-id>`; conflict markers never reach the branch.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logs/logger.js';
import type { Redactor } from '../core/redact.js';
import { NO_SPAN, type TraceAttrs, type TraceSpan } from '../core/trace.js';
import type { Config } from '../config/schema.js';
import { acquireLock } from '../core/lock.js';
import { anyRefUnder, headBranch, refSha } from './refs.js';
import { sessionUserFor } from '../config/session-user.js';
import { emptyGitReport, type GitOutcome } from '../budget/session-record.js';
import { addExcludes, LEFT_OUT_HEADING, literalPattern, OWN_DIR, OWN_EXCLUDE } from './info-exclude.js';
import { untrustedGitMarker } from './git-guard.js';
import { gitIn, indexLockHolder, lastLine, type Git } from './git-run.js';
import { commitMessage, describeLeftOut, leaveOut, operationInProgress, parseStatus, pushFailure, unmergedPaths, weigh, hasConflictMarkers, type LeftOut, type SessionSummary } from './git-words.js';

// `uncommitted`: the work tree still holds changes that no commit saved, the files left out
// aside (exit 1, OnFailure= fires). `branch`: where work went instead of main (a conflict, conflict
// markers), `branch_pushed` whether the remote has it. `untracked`: nightshift's own files a
// commit took out of the repository.
export type GitReport = GitOutcome;
export { emptyGitReport };

export * from './git-run.js';
export * from './git-words.js';

// Test-only seams (RunDeps.gitChecks), each the negative control of one check: off, the path a
// real session takes runs without it. Production leaves them all on.
export type GitChecks = {
  // Files over the limits left out of the commit (off: nothing is weighed).
  keepOut: boolean;
  // nightshift's own files kept out of every commit, and untracked when tracked.
  untrackOwn: boolean;
  // Conflict markers, unmerged paths and an operation in progress kept off main.
  conflicts: boolean;
  // Only a non-fast-forward taken for a race (off: any "rejected", as before).
  pushRule: boolean;
  // Sessions beside others each in a worktree of their own (off: all in the one work tree at once).
  worktrees: boolean;
  // Worktrees a dead supervisor's sessions left, landed by the next start (off: left where they are).
  landLeft: boolean;
  // A worktree's repository named on git's command line (off: found through its `.git` file).
  namedRepo: boolean;
};
const ALL_CHECKS: GitChecks = { keepOut: true, untrackOwn: true, conflicts: true, pushRule: true, worktrees: true, landLeft: true, namedRepo: true };

// Whether the vault is a git work tree, asked where runChosen would ask it, only earlier (beside the
// session's loading); null: not asked, the vault's git being untrusted (vault/git-guard.ts).
export async function vaultIsRepo(config: Config, log: Logger, signal?: AbortSignal, checks: Partial<GitChecks> = {}): Promise<boolean | null> {
  if (fs.existsSync(untrustedGitMarker(config.state_dir))) return null;
  return new VaultGit(config, log, signal, checks).isRepo();
}

// The members vault/worktrees.ts uses are public; the rest of nightshift uses pull,
// commitAndPush and the questions.
// Pure: a git step's outcome as its span's attributes (the error is redacted with the rest).
export function gitSpanAttrs(r: GitReport): TraceAttrs {
  return { 'nightshift.git.pulled': r.pulled, 'nightshift.git.committed': r.committed, 'nightshift.git.pushed': r.pushed, 'nightshift.git.branch': r.branch ?? undefined, 'nightshift.git.uncommitted': r.uncommitted, 'nightshift.git.left_out': r.left_out.length || undefined, 'nightshift.git.error': r.error ?? undefined };
}

export class VaultGit {
  // The fire's trace span (core/trace.ts): each pull and commit-and-push is a span under it.
  trace: TraceSpan = NO_SPAN;
  readonly git: Git;
  readonly checks: GitChecks;
  // Local steps after a stop request still run (they take milliseconds and save the work); only
  // waits and network steps are cut short by `signal`.
  readonly localGit: Git;
  // `gitDir`: a session's worktree, whose repository is named, never read from its `.git` file.
  constructor(readonly config: Config, readonly log: Logger, readonly signal?: AbortSignal, checks: Partial<GitChecks> = {}, gitDir?: string) {
    this.checks = { ...ALL_CHECKS, ...checks };
    const sessionUid = sessionUserFor(config).user?.uid ?? null;
    const groupWrite = sessionUid !== null;
    this.git = gitIn(config.vault, { timeoutMs: config.git.timeout, signal, groupWrite, sessionUid, gitDir });
    this.localGit = gitIn(config.vault, { timeoutMs: config.git.timeout, groupWrite, sessionUid, gitDir });
  }

  async isRepo(): Promise<boolean> {
    return (await this.localGit(['rev-parse', '--is-inside-work-tree'])).stdout === 'true';
  }

  // Why the vault is no work tree, as git says it (asked only once it is known not to be one).
  async notRepoWhy(): Promise<string> {
    return (await this.localGit(['rev-parse', '--is-inside-work-tree'])).stderr;
  }

  // HEAD's branch, read from .git/HEAD first: an empty clone's is unborn, where rev-parse fails.
  async branch(): Promise<string> {
    return this.config.git.branch ?? headBranch(this.config.vault) ?? (await this.localGit(['rev-parse', '--abbrev-ref', 'HEAD'])).stdout;
  }

  // No commit yet (an empty clone, a fresh git init): nothing to push.
  private async hasCommit(): Promise<boolean> {
    return (await this.localGit(['rev-parse', '--verify', '--quiet', 'HEAD'])).ok;
  }

  async hasRemote(): Promise<boolean> {
    return (await this.localGit(['remote'])).stdout.split('\n').includes(this.config.git.remote);
  }

  // Runs fn under the git lock; `held: false` when the lock was not had in time (or a stop came).
  async locked<T>(purpose: string, fn: () => Promise<T>): Promise<{ held: true; value: T } | { held: false }> {
    const held = await acquireLock(this.config.git.lock_file, { timeoutMs: this.config.git.lock_timeout, purpose, logger: this.log, signal: this.signal });
    if (!held) return { held: false };
    try {
      return { held: true, value: await fn() };
    } finally {
      await held.release();
    }
  }

  // A SIGKILLed git leaves `.git/index.lock` behind, and every later add/commit fails on it.
  async clearStaleIndexLock(): Promise<void> {
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

  // Changes no commit holds, the files left out for their size aside.
  async dirty(except: LeftOut[] = []): Promise<boolean> {
    const s = await this.localGit(['status', '--porcelain=v1', '-z', '--ignore-submodules=all']);
    if (!s.ok) return true;
    const out = new Set(except.map((f) => f.path));
    return parseStatus(s.raw ?? '').some((e) => !out.has(e.path));
  }

  // Before a session: an operation the operator left in progress stops everything (nothing is
  // committed over it, nothing pulled); leftovers of an abandoned session are committed as their
  // own commit (never autostashed: a stash pop onto an upstream edit of the same lines writes
  // conflict markers), moved to a branch if they hold a conflict, then pull --rebase. A failure is
  // reported, never fatal: the agent can still work on what is here.
  async pull(report: GitReport): Promise<void> {
    const span = this.trace.child('nightshift.git pull', { 'nightshift.git.step': 'pull' });
    try {
      await this.pullUntraced(report);
    } finally {
      span.set(gitSpanAttrs(report));
      if (report.error) span.fail(report.error);
      span.end();
    }
  }

  private async pullUntraced(report: GitReport): Promise<void> {
    const r = await this.locked('pull', async () => {
      if (!(await this.hasRemote())) return `no remote \`${this.config.git.remote}\``;
      await this.clearStaleIndexLock();
      const op = this.checks.conflicts ? await operationInProgress(this.localGit, this.config.vault) : null;
      if (op) return `nothing committed or pulled: ${op}`;
      if (await this.dirty()) {
        const saved = await this.commitAll('nightshift: work left uncommitted by an earlier session\n', report);
        if (saved.error) return `leftover work could not be committed before the pull: ${saved.error}`;
        if (saved.committed && saved.conflict) {
          const name = `nightshift/leftovers-${new Date().toISOString().replace(/[-:.]/g, '').replace('T', '-')}`;
          // Said in the report; the pull goes on, onto a clean main.
          report.error = await this.moveAside(name, report, `the work left uncommitted before this session holds ${saved.conflict}`);
        } else if (saved.committed) this.log.warn({ event: 'git_leftovers_committed' }, 'git: committed work an earlier session left uncommitted');
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
      return `pull failed, working on the local state (the push after the session rebases again; a conflict then goes to a nightshift/ branch): ${lastLine(p.stderr)}`;
    });
    if (!r.held) report.error = this.signal?.aborted ? 'stop requested: pull skipped' : 'git lock not obtained in time: pull skipped';
    else if (r.value === null) report.pulled = true;
    else if (r.value !== undefined) report.error = report.error ? `${report.error}; ${r.value}` : r.value;
    if (report.error) this.log.warn({ event: 'git_pull', error: report.error }, `git: ${report.error}`);
  }

  // After a session, whatever its outcome: commit everything not ignored (nightshift's own files
  // and files over the limits left out), then push. Conflict markers or unmerged paths go to a
  // branch, never main; an operation in progress commits nothing.
  async commitAndPush(s: SessionSummary, redact: Redactor, report: GitReport): Promise<void> {
    const span = this.trace.child('nightshift.git commit_and_push', { 'nightshift.git.step': 'commit_and_push' });
    try {
      await this.commitAndPushUntraced(s, redact, report);
    } finally {
      span.set(gitSpanAttrs(report));
      if (report.error) span.fail(report.error);
      span.end();
    }
  }

  private async commitAndPushUntraced(s: SessionSummary, redact: Redactor, report: GitReport): Promise<void> {
    // The pull's own failure is kept for the report, but it must not hold back the commit or push.
    const pullError = report.error;
    report.error = null;
    try {
      await this.clearStaleIndexLock();
      const op = this.checks.conflicts ? await operationInProgress(this.localGit, this.config.vault) : null;
      if (op) {
        report.error = `nothing committed (the work stays in the vault; the first tick after the fix commits it): ${op}`;
        return;
      }
      const c = await this.commitAll(commitMessage(s, redact), report);
      report.committed = c.committed;
      if (c.error) report.error = `commit failed: ${redact(c.error)}`;
      else if (c.committed && c.conflict) report.error = await this.moveAside(`nightshift/${s.id}`, report, `the session's commit holds ${c.conflict}`);
      if (!report.error) {
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
      report.uncommitted = await this.dirty(report.left_out);
      if (report.uncommitted && !report.error) report.error = 'the work tree still has uncommitted changes after the commit';
      if (pullError) report.error = report.error ? `${report.error}; before the session: ${pullError}` : pullError;
      if (!report.error && report.left_out.length) report.error = `left out of the commit: ${describeLeftOut(report.left_out, this.config.limits)}`;
      if (report.error) this.log.warn({ event: 'git_error', error: report.error, uncommitted: report.uncommitted, left_out: report.left_out }, `git: ${report.error}`);
    }
  }

  // Commits and rebases need an identity; the configured one when the vault has none of its own.
  private identityArgs: string[] | null = null;
  async identity(): Promise<string[]> {
    if (!this.identityArgs) {
      const has = (await this.localGit(['config', 'user.email'])).ok;
      this.identityArgs = has ? [] : ['-c', `user.name=${this.config.git.author_name}`, '-c', `user.email=${this.config.git.author_email}`];
    }
    return this.identityArgs;
  }

  // The commit itself needs no lock: it touches only this work tree. Each step's failure is
  // returned; `conflict` says why the commit may not stay on main (markers, unmerged paths).
  // Files left out and nightshift's own files untracked are added to the report.
  async commitAll(message: string, report: GitReport): Promise<{ committed: boolean; conflict: string | null; error: string | null }> {
    const none = (error: string) => ({ committed: false, conflict: null, error });
    // What a session wrote is weighed before git reads it: a 1 GB file took 93 s to commit and push.
    const listed = await this.localGit(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=all']);
    if (!listed.ok) return none(`git status failed: ${lastLine(listed.stderr)}`);
    const entries = parseStatus(listed.raw ?? '');
    const unmerged = unmergedPaths(entries);
    const own = (p: string) => p === OWN_DIR || p.startsWith(`${OWN_DIR}/`);
    const adds = entries.filter((e) => e.x !== 'D' && e.y !== 'D' && !own(e.path) && !unmerged.includes(e.path));
    const out = this.checks.keepOut ? leaveOut(weigh(this.config.vault, adds.map((e) => e.path)), { file: this.config.limits.commit_file, total: this.config.limits.commit_total }) : [];
    // New files over commit_file stay out of every later commit too (and out of `git status`):
    // the exclude file names them. A tracked file that grew, or one dropped for the total, is kept
    // out by pathspec only, and weighed again next time.
    const untrackedOver = out.filter((f) => f.limit === 'commit_file' && entries.some((e) => e.path === f.path && e.x === '?'));
    const patterns = untrackedOver.map((f) => literalPattern(f.path)).filter((l): l is string => l !== null);
    try {
      if (this.checks.untrackOwn) addExcludes(this.config.vault, this.config.state_dir, "# nightshift's session state", [OWN_EXCLUDE]);
      if (patterns.length) addExcludes(this.config.vault, this.config.state_dir, LEFT_OUT_HEADING, patterns);
    } catch (err) {
      this.log.warn({ event: 'git_exclude_failed', err }, `git: .git/info/exclude not written: ${(err as Error).message} (the files stay out by pathspec)`);
    }
    for (const f of out) if (!report.left_out.some((l) => l.path === f.path)) report.left_out.push(f);
    if (out.length) this.log.warn({ event: 'git_left_out', files: out }, `git: left out of the commit: ${describeLeftOut(out, this.config.limits)}`);
    // nightshift's own files are never tracked: one that was (the state, written before the
    // exclude existed) leaves the index in this commit, and stays in the work tree.
    const tracked = await this.localGit(['ls-files', '-z', '--', OWN_DIR]);
    const ownTracked = (tracked.raw ?? '').split('\0').filter(Boolean);
    if (ownTracked.length && this.checks.untrackOwn) {
      const rm = await this.localGit(['rm', '-r', '--cached', '--quiet', '--', OWN_DIR]);
      if (!rm.ok) return none(`git rm --cached ${OWN_DIR} failed: ${lastLine(rm.stderr)}`);
      report.untracked.push(...ownTracked.filter((p) => !report.untracked.includes(p)));
      this.log.warn({ event: 'git_untracked_own', files: ownTracked }, `git: ${ownTracked.join(', ')} had been tracked: taken out of the repository (kept in the vault)`);
    }
    // Kept out by pathspec: what no exclude line keeps out already (git add fails on a pathspec,
    // even an exclusion, that names an ignored path).
    const keep = [...(this.checks.untrackOwn ? [OWN_DIR] : []), ...out.map((f) => f.path)];
    const ignored = keep.length ? await this.localGit(['check-ignore', '-z', '--stdin'], keep.join('\0')) : null;
    const already = new Set((ignored?.raw ?? '').split('\0').filter(Boolean));
    const specs = ['.', ...keep.filter((p) => !already.has(p)).map((p) => `:(exclude,literal)${p}`)];
    const add = await this.localGit(['add', '--all', '--pathspec-from-file=-', '--pathspec-file-nul'], specs.join('\0'));
    if (!add.ok) return none(`git add failed: ${lastLine(add.stderr)}`);
    const staged = await this.localGit(['diff', '--cached', '--quiet']);
    if (staged.ok) return { committed: false, conflict: null, error: null };
    const check = await this.localGit(['diff', '--cached', '--check']);
    const conflict = hasConflictMarkers(check.stdout) && this.checks.conflicts ? 'conflict markers'
      : unmerged.length && this.checks.conflicts ? `unmerged paths (${unmerged.slice(0, 5).join(', ')}${unmerged.length > 5 ? ', …' : ''})` : null;
    const c = await this.localGit([...(await this.identity()), 'commit', '--quiet', '--no-verify', '-F', '-'], message);
    if (!c.ok) return { committed: false, conflict, error: `git commit failed: ${lastLine(c.stderr || c.stdout)}` };
    return { committed: true, conflict, error: null };
  }

  async push(s: SessionSummary, report: GitReport): Promise<true> {
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
      const why = pushFailure(p.stderr);
      // The control: the old rule, which took any "rejected" for a race.
      const race = !this.checks.pushRule ? /rejected|non-fast-forward|fetch first/i.test(p.stderr) : why.race;
      if (!race) {
        report.error = `push failed, committed locally (the next tick tries again): ${why.line}`;
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
      this.log.info({ event: 'git_rebased', attempt }, `git: push rejected (${why.line}), rebased (attempt ${attempt})`);
    }
    report.error = `push rejected ${this.config.git.push_retries} times, someone else pushing first each time: committed locally (the next tick tries again)`;
    return true;
  }

  // Pushes a branch of ours; git's own line when it fails.
  async pushBranch(name: string): Promise<{ ok: boolean; line: string }> {
    if (!(await this.hasRemote())) return { ok: false, line: `no remote \`${this.config.git.remote}\`` };
    const p = await this.git(['push', '--quiet', this.config.git.remote, `refs/heads/${name}:refs/heads/${name}`]);
    return { ok: p.ok, line: p.ok ? '' : pushFailure(p.stderr).line };
  }

  // Where a branch of ours went, for the report's sentence.
  where(name: string, p: { ok: boolean; line: string }): string {
    return p.ok
      ? `saved on branch ${name}, pushed to ${this.config.git.remote} (not on the main branch until you merge it)`
      : `saved on branch ${name}, local only (its push failed: ${p.line}; not on the main branch until you merge it)`;
  }

  // A true conflict: the session's work goes to its own branch (local and remote), and main is
  // reset to the remote's, clean, for the next session.
  async saveConflict(s: SessionSummary, branch: string, report: GitReport, why: string): Promise<void> {
    const name = `nightshift/${s.id}`;
    await this.localGit(['branch', '--force', name, 'HEAD']);
    const p = await this.pushBranch(name);
    await this.localGit(['reset', '--hard', '--quiet', `${this.config.git.remote}/${branch}`]);
    report.branch = name;
    report.branch_pushed = p.ok;
    report.error = `conflict: could not rebase onto ${this.config.git.remote}/${branch} (${why}): ${this.where(name, p)}`;
    this.log.warn({ event: 'git_conflict', branch: name, pushed: p.ok }, `git: ${report.error}`);
  }

  // A commit that may not stay on main (conflict markers, unmerged paths): it goes to its own
  // branch, and main steps back one commit, so it never reaches main (local or remote). Returns
  // the report's sentence.
  async moveAside(name: string, report: GitReport, why: string): Promise<string> {
    await this.localGit(['branch', '--force', name, 'HEAD']);
    await this.localGit(['reset', '--hard', '--quiet', 'HEAD~1']);
    const p = await this.pushBranch(name);
    report.branch = name;
    report.branch_pushed = p.ok;
    const said = `${why}: ${this.where(name, p)}`;
    this.log.warn({ event: 'git_conflict_markers', branch: name, pushed: p.ok }, `git: ${said}`);
    return said;
  }

  // The nightshift/ branches not merged into HEAD, local or at the remote (as last fetched or
  // pushed): where work went that is not on main.
  async openBranches(): Promise<Array<{ name: string; local: boolean; remote: boolean }>> {
    const prefixes = ['refs/heads/nightshift/', `refs/remotes/${this.config.git.remote}/nightshift/`];
    // The common answer, no such branch at all, needs no git process (status).
    if (anyRefUnder(this.config.vault, prefixes) === false) return [];
    const r = await this.localGit(['for-each-ref', '--format=%(refname)', '--no-merged', 'HEAD', ...prefixes]);
    if (!r.ok) return [];
    const byName = new Map<string, { name: string; local: boolean; remote: boolean }>();
    const remotePrefix = `refs/remotes/${this.config.git.remote}/`;
    for (const ref of r.stdout.split('\n').filter(Boolean)) {
      const local = ref.startsWith('refs/heads/');
      const name = local ? ref.slice('refs/heads/'.length) : ref.slice(remotePrefix.length);
      const b = byName.get(name) ?? { name, local: false, remote: false };
      if (local) b.local = true;
      else b.remote = true;
      byName.set(name, b);
    }
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  // How old the oldest commit the remote does not have is, in ms (null: none, or unknown).
  async oldestUnpushedAge(now: Date): Promise<{ count: number; ageMs: number } | null> {
    const branch = this.config.git.branch ?? headBranch(this.config.vault);
    if (!branch) return null;
    const r = await this.localGit(['log', '--format=%ct', `${this.config.git.remote}/${branch}..HEAD`]);
    const times = r.ok ? r.stdout.split('\n').filter(Boolean).map(Number) : [];
    if (!times.length) return null;
    return { count: times.length, ageMs: now.getTime() - Math.min(...times) * 1000 };
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
