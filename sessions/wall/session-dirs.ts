// Each session's private folder under state_dir/sessions (its HOME, settings and tokens), and the
// sweep every start does of the ones an interrupted supervisor left. Light on purpose: a tick
// with nothing due sweeps too.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logs/logger.js';
import { noun } from '../../core/words.js';

export const sessionsDir = (config: Pick<Config, 'state_dir'>) => path.join(config.state_dir, 'sessions');

// Leftovers of sessions a killed supervisor could not clean up (their settings name tokens that
// died with it): removed by every start that holds the run lock, a session or not. The count.
export function sweepSessionDirs(config: Pick<Config, 'state_dir'>, log?: Pick<Logger, 'warn'>): number {
  const root = sessionsDir(config);
  const old = fs.existsSync(root) ? fs.readdirSync(root) : [];
  for (const o of old) fs.rmSync(path.join(root, o), { recursive: true, force: true });
  if (old.length) log?.warn({ event: 'session_dirs_swept', dirs: old }, `removed ${old.length} session ${noun(old.length, 'folder')} an interrupted supervisor left in ${root}`);
  return old.length;
}
