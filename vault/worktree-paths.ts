// Where sessions' worktrees live and what their branches are called (vault/worktrees.ts), apart so
// that a start can look for ones left behind without loading git.
import path from 'node:path';

export const SESSION_BRANCH_PREFIX = 'nightshift/session/';
export const worktreesDir = (stateDir: string) => path.join(stateDir, 'worktrees');
