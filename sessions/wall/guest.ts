// Everything a session is given, and nothing more, assembled from its pieces: its own folder (a
// private HOME, its state and settings as read-only files: session-folder.ts), its pids and memory
// bounds (cgroup.ts), the loopback endpoints the supervisor serves with per-session tokens
// (endpoints.ts), an environment from an allowlist (config/session-env.ts), and the wall around
// the CLI (walled-command.ts). `close` takes all of it away again (teardown.ts); the tokens die with it.
import { mark } from '../../core/profile.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { sessionEnv } from '../../config/session-env.js';
import type { SessionUser } from '../../config/session-user.js';
import type { ChildInput } from '../../core/child-process.js';
import type { Logger } from '../../logs/logger.js';
import type { SessionMeter } from '../../budget/meter.js';
import type { TraceSpan } from '../../core/trace.js';
import type { SessionHooks } from '../hooks/session-hooks.js';
import type { ApiProxyStats } from './api-proxy.js';
import type { ApiPeerStats } from './api-peers.js';
import { describePlan, splitBounds } from './bounds.js';
import { WALL_API } from './bridge.js';
import { cellFor, type Cell } from './cgroup.js';
import type { EgressNet, EgressStats } from './egress-proxy.js';
import { startEndpoints } from './endpoints.js';
import { resolveCommand } from './sandbox.js';
import { sessionUserOf } from './sandbox-check.js';
import { makeSessionFolder, writeSessionFile } from './session-folder.js';
import { CELLS_FILE } from './session-dirs.js';
import { Teardown } from './teardown.js';
import { walledCommand, wallPerl } from './walled-command.js';

export type GuestInput = {
  config: Config;
  agent: Agent;
  sessionId: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  redact: (text: string) => string;
  // The rendered session state, or null when it could not be built; it may still be being built
  // when the endpoints start, and is written once it is.
  state: Promise<string | null> | string | null;
  version: string;
  // A reason once the session's cost ceiling is passed: the proxy refuses further calls.
  refuse?: () => string | null;
  // Test-only, never read from config or the environment: false walls the session without its
  // seccomp filter, the negative control of what the filter keeps out.
  seccomp?: boolean;
  // Test-only, likewise: false runs the session's Bash commands in the CLI's own domain, the
  // negative control of the shell prefix (sessions/wall/landlock.ts).
  domain?: boolean;
  // Test-only, likewise: false leaves the CLI's user settings as any HOME has them (writable).
  pinSettings?: boolean;
  // Test-only, likewise: false shows the session the whole host read-only, as before its view
  // (sessions/wall/wall-layout.ts hostView): the negative control of what the view keeps out.
  hostView?: boolean;
  // The session's meter: its proxy admits and prices every inference call with it.
  meter?: SessionMeter;
  // The session's trace span: its requests, tool calls and memory operations go under it.
  trace?: TraceSpan;
  // Each upstream reply's headers, as the proxy sees them.
  onHeaders?: (headers: import('node:http').IncomingHttpHeaders) => void;
  // Each request and reply chunk the API proxy passes: the idle watchdog's sign of life.
  onActivity?: () => void;
  // Test-only, never read from config or the environment: the egress proxy's resolver and connect
  // (a name mapped to an address, the final connect redirected to a loopback stand-in).
  egressNet?: Partial<EgressNet>;
  // Test-only, likewise: false runs a root supervisor's walled session as root, the negative
  // control of session_user (what uid 0 reads inside the wall).
  sessionUser?: boolean;
  // Test-only, likewise: false lets any process of the walled session reach the API, as before the
  // bridge checked its peers (the API's TCP route back, no peer check, the sockets' folder in
  // sight): the negative control of sessions/wall/bridge.ts's check.
  apiPeer?: boolean;
};

export type Guest = {
  command: string;
  args: string[];
  env: Record<string, string>;
  // The CLI's own path inside the sandbox: stop requests are sent to that process, since bwrap
  // does not pass signals on.
  cli: string | null;
  sandboxed: boolean;
  // Who the command is started as (a root supervisor's session_user); null: the supervisor.
  user: SessionUser | null;
  // The spawned command's fds 3, 4, ...: the seccomp program bwrap reads, the sockets' folder the
  // bridge alone holds.
  inputs: ChildInput[];
  hooks: SessionHooks | null;
  // Whether the memory tools are served to this session.
  memory: boolean;
  // The egress proxy's counts, for an agent with a `network:` (else null).
  egress: EgressStats | null;
  // The API proxy's counts: what the supervisor itself saw of the session's calls.
  api: ApiProxyStats;
  // The connections to the API the wall refused (not the CLI's); null: unwalled.
  apiPeers: ApiPeerStats | null;
  // The session's pids and memory bounds (limits.pids, limits.memory): its cgroup, or rlimits.
  cell: Cell;
  dir: string;
  // Called once the CLI is spawned: what the endpoints need loads beside the CLI's own start-up.
  spawned(): void;
  close(): Promise<void>;
};

