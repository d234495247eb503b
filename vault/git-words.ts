// The vault's git as words: the commit message, `git status` parsed, what stays out of a commit,
// a failed push read as git wrote it, an operation in progress and its fix. Pure but for the two
// questions put to git and the sizes read with lstat.
import fs from 'node:fs';
import path from 'node:path';
import type { Redactor } from '../core/redact.js';
import type { Config } from '../config/schema.js';
import { formatSize } from '../config/size.js';
import type { GitOutcome } from '../budget/session-record.js';
import { lastLine, type Git } from './git-run.js';

// A file kept out of the commit for its size: over limits.commit_file (listed in
// .git/info/exclude, so it stays out), or dropped, largest first, to bring the commit under
// limits.commit_total (left untracked; a later commit with room takes it).
export type LeftOut = GitOutcome['left_out'][number];

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

// What git leaves in its folder while an operation waits for the operator, and the way out.
export const OPERATIONS: ReadonlyArray<{ file: string; what: string; fix: (v: string) => string }> = [
  { file: 'MERGE_HEAD', what: 'a merge', fix: (v) => `finish it (fix the conflicts, then git -C ${v} commit) or abort it (git -C ${v} merge --abort)` },
  { file: 'rebase-merge', what: 'a rebase', fix: (v) => `finish it (git -C ${v} rebase --continue) or abort it (git -C ${v} rebase --abort)` },
  { file: 'rebase-apply', what: 'a rebase or git am', fix: (v) => `finish it (git -C ${v} rebase --continue, or am --continue) or abort it (rebase --abort, or am --abort)` },
  { file: 'CHERRY_PICK_HEAD', what: 'a cherry-pick', fix: (v) => `finish it (git -C ${v} cherry-pick --continue) or abort it (git -C ${v} cherry-pick --abort)` },
  { file: 'REVERT_HEAD', what: 'a revert', fix: (v) => `finish it (git -C ${v} revert --continue) or abort it (git -C ${v} revert --abort)` },
];

// The operation in progress in the vault, as a sentence with its fix; null when none.
export async function operationInProgress(git: Git, vault: string): Promise<string | null> {
  const r = await git(['rev-parse', ...OPERATIONS.flatMap((o) => ['--git-path', o.file])]);
  if (!r.ok) return null;
  const paths = r.stdout.split('\n');
  const i = OPERATIONS.findIndex((_, k) => paths[k] && fs.existsSync(path.resolve(vault, paths[k])));
  return i < 0 ? null : `the vault has ${OPERATIONS[i].what} in progress (.git/${OPERATIONS[i].file}): ${OPERATIONS[i].fix(vault)}`;
}

// What would keep a commit off main, as doctor tells it: an operation in progress, unmerged
// paths, conflict markers in the tracked changes (each with its fix). Empty: none.
export async function vaultConflicts(git: Git, vault: string): Promise<string[]> {
  const out: string[] = [];
  const op = await operationInProgress(git, vault);
  if (op) out.push(op);
  const st = await git(['status', '--porcelain=v1', '-z', '--ignore-submodules=all']);
  const unmerged = st.ok ? unmergedPaths(parseStatus(st.raw ?? '')) : [];
  if (unmerged.length) out.push(`unmerged paths (${unmerged.slice(0, 5).join(', ')}${unmerged.length > 5 ? ', …' : ''}): fix the conflicts and git -C ${vault} add them, or git -C ${vault} checkout -- them`);
  const check = await git(['diff', 'HEAD', '--check']);
  if (hasConflictMarkers(check.stdout) && !unmerged.length) out.push(`conflict markers in uncommitted changes (git -C ${vault} diff HEAD --check): resolve them; until then nightshift commits the vault's work to a nightshift/ branch, not main`);
  return out;
}

// One entry of `git status --porcelain=v1 -z`: its two status letters and its (new) path.
export type StatusEntry = { x: string; y: string; path: string };

// Pure: the entries of `git status --porcelain=v1 -z` (a rename's old path left out).
export function parseStatus(z: string): StatusEntry[] {
  const out: StatusEntry[] = [];
  const parts = z.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const e = parts[i];
    if (e.length < 4) continue;
    out.push({ x: e[0], y: e[1], path: e.slice(3) });
    if (e[0] === 'R' || e[0] === 'C') i++;
  }
  return out;
}

