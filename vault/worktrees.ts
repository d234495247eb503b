// Sessions side by side in one vault (sessions.max_concurrent above 1): each works in a git
// worktree of its own, on a branch of its own (`nightshift/session/<id>`), so no session writes
// into another's files. What it committed reaches the main branch one session at a time, under the
// vault's git lock: rebased onto main, fast-forwarded, pushed. A conflict goes to the session's
// `nightshift/<id>` branch, as in a one-at-a-time site. The worktrees live under state_dir (hidden
// from sessions; each session's own is bound back into its wall); nightshift's git names their
// repository on its command line, never reading it from the worktree's `.git` file.
import fs from 'node:fs';
import path from 'node:path';
import type { Redactor } from '../core/redact.js';
import { commitMessage, emptyGitReport, gitSpanAttrs, lastLine, VaultGit, type GitChecks, type GitReport, type SessionSummary } from './git-sync.js';
import { SESSION_BRANCH_PREFIX, worktreesDir } from './worktree-paths.js';

export { SESSION_BRANCH_PREFIX, worktreesDir };
import { addExcludes, OWN_EXCLUDE } from './info-exclude.js';


export type Worktree = { dir: string; branch: string; id: string; git: VaultGit };

// The worktree's repository inside the vault's .git, as git names it (the worktree's folder name).
const adminDir = (vault: string, id: string) => path.join(vault, '.git', 'worktrees', id);
// Where the worktree's git finds its repository: named, unless the control's check is off.
const repoOf = (main: VaultGit, id: string) => (main.checks.namedRepo ? adminDir(main.config.vault, id) : undefined);

// A worktree on a new branch from the vault's HEAD (pulled just before, under the same lock);
// its files given to the vault's owner (the session user writes them). An error in git's words.
export async function addWorktree(main: VaultGit, id: string, o: { checks?: Partial<GitChecks> }): Promise<Worktree | { error: string }> {
  const { config } = main;
  const root = worktreesDir(config.state_dir);
  const dir = path.join(root, id);
  const branch = `${SESSION_BRANCH_PREFIX}${id}`;
  const r = await main.locked('worktree', async () => {
    // The session user passes through to its own worktree and lists nothing else there.
    fs.mkdirSync(root, { recursive: true, mode: 0o711 });
    fs.chmodSync(root, 0o711);
    // The state file's exclude is the repository's (one info/exclude for every worktree).
    if (main.checks.untrackOwn) addExcludes(config.vault, config.state_dir, "# nightshift's session state", [OWN_EXCLUDE]);
    const a = await main.localGit(['worktree', 'add', '--quiet', '-b', branch, dir, 'HEAD']);
    return a.ok ? null : lastLine(a.stderr);
  });
  if (!r.held) return { error: main.signal?.aborted ? 'stop requested' : 'git lock not obtained in time' };
  if (r.value) return { error: `git worktree add failed: ${r.value}` };
  giveTreeTo(dir, fs.statSync(config.vault));
  const git = new VaultGit({ ...config, vault: dir }, main.log, main.signal, o.checks ?? {}, repoOf(main, id));
  return { dir, branch, id, git };
}

// After the session: its work committed in the worktree, then landed on main under the vault's
// lock. The worktree goes once its work is on main or on a branch of its own; kept (and said)
// otherwise, for the next start to land. A span of the fire's trace (main.trace), as the pull is.
export async function landWorktree(main: VaultGit, wt: Worktree, s: SessionSummary, redact: Redactor, report: GitReport, message = commitMessage(s, redact)): Promise<void> {
  const span = main.trace.child('nightshift.git land', { 'nightshift.git.step': 'land', 'nightshift.session.id': s.id });
  try {
    await landUntraced(main, wt, s, redact, report, message);
  } finally {
    span.set(gitSpanAttrs(report));
    if (report.error) span.fail(report.error);
    span.end();
  }
}

