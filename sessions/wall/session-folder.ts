// One session's own folder under state_dir/sessions: a private HOME, and the files the CLI is
// pointed at (its state, its MCP config), each readable by the session alone. Anything left in
// the sessions folder belongs to a session that is over (only one supervisor runs sessions at a
// time: the run lock), so it is swept first.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logs/logger.js';
import { openSessionsDir, type SessionUser } from '../../config/session-user.js';
import { sessionsDir } from './session-dirs.js';

export type SessionFolder = { dir: string; home: string };

// Made before anything else of the session; `walledAs` is the user a root supervisor's walled
// session runs as (null: the supervisor's own).
export function makeSessionFolder(config: Pick<Config, 'state_dir' | 'vault' | 'hooks'>, sessionId: string, walledAs: SessionUser | null, log: Pick<Logger, 'warn'>): SessionFolder {
  // The leftovers of dead supervisors were swept as this start began (daemon/tick/supervise.ts),
  // sparing the folders of sessions other supervisors run now.
  const root = sessionsDir(config);
  const dir = path.join(root, sessionId);
  const home = path.join(dir, 'home');
  if (walledAs) openSessionsDir(config.state_dir, root, walledAs);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  if (walledAs) {
    // The vault is root's (its group the session's): the session's own git would refuse it for
    // "dubious ownership". Its HOME says the vault and the extra dirs are its to work in.
    const dirs = [config.vault, ...config.hooks.extra_dirs].map((d) => `\tdirectory = ${path.resolve(d)}\n`).join('');
    fs.writeFileSync(path.join(home, '.gitconfig'), `[safe]\n${dirs}`, { mode: 0o600 });
  }
  fs.chmodSync(dir, 0o700);
  return { dir, home };
}

// A file in the session's folder for the supervisor and the session alone; its path.
export function writeSessionFile(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}