export async function prepareGuest(i: GuestInput, baseArgs: (extra: string[]) => string[]): Promise<Guest> {
  const { config, logger: log } = i;
  const walled = config.sandbox === 'bwrap';
  const walledAs = walled ? sessionUserOf(config, i.sessionUser !== false) : null;
  const teardown = new Teardown(log, i.redact);
  try {
    const { dir, home } = makeSessionFolder(config, i.sessionId, walledAs, log);
    teardown.add(() => fs.rmSync(dir, { recursive: true, force: true }));
    // Made before anything is spawned; what is left in it dies when the session closes.
    // Beside other sessions, each within its share of the host (./bounds.ts splitBounds).
    const split = splitBounds({ pids: config.limits.pids, memory: config.limits.memory }, config.sessions.max_concurrent, { memory: os.totalmem(), threads: threadsMax() });
    if (split.lowered.length) log.warn({ event: 'bounds_split', lowered: split.lowered }, `beside other sessions: ${split.lowered.join('; ')}`);
    const cell = cellFor(split.wanted, i.sessionId, i.env.PATH ?? '', (m) => log.warn({ event: 'bounds_fallback' }, m));
    teardown.add(() => cell.close());
    // For the start after a killed supervisor, which removes them with this folder.
    if (cell.dirs.length) fs.writeFileSync(path.join(dir, CELLS_FILE), JSON.stringify(cell.dirs));
    log.info({ event: 'bounds', mechanism: cell.plan.mechanism }, describePlan(cell.plan));
    const perl = walled ? wallPerl(i.env.PATH ?? '') : null;
    mark('guest_folder_cell');
    const ep = await startEndpoints({ ...i, dir, walled }, teardown);
    mark('endpoints_started');
    const stateText = await i.state;
    // --mcp-config takes every value up to the next flag: it goes first, never last.
    const extra = [
      ...(ep.memory ? ['--mcp-config', writeSessionFile(dir, 'mcp.json', ep.memory.mcpConfig)] : []),
      ...(stateText !== null ? ['--append-system-prompt-file', writeSessionFile(dir, 'session-state.md', `${stateText}\n`)] : []),
      ...(ep.hooks?.args ?? []),
    ];
    const env = sessionEnv({
      env: i.env, agentEnv: i.agent.env, home, apiUrl: walled ? WALL_API.baseUrl : ep.proxy.url, apiSocket: walled ? WALL_API.socket : null, apiToken: ep.proxy.token, oauth: ep.oauth, proxyUrl: ep.egress?.url ?? null,
    });
    const cli = resolveCommand(config.claude.command, env.PATH);
    const args = baseArgs(extra);
    const served = {
      cli, env, hooks: ep.hooks, memory: ep.memory !== null, egress: ep.egress?.stats ?? null, api: ep.proxy.stats, cell, dir,
      // Once the CLI is spawned: what the endpoints need loads beside the CLI's own start-up.
      spawned: ep.memory?.warm ?? (() => {}),
      close: () => teardown.close(),
    };
    // A CLI that cannot be found is left to fail its spawn as such (spawn_failed), walled or not.
    if (!walled || !cli) return { ...cell.wrap(cli ?? config.claude.command, args), inputs: [], sandboxed: false, user: null, apiPeers: null, ...served };
    const w = walledCommand({
      config, hostEnv: i.env, sessionPath: env.PATH, dir, home, cli, args, perl: perl!, walledAs, sockets: ep.sockets, routes: ep.routes, peerChecked: ep.peerChecked,
      cell, teardown, log, seccomp: i.seccomp !== false, domain: i.domain !== false, pinSettings: i.pinSettings !== false, hostView: i.hostView !== false,
    });
    if (w.shellPrefix !== null) env.CLAUDE_CODE_SHELL_PREFIX = w.shellPrefix;
    else delete env.CLAUDE_CODE_SHELL_PREFIX;
    return { command: w.command, args: w.args, inputs: w.inputs, sandboxed: true, user: walledAs, apiPeers: ep.peers?.stats ?? null, ...served };
  } catch (err) {
    await teardown.close();
    throw err;
  }
}

// kernel.threads-max: what every process of the host shares (null: not readable).
function threadsMax(): number | null {
  try {
    const n = Number(fs.readFileSync('/proc/sys/kernel/threads-max', 'utf8').trim());
    return Number.isFinite(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}
