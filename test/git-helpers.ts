// Real git repositories for tests: a bare remote, the vault cloned from it, and a second clone
// that plays another writer.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { GIT_OFF, shareWithSession } from './helpers.js';

const ident = ['-c', 'user.name=other', '-c', 'user.email=other@example.com'];

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...ident, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export type Repos = { remote: string; vault: string; other: string };

// The vault is cloned into `vault` (which must not exist yet or be empty); a workspace's config in
// `dir` gets git back on.
export function makeRepos(dir: string, vault: string): Repos {
  const remote = path.join(dir, 'remote.git');
  const other = path.join(dir, 'other');
  fs.mkdirSync(remote);
  git(remote, 'init', '--quiet', '--bare', '--initial-branch=main');
  const seed = path.join(dir, 'seed');
  fs.mkdirSync(seed);
  git(seed, 'init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(path.join(seed, 'notes.md'), 'line one\n');
  fs.writeFileSync(path.join(seed, '.gitignore'), 'scratch/\n');
  git(seed, 'add', '.');
  git(seed, 'commit', '--quiet', '-m', 'seed');
  git(seed, 'remote', 'add', 'origin', remote);
  git(seed, 'push', '--quiet', 'origin', 'main');
  fs.rmSync(vault, { recursive: true, force: true });
  git(dir, 'clone', '--quiet', remote, vault);
  git(dir, 'clone', '--quiet', remote, other);
  shareWithSession(vault);
  // The workspace's config (helpers.ts configYaml) had git off for a vault that was no repository.
  const config = path.join(dir, 'nightshift.yaml');
  if (fs.existsSync(config)) fs.writeFileSync(config, fs.readFileSync(config, 'utf8').replace(GIT_OFF, ''));
  return { remote, vault, other };
}

// Another writer commits a file and pushes.
export function otherPushes(repos: Repos, file: string, content: string): void {
  git(repos.other, 'pull', '--quiet', '--rebase', 'origin', 'main');
  fs.writeFileSync(path.join(repos.other, file), content);
  git(repos.other, 'add', '.');
  git(repos.other, 'commit', '--quiet', '-m', `other writes ${file}`);
  git(repos.other, 'push', '--quiet', 'origin', 'main');
}

export function remoteLog(repos: Repos, ref = 'main'): string[] {
  return git(repos.remote, 'log', '--format=%s', ref).split('\n');
}

export function remoteFile(repos: Repos, file: string, ref = 'main'): string {
  return git(repos.remote, 'show', `${ref}:${file}`);
}
