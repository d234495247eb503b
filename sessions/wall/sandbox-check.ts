// Before anything is charged: whether the configured wall can be made for this session at all.
// A sandbox that cannot be made, a CLI the wall would hide, a session user that cannot be had or
// cannot reach the folders the wall binds: each refuses the session, uncounted.
import type { Config } from '../../config/schema.js';
import { SandboxUnavailableError } from '../../core/errors.js';
import { reachProblems, sessionUserFor, type SessionUser } from '../../config/session-user.js';
import { hiddenByWall, resolveCommand, sandboxProbe } from './sandbox.js';

export type WallConfig = Pick<Config, 'sandbox' | 'session_user' | 'file' | 'vault' | 'state_dir' | 'hooks' | 'claude'>;

// The user the session runs as: null for the supervisor's own (not root, unwalled, or the
// test-only control). A user that cannot be had refuses the session.
export function sessionUserOf(config: WallConfig, asSessionUser = true): SessionUser | null {
  if (!asSessionUser) return null;
  const { user, problem } = sessionUserFor(config);
  if (problem) throw new SandboxUnavailableError(`Refused: ${problem}`);
  return user;
}

// Checked before anything is charged: a configured sandbox that cannot be made refuses the session,
// and so does a session user that cannot be had or cannot reach the folders the wall binds.
export async function checkSandbox(config: WallConfig, env: NodeJS.ProcessEnv, asSessionUser = true, probe = sandboxProbe(config, env, asSessionUser)): Promise<void> {
  const problem = await probe;
  if (problem) throw new SandboxUnavailableError(`Refused: sandbox: bwrap is configured and ${problem}. Install bubblewrap, or set \`sandbox: none\` to run sessions unwalled.`);
  const cli = config.sandbox === 'bwrap' ? resolveCommand(config.claude.command, env.PATH ?? '') : null;
  const hidden = cli ? hiddenByWall(cli) : null;
  if (hidden) throw new SandboxUnavailableError(`Refused: claude.command: ${hidden}`);
  const user = sessionUserOf(config, asSessionUser);
  const reach = user ? reachProblems(config, user, cli) : [];
  if (reach.length) throw new SandboxUnavailableError(`Refused: the session runs as session_user ${user!.name} (the supervisor is root), and ${reach.join('; ')}`);
}