// Pure: paths git still calls unmerged (both sides changed them: `AA`, `UU`, `DU`…).
export const unmergedPaths = (entries: StatusEntry[]): string[] =>
  entries.filter((e) => e.x === 'U' || e.y === 'U' || (e.x === 'A' && e.y === 'A') || (e.x === 'D' && e.y === 'D')).map((e) => e.path);

// Pure: which files stay out of this commit. Over `file`: out, each. Then, while the rest adds
// more than `total`, the largest goes. Sizes are what this commit adds, path by path.
export function leaveOut(files: Array<{ path: string; size: number }>, max: { file: number; total: number }): LeftOut[] {
  const out: LeftOut[] = files.filter((f) => f.size > max.file).map((f) => ({ ...f, limit: 'commit_file' as const }));
  const rest = files.filter((f) => f.size <= max.file).sort((a, b) => b.size - a.size || a.path.localeCompare(b.path));
  let total = rest.reduce((n, f) => n + f.size, 0);
  for (const f of rest) {
    if (total <= max.total) break;
    out.push({ ...f, limit: 'commit_total' });
    total -= f.size;
  }
  return out;
}

// Pure: a failed push read as git wrote it. `race`: only a non-fast-forward (someone pushed
// first), which a rebase and a retry settle; anything else (`remote rejected`, `remote unpack
// failed`, a hook's refusal, a permission) is told in git's own words, never retried as a race.
export function pushFailure(stderr: string): { race: boolean; line: string } {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const refs = lines.filter((l) => /^! \[/.test(l));
  const race = refs.length > 0 && refs.every((l) => /^! \[rejected\].*\((fetch first|non-fast-forward)\)/.test(l));
  const errors = lines.filter((l) => /^(fatal|error):/.test(l) && !/failed to push some refs/.test(l));
  const said = [...new Set([...errors, ...refs])];
  return { race, line: said.length ? said.join('; ') : lastLine(stderr) };
}

// Pure: what stops a start when git.enabled is on and the vault is no work tree (`stderr`: git's
// answer to rev-parse), and the fixes. Said before the charge by run and rehearse, and by doctor.
export function notARepoProblem(config: Pick<Config, 'vault' | 'file'>, stderr = ''): { detail: string; fix: string } {
  if (/dubious ownership/.test(stderr)) {
    return { detail: `git refuses the vault ${config.vault}: "dubious ownership" (another user owns it)`, fix: `chown -R the vault to the user nightshift runs as, or: git config --global --add safe.directory ${config.vault} (as that user)` };
  }
  return {
    detail: `the vault ${config.vault} is no git repository, and git.enabled is true: nothing could be pulled before a session or committed after it`,
    fix: `make it one (\`git -C ${config.vault} init\`, or clone the agent's vault there: \`git clone URL ${config.vault}\`, as \`nightshift init --remote URL\` does), or set git.enabled: false in ${config.file}`,
  };
}

// Pure: the paths `git status --porcelain=v1 -z` names as added or changed (a rename's old path and
// deletions left out).
export const changedPaths = (z: string): string[] => parseStatus(z).filter((e) => e.x !== 'D' && e.y !== 'D').map((e) => e.path);

// Each path's size as lstat tells it (a link weighs its target's name, never its target); folders
// (a submodule) and paths gone meanwhile are left out.
export function weigh(vault: string, paths: string[]): Array<{ path: string; size: number }> {
  const out: Array<{ path: string; size: number }> = [];
  for (const p of paths) {
    const st = fs.lstatSync(path.join(vault, p), { throwIfNoEntry: false });
    if (st && !st.isDirectory()) out.push({ path: p, size: st.size });
  }
  return out;
}

// Pure: the files left out, as the report says them.
export function describeLeftOut(out: LeftOut[], limits: { commit_file: number; commit_total: number }): string {
  return out.map((f) => `\`${f.path}\` (${formatSize(f.size)}, ${f.limit === 'commit_file' ? `over limits.commit_file ${formatSize(limits.commit_file)}: kept out, listed in .git/info/exclude` : `dropped to keep the commit under limits.commit_total ${formatSize(limits.commit_total)}: a later commit takes it`})`).join(', ');
}
