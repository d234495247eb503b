// `nightshift lock -- CMD...`: CMD runs holding the host-wide git lock (the flock(1) habit).
import { formatDuration, parseDuration } from '../../config/duration.js';
import { LockedError, UsageError } from '../../core/errors.js';
import type { FullContext } from '../context.js';
import { withStopSignal } from '../stop-signal.js';

export const help = `Usage: nightshift lock [--timeout 120s] [--config PATH] -- CMD [ARGS...]

Runs CMD while holding the host-wide git lock that every nightshift process takes before touching
the vault's git (the flock(1) habit). Exits with CMD's exit code; 75 if the lock was not obtained
within --timeout (default git.lock_timeout).`;

export const stage = 'full';

export async function run({ config, positionals, flags, io, logger, env }: FullContext): Promise<number> {
  if (!positionals.length) throw new UsageError('Expected `nightshift lock [--timeout 120s] -- CMD...`, got no command');
  const timeout = flags.timeout === undefined ? config.git.lock_timeout : parseDuration(flags.timeout);
  if (timeout === null) throw new UsageError(`Expected --timeout as a duration like \`90s\`, got \`${flags.timeout}\``);
  const { acquireLock, lockOwner } = await import('../../core/lock.js');
  const held = await acquireLock(config.git.lock_file, { timeoutMs: timeout, purpose: io.redact(`lock: ${positionals.join(' ')}`).slice(0, 200), logger });
  if (!held) {
    const owner = lockOwner(config.git.lock_file);
    throw new LockedError(`git lock ${config.git.lock_file} not obtained within ${formatDuration(timeout)}${owner ? ` (held by pid ${owner.pid} since ${owner.since})` : ''}`);
  }
  try {
    const { execa } = await import('execa');
    const child = execa(positionals[0], positionals.slice(1), { stdio: 'inherit', reject: false, env, extendEnv: false });
    // A stop signal goes to the command; the lock is released once it has ended.
    const r = await withStopSignal(logger, 'passing it on to the locked command', async (signal) => {
      signal.addEventListener('abort', () => child.kill(signal.reason as NodeJS.Signals), { once: true });
      return child;
    });
    if (r.exitCode === undefined && !r.signal) throw new UsageError(`cannot run \`${positionals[0]}\`: ${r.shortMessage ?? 'not found'}`);
    return r.exitCode ?? 128 + (r.signal === 'SIGKILL' ? 9 : 15);
  } finally {
    await held.release();
  }
}
