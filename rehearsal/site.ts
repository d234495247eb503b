// The throwaway site a rehearsal runs in (config/rehearsal.ts says where): made anew each time,
// with a vault cloned from the real one's commits and a bare remote of its own, so its pull and
// push run for real and reach nothing of the site. No file is shared with the real vault
// (--no-hardlinks: a chgrp here never changes one of the site's).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RehearsalPaths } from '../config/rehearsal.js';
import type { Config } from '../config/schema.js';
import { allows, sessionUserFor, vaultFix, type SessionUser } from '../config/session-user.js';
import { untrustedGitMarker } from '../vault/git-guard.js';

export type RehearsalVault = 'clone' | 'copy' | 'empty';

const within = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

function git(args: string[], env: NodeJS.ProcessEnv): void {
  // The real vault may belong to the service user: reading it is all a clone does.
  const r = spawnSync('git', ['-c', 'safe.directory=*', ...args], { encoding: 'utf8', env: { ...env, GIT_TERMINAL_PROMPT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}`);
}

// A folder the session user must pass through to reach the rehearsal's vault and state: its
// group's search bit, as a real session's state_dir gets (config/session-user.ts openSessionsDir).
function passThrough(dir: string, u: SessionUser): void {
  const st = fs.statSync(dir);
  if (allows(st, u, 1)) return;
  if (st.gid !== u.gid) fs.chownSync(dir, st.uid, u.gid);
  fs.chmodSync(dir, (st.mode & 0o7777) | 0o010);
}

// The vault's git is cloned only where nightshift itself runs git: git on, `.git` a real folder
// (not a `gitdir:` file or a link a session left, which could lead the clone to another repository
// of the host), and not marked untrusted. A vault with git off keeps whatever `.git` a session made
// there (nothing moves it aside), so that one is copied around, never opened.
export function trustedRepo(config: Pick<Config, 'vault' | 'state_dir' | 'git'>): boolean {
  if (!config.git.enabled || fs.existsSync(untrustedGitMarker(config.state_dir))) return false;
  return fs.lstatSync(path.join(config.vault, '.git'), { throwIfNoEntry: false })?.isDirectory() === true;
}

// Makes the rehearsal's site: state and logs empty, the vault a clone of the real vault's commits
// (a copy when it is no git repository), its remote a bare clone beside it.
export function makeRehearsalSite(config: Config, p: RehearsalPaths, env: NodeJS.ProcessEnv): RehearsalVault {
  fs.rmSync(p.site, { recursive: true, force: true });
  fs.mkdirSync(p.site, { recursive: true, mode: 0o700 });
  fs.mkdirSync(p.state, { mode: 0o700 });
  fs.mkdirSync(p.logs, { mode: 0o755 });
  let made: RehearsalVault = 'empty';
  if (trustedRepo(config)) {
    git(['clone', '--quiet', '--bare', '--no-hardlinks', config.vault, p.remote], env);
    git(['clone', '--quiet', '--no-hardlinks', '--origin', config.git.remote, p.remote, p.vault], env);
    made = 'clone';
  } else if (fs.existsSync(config.vault)) {
    // Never the site's own state or logs, should they lie in the vault.
    // Nor a .git nightshift does not trust: copied, git in the rehearsal could open it.
    const dotGit = path.join(config.vault, '.git');
    fs.cpSync(config.vault, p.vault, { recursive: true, verbatimSymlinks: true, filter: (src) => !within(src, config.state_dir) && !within(src, config.log_dir) && !within(src, dotGit) });
    made = 'copy';
  } else fs.mkdirSync(p.vault);
  const u = sessionUserFor(config).user;
  if (u) {
    for (const d of [config.state_dir, p.root, p.site]) passThrough(d, u);
    const r = spawnSync('sh', ['-c', vaultFix(p.vault, u)], { encoding: 'utf8', env: { PATH: env.PATH || '/usr/bin:/bin' } });
    if (r.status !== 0) throw new Error(`cannot give the rehearsal's vault ${p.vault} to ${u.name}: ${r.stderr.trim()}`);
  }
  return made;
}