async function landUntraced(main: VaultGit, wt: Worktree, s: SessionSummary, redact: Redactor, report: GitReport, message: string): Promise<void> {
  const pullError = report.error;
  report.error = null;
  let done = false;
  try {
    await wt.git.clearStaleIndexLock();
    const c = await wt.git.commitAll(message, report);
    if (c.committed) report.committed = true;
    if (c.error) {
      report.error = `commit failed in the session's worktree ${wt.dir} (kept; the next start lands it): ${redact(c.error)}`;
      return;
    }
    const branch = await main.branch();
    if (c.committed && c.conflict) {
      report.error = await aside(main, wt, s.id, report, `the session's commit holds ${c.conflict}`);
      done = true;
      return;
    }
    const ahead = await main.localGit(['rev-list', '--count', `${branch}..${wt.branch}`]);
    if (ahead.ok && ahead.stdout === '0') {
      done = true;
      return;
    }
    const landed = await main.locked('land', async () => {
      // The remote first (another host or a person may have pushed), then this session's commits on top.
      if (await main.hasRemote()) {
        const p = await main.git([...(await main.identity()), 'pull', '--rebase', '--no-autostash', main.config.git.remote, branch]);
        if (!p.ok && !/couldn't find remote ref/i.test(p.stderr)) {
          await main.localGit(['rebase', '--abort']);
          main.log.warn({ event: 'git_pull', error: lastLine(p.stderr) }, `git: pull before landing ${s.id} failed, landing on the local state: ${lastLine(p.stderr)}`);
        }
      }
      const rb = await wt.git.localGit([...(await main.identity()), 'rebase', '--quiet', branch]);
      if (!rb.ok) {
        await wt.git.localGit(['rebase', '--abort']);
        return { conflict: lastLine(rb.stderr || rb.stdout) };
      }
      const ff = await main.localGit(['merge', '--ff-only', '--quiet', wt.branch]);
      if (!ff.ok) return { failed: `git merge --ff-only ${wt.branch} failed: ${lastLine(ff.stderr)}` };
      if (main.signal?.aborted) return { stopped: true };
      await main.push(s, report);
      return { ok: true };
    });
    if (!landed.held) {
      report.error = `${main.signal?.aborted ? 'stop requested' : 'git lock not obtained in time'}: committed in the session's worktree ${wt.dir} (kept; the next start lands it)`;
      return;
    }
    const v = landed.value;
    if ('conflict' in v) {
      report.error = await aside(main, wt, s.id, report, `conflict: could not rebase onto ${branch} (${v.conflict})`);
      done = true;
    } else if ('failed' in v) report.error = `${v.failed}: committed in the session's worktree ${wt.dir} (kept; the next start lands it)`;
    else {
      done = true;
      if ('stopped' in v) report.error = 'stop requested: on the main branch locally, push skipped (the next tick pushes it)';
    }
  } finally {
    if (done) await removeWorktree(main, wt);
    else report.uncommitted = await wt.git.dirty(report.left_out);
    if (pullError) report.error = report.error ? `${report.error}; before the session: ${pullError}` : pullError;
    if (report.error) main.log.warn({ event: 'git_error', error: report.error, worktree: wt.dir }, `git: ${report.error}`);
  }
}

// The session's commits on `nightshift/<id>` (pushed where a remote takes it), never on main.
async function aside(main: VaultGit, wt: Worktree, id: string, report: GitReport, why: string): Promise<string> {
  const name = `nightshift/${id}`;
  await main.localGit(['branch', '--force', name, wt.branch]);
  const p = await main.pushBranch(name);
  report.branch = name;
  report.branch_pushed = p.ok;
  const said = `${why}: ${main.where(name, p)}`;
  main.log.warn({ event: 'git_conflict', branch: name, pushed: p.ok }, `git: ${said}`);
  return said;
}

export async function removeWorktree(main: VaultGit, wt: Pick<Worktree, 'dir' | 'branch'>): Promise<void> {
  const r = await main.localGit(['worktree', 'remove', '--force', '--force', wt.dir]);
  if (!r.ok) {
    fs.rmSync(wt.dir, { recursive: true, force: true });
    await main.localGit(['worktree', 'prune']);
  }
  await main.localGit(['branch', '-D', '--quiet', wt.branch]);
}

// Worktrees a session left (its supervisor killed), by session id: each landed now, as work an
// earlier session left; only those of this vault's repository (another vault's keep theirs).
export async function landLeft(main: VaultGit, ids: string[], redact: Redactor, o: { checks?: Partial<GitChecks>; summary: (id: string) => SessionSummary }): Promise<void> {
  const root = worktreesDir(main.config.state_dir);
  for (const id of ids) {
    if (!fs.existsSync(adminDir(main.config.vault, id))) continue;
    const wt: Worktree = { dir: path.join(root, id), id, branch: `${SESSION_BRANCH_PREFIX}${id}`, git: new VaultGit({ ...main.config, vault: path.join(root, id) }, main.log, main.signal, o.checks ?? {}, repoOf(main, id)) };
    const report = emptyGitReport();
    const s = o.summary(id);
    await landWorktree(main, wt, s, redact, report, `nightshift(${s.agent}): work left by session ${id}, whose supervisor ended before landing it\n\nSession-Id: ${id}\n`);
    const where = report.branch ? ` (on ${report.branch})` : report.pushed ? ' (pushed)' : '';
    main.log.warn({ event: 'git_worktree_left', session: id, git: report }, `git: the worktree session ${id} left was landed${where}${report.error ? `: ${report.error}` : ''}`);
  }
}

// A fresh checkout as the vault is kept: its owner and group, and where the vault's folder is
// group-writable (the session user's group, config/session-user.ts vaultFix), group rw on every
// file and setgid folders. Links are never followed.
function giveTreeTo(dir: string, vault: fs.Stats): void {
  if (process.getuid?.() !== 0) return;
  const group = (vault.mode & 0o020) !== 0;
  const walk = (p: string) => {
    fs.lchownSync(p, vault.uid, vault.gid);
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) return;
    if (group) fs.chmodSync(p, (st.mode & 0o7777) | (st.isDirectory() ? 0o2070 : 0o060 | ((st.mode & 0o100) ? 0o010 : 0)));
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
  };
  walk(dir);
}
