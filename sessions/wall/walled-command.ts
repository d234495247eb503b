// The command line that starts the CLI inside the wall: bwrap with the session's layout and its
// own network namespace, the seccomp program on a descriptor, the bridge that serves the
// endpoints inside, each Bash command in a Landlock domain of its own, the session's cell around
// all of it. A piece the machine cannot give refuses the session.
import fs from 'node:fs';
import os from 'node:os';
import type { Config } from '../../config/schema.js';
import type { ChildInput } from '../../core/child-process.js';
import { SandboxUnavailableError } from '../../core/errors.js';
import { giveToSession, type SessionUser } from '../../config/session-user.js';
import type { Logger } from '../../logs/logger.js';
import { findPerl } from '../run/reaper.js';
import { bridged, WALL_API, type BridgeRoute } from './bridge.js';
import type { Cell } from './cgroup.js';
import { writeShellPrefix } from './landlock.js';
import { bwrapArgs, NO_PERL, resolveCommand, SECCOMP_FD } from './sandbox.js';
import { seccompProgram } from './seccomp.js';
import type { Teardown } from './teardown.js';
import { wallLayout } from './wall-layout.js';

const refused = (why: string) => new SandboxUnavailableError(`Refused: sandbox: bwrap is configured and ${why}`);

// The perl the bridge and the shell prefix run in: without one the wall cannot be made.
export function wallPerl(envPath: string): string {
  const perl = findPerl(envPath);
  if (!perl) throw refused(NO_PERL);
  return perl;
}

export type WalledInput = {
  config: Config;
  // The supervisor's environment, and the session's (its PATH finds bwrap).
  hostEnv: NodeJS.ProcessEnv;
  sessionPath: string;
  dir: string;
  home: string;
  // The CLI's resolved path, and its arguments.
  cli: string;
  args: string[];
  perl: string;
  walledAs: SessionUser | null;
  // The sockets' folder and the bridge's routes (sessions/wall/endpoints.ts).
  sockets: string;
  routes: BridgeRoute[];
  peerChecked: boolean;
  cell: Cell;
  teardown: Teardown;
  log: Pick<Logger, 'warn'>;
  // Test-only controls (sessions/wall/guest.ts): false leaves each piece out.
  seccomp: boolean;
  domain: boolean;
  pinSettings: boolean;
  hostView: boolean;
};

export type Walled = {
  command: string;
  args: string[];
  // The spawned command's fds 3, 4, ...: the seccomp program bwrap reads, the sockets' folder the
  // bridge alone holds.
  inputs: ChildInput[];
  // CLAUDE_CODE_SHELL_PREFIX for the session: the Landlock prefix, or null (the control).
  shellPrefix: string | null;
};

export function walledCommand(o: WalledInput): Walled {
  const bwrap = resolveCommand('bwrap', o.sessionPath);
  if (!bwrap) throw new SandboxUnavailableError('Refused: sandbox: bwrap is configured and `bwrap` is not on PATH');
  const layout = wallLayout({
    config: o.config, env: o.hostEnv, dir: o.dir, home: o.home, cli: o.cli, operatorHome: os.homedir(), log: o.log, walledAs: o.walledAs, pinSettings: o.pinSettings,
    hideSockets: o.peerChecked ? o.sockets : null, hostView: o.hostView,
  });
  // A machine without a filter refuses the session (the probe said so before the charge).
  let inputs: ChildInput[] = [];
  try {
    if (o.seccomp) inputs = [seccompProgram()];
  } catch (err) {
    throw refused((err as Error).message);
  }
  // Each Bash command in a Landlock domain of its own: no tool reaches the memory or the
  // descriptors of the CLI, the bridge or bwrap's pid 1. The operator's own value never applies.
  let shellPrefix: string | null = null;
  if (o.domain) {
    try {
      shellPrefix = writeShellPrefix(o.dir, o.perl);
    } catch (err) {
      throw refused((err as Error).message);
    }
  }
  // The bridge gets the sockets' folder as a descriptor, fd 3 + its place in inputs.
  const dirFd = fs.openSync(o.sockets, 'r');
  o.teardown.add(() => fs.closeSync(dirFd));
  inputs.push(dirFd);
  const inner = bridged(o.perl, { dirFd: 3 + inputs.length - 1, routes: o.routes, api: { path: WALL_API.socket, socket: 'a', onlyCli: o.peerChecked }, refused: 'r' }, o.cli, o.args);
  // Last, once every file and socket is in place: the folder is the session user's.
  if (o.walledAs) giveToSession(o.dir, o.walledAs);
  const wall = bwrapArgs({ ...layout, network: 'private' }, inner.command, inner.args, { seccompFd: o.seccomp ? SECCOMP_FD : null });
  return { ...o.cell.wrap(bwrap, wall), inputs, shellPrefix };
}
