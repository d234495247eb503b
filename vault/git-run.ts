// How nightshift runs git in the vault: every command in its own process group, with a timeout,
// the settings that would run a command neutralised; a stale index.lock told from a held one.
import fs from 'node:fs';
import path from 'node:path';
import { listProcs } from '../core/process-tree.js';
import { startChild } from '../core/child-process.js';

// `raw`: stdout untrimmed, for output whose leading blanks mean something (`status --porcelain`).
type GitResult = { ok: boolean; stdout: string; stderr: string; raw?: string };
export type Git = (args: string[], input?: string) => Promise<GitResult>;

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
// `gitDir`: the repository named on the command line, never found through the work tree's `.git`
// (a session's worktree holds a `.git` file the session could have rewritten).
export function gitIn(dir: string, o: { timeoutMs: number; signal?: AbortSignal; groupWrite?: boolean; sessionUid?: number | null; gitDir?: string }): Git {
  const owned = o.sessionUid != null && fs.statSync(dir, { throwIfNoEntry: false })?.uid === o.sessionUid;
  const safe = [...(owned ? ['-c', `safe.directory=${path.resolve(dir)}`] : []), ...(o.gitDir ? [`--git-dir=${o.gitDir}`, `--work-tree=${path.resolve(dir)}`] : [])];
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

// The line that says what went wrong: git's `fatal:`/`error:` line when there is one.
export const lastLine = (s: string) => {
  const lines = s.trim().split('\n').filter(Boolean);
  return lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.at(-1) ?? 'unknown error';
};

// Pure: a umask that no longer takes group write away.
export const groupWritable = (mask: number) => mask & ~0o020;
