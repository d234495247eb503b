// What git did with a session's work, as `run`, `tick`, `show` and `sessions` print it: one line,
// and where the work is when it is not on main.
import type { GitOutcome } from '../budget/session-record.js';
import { formatSize } from '../config/size.js';

export function gitLine(g: GitOutcome): string {
  const parts = [g.pulled ? 'pulled' : 'not pulled', g.committed ? 'committed' : 'nothing committed', g.pushed ? 'pushed' : 'not pushed'];
  if (g.branch) parts.push(`work on branch ${g.branch} (${g.branch_pushed ? 'pushed' : 'local only'})`);
  return `${parts.join(', ')}${g.error ? ` (${g.error})` : ''}`;
}

// The lines below the git line: the branch that holds the work, files left out, files untracked.
export function gitNotes(g: GitOutcome): string[] {
  const out: string[] = [];
  if (g.branch) out.push(`the session's work is on branch ${g.branch}${g.branch_pushed ? ', pushed' : ', local only (not pushed)'}: not on main until you merge it`);
  for (const f of g.left_out) {
    out.push(`left out: ${f.path} (${formatSize(f.size)}, ${f.limit === 'commit_file' ? 'over limits.commit_file; listed in .git/info/exclude' : 'over limits.commit_total; a later commit takes it'})`);
  }
  if (g.untracked.length) out.push(`untracked: ${g.untracked.join(', ')} (nightshift's own, taken out of the repository, kept in the vault)`);
  return out;
}
