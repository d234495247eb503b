// Everything a session is given, and nothing more: its own folder (a private HOME, its state and
// settings as read-only files), an environment from an allowlist, the loopback endpoints the
// supervisor serves with per-session tokens (API proxy, hooks, memory, and the egress proxy for an
// agent with a `network:`), and the sandbox around the CLI. `close` takes all of it away again; the tokens die with it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { SandboxUnavailableError } from '../../core/errors.js';
import type { Logger } from '../../logs/logger.js';
import { memoryDbPath } from '../../memory/store/db-path.js';
import type { SessionMeter } from '../../budget/meter.js';
import { credentialFrom, startApiProxy, type ApiProxy, type ApiProxyStats } from './api-proxy.js';
import { bwrapArgs, hiddenByWall, NO_PERL, resolveCommand, sandboxProbe, SECCOMP_FD, type SandboxLayout } from './sandbox.js';
import { giveToSession, openSessionsDir, outOfReach, reachProblems, sessionUserFor, type SessionUser } from '../../config/session-user.js';
import { seccompProgram } from './seccomp.js';
import { writeShellPrefix } from './landlock.js';
import { sessionEnv } from '../../config/session-env.js';
import { withoutCredentials } from './git-credentials.js';
import { ENV_FILE_VAR } from '../../config/env-file.js';
import { sessionsDir, sweepSessionDirs } from './session-dirs.js';
import { startSessionHooks, type SessionHooks } from '../hooks/session-hooks.js';
import { findPerl } from '../run/reaper.js';
import { bridged, wallUrl, WALL_API, WALL_PORTS, type BridgeRoute } from './bridge.js';
import { listenApiPeers, type ApiPeerStats } from './api-peers.js';
import type { Listen } from '../../core/loopback.js';
import type { ChildInput } from '../../core/child-process.js';
import type { EgressNet, EgressStats } from './egress-proxy.js';
import { cellFor, type Cell } from './cgroup.js';
import { describePlan } from './bounds.js';

// Where each session's own folder lives; anything left there belongs to a session that is over
// (only one supervisor runs sessions at a time: the run lock).

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
  // The session's meter: its proxy admits and prices every inference call with it.
  meter?: SessionMeter;
  // Each upstream reply's headers, as the proxy sees them.
  onHeaders?: (headers: import('node:http').IncomingHttpHeaders) => void;
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

type WallConfig = Pick<Config, 'sandbox' | 'session_user' | 'file' | 'vault' | 'state_dir' | 'hooks' | 'claude'>;

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

// The folder to bind read-only so the CLI runs from under a hidden one: its package, or its folder.
function cliRoot(real: string): string {
  for (let d = path.dirname(real); d !== path.dirname(d); d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'package.json'))) return d;
  }
  return path.dirname(real);
}

// Pure apart from existence checks: what the session may see and write.
export function layoutFor(config: Config, env: NodeJS.ProcessEnv, dir: string, home: string, cli: string | null, operatorHome: string | null): SandboxLayout {
  const hidden = [config.state_dir, config.log_dir, '/run'];
  for (const h of [operatorHome, env.HOME]) if (h && path.resolve(h) !== '/' && path.resolve(h) !== path.resolve(config.vault)) hidden.push(h);
  const db = memoryDbPath(config);
  const memoryDir = path.dirname(db);
  const vaultInside = (d: string) => path.resolve(config.vault) === path.resolve(d) || path.resolve(config.vault).startsWith(`${path.resolve(d)}/`);
  // Every env file: the one beside the config and the one the supervisor read (--environment-file).
  const hiddenFiles = [config.file, path.join(config.dir, 'nightshift.env'), config.git.lock_file, ...(env[ENV_FILE_VAR] ? [path.resolve(env[ENV_FILE_VAR]!)] : [])];
  if (vaultInside(memoryDir)) hiddenFiles.push(...['', '-wal', '-shm', '-journal'].map((s) => db + s));
  else hidden.push(memoryDir);
  const readable: string[] = [];
  if (cli) readable.push(cliRoot(cli));
  // DNS for the session's own tools, where resolv.conf lives under the hidden /run.
  try {
    readable.push(fs.realpathSync('/etc/resolv.conf'));
  } catch {
    // no resolv.conf
  }
  return { vault: config.vault, writable: config.hooks.extra_dirs, hidden, hiddenFiles, readable, sessionDir: dir, home, tmpBytes: config.limits.tmp, apiDir: WALL_API.dir };
}

// The vault's .git/config as the session sees it, when the real one holds push credentials.
function gitConfigOverlay(vault: string, dir: string, log: Logger): Array<{ source: string; target: string }> {
  const target = path.join(vault, '.git', 'config');
  const st = fs.lstatSync(target, { throwIfNoEntry: false });
  if (!st?.isFile()) return [];
  const clean = withoutCredentials(fs.readFileSync(target, 'utf8'));
  if (!clean.found.length) return [];
  const source = path.join(dir, 'git-config');
  fs.writeFileSync(source, clean.text, { mode: 0o600 });
  log.warn({ event: 'git_credentials_hidden', found: clean.found }, `the vault's .git/config holds ${clean.found.join(' and ')}: hidden from the session (move them to a credential helper: see doctor)`);
  return [{ source, target }];
}

// The CLI's user settings live in the session's own HOME, which the session writes, and the CLI
// reloads them mid-session (measured, 2.1.197: an `env` there dropped CLAUDE_CODE_SHELL_PREFIX
// for the next command). So the file is empty and read-only, and its folder a mount point of its
// own, which cannot be renamed away and made again.
function pinUserSettings(layout: SandboxLayout, home: string): void {
  const dir = path.join(home, '.claude');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'settings.json');
  fs.writeFileSync(file, '{}\n', { mode: 0o400 });
  layout.writable = [...layout.writable, dir];
  layout.overlays = [...(layout.overlays ?? []), { source: file, target: file }];
}

export async function prepareGuest(i: GuestInput, baseArgs: (extra: string[]) => string[]): Promise<Guest> {
  const { config, logger: log } = i;
  const root = sessionsDir(config);
  sweepSessionDirs(config, log);
  const dir = path.join(root, i.sessionId);
  const home = path.join(dir, 'home');
  const walledAs = config.sandbox === 'bwrap' ? sessionUserOf(config, i.sessionUser !== false) : null;
  if (walledAs) openSessionsDir(config.state_dir, root, walledAs);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  if (walledAs) {
    // The vault is root's (its group the session's): the session's own git would refuse it for
    // "dubious ownership". Its HOME says the vault and the extra dirs are its to work in.
    const dirs = [config.vault, ...config.hooks.extra_dirs].map((d) => `\tdirectory = ${path.resolve(d)}\n`).join('');
    fs.writeFileSync(path.join(home, '.gitconfig'), `[safe]\n${dirs}`, { mode: 0o600 });
  }
  fs.chmodSync(dir, 0o700);
  const closers: Array<() => Promise<void> | void> = [() => fs.rmSync(dir, { recursive: true, force: true })];
  // Made before anything is spawned; what is left in it dies when the session closes.
  const cell = cellFor({ pids: config.limits.pids, memory: config.limits.memory }, i.sessionId, i.env.PATH ?? '', (m) => log.warn({ event: 'bounds_fallback' }, m));
  closers.push(() => cell.close());
  log.info({ event: 'bounds', mechanism: cell.plan.mechanism }, describePlan(cell.plan));
  // Walled, the session has a network of its own: the endpoints listen on unix sockets here, and
  // the bridge serves them on the namespace's loopback (sessions/wall/bridge.ts).
  const walled = config.sandbox === 'bwrap';
  const perl = walled ? findPerl(i.env.PATH ?? '') : null;
  if (walled && !perl) throw new SandboxUnavailableError(`Refused: sandbox: bwrap is configured and ${NO_PERL}`);
  const sockets = path.join(dir, 's');
  if (walled) fs.mkdirSync(sockets, { mode: 0o700 });
  const at = (name: string, port: number): Listen | null => {
    if (!walled) return null;
    const socket = path.join(sockets, name);
    // sun_path holds 108 bytes with its NUL.
    if (Buffer.byteLength(socket) > 107) throw new SandboxUnavailableError(`Refused: the session's socket path ${socket} is longer than a unix socket may be (107 bytes): choose a shorter state_dir in ${config.file}`);
    return { socket, url: wallUrl(port), maxConnections: config.limits.endpoint_requests };
  };
  const network = i.agent.network;
  const named: Array<[string, number]> = [['a', WALL_PORTS.api], ['h', WALL_PORTS.hooks], ['m', WALL_PORTS.memory]];
  // The egress proxy is a route only for an agent that names a network: without one nothing listens.
  if (network !== 'none') named.push(['e', WALL_PORTS.egress]);
  // The API is the CLI's alone (sessions/wall/bridge.ts): no TCP route, but in the test-only control.
  const peerChecked = i.apiPeer !== false;
  const routes: BridgeRoute[] = walled ? named.filter(([n]) => n !== 'a' || !peerChecked).map(([n, p]) => ({ socket: n, port: p })) : [];
  const close = async () => {
    for (const c of closers.reverse()) {
      try {
        await c();
      } catch (err) {
        log.warn({ event: 'guest_close_failed', err }, `closing a session endpoint failed: ${i.redact((err as Error)?.message ?? String(err))}`);
      }
    }
  };
  // The store opens while the proxy and the hooks start, once the state has read it: two
  // connections of one process opening (or creating) the file at once would wait on each other.
  // Awaited before the spawn.
  const memoryStart = Promise.resolve(i.state)
    .catch(() => null)
    .then(() => import('../../memory/mcp/session-server.js'))
    .then((m) => m.serveSessionMemory(config, i.env, log, i.sessionId, i.version, at('m', WALL_PORTS.memory), i.agent.name));
  memoryStart.then((m) => closers.push(() => m.close()), () => {});
  try {
    const upstream = i.env.ANTHROPIC_BASE_URL || config.claude.api_base;
    const credential = credentialFrom(i.env);
    const proxy: ApiProxy = await startApiProxy({ upstream, credential, logger: log, redact: i.redact, refuse: i.refuse, meter: i.meter, onHeaders: i.onHeaders, listen: at('a', WALL_PORTS.api) });
    closers.push(() => proxy.close());
    // Loaded only for an agent with a network (most have none).
    const egress = network === 'none' ? null : await (await import('./egress-proxy.js')).startEgressProxy({
      policy: network, listen: at('e', WALL_PORTS.egress), maxConnections: config.limits.egress_connections, logger: log, net: i.egressNet,
    });
    if (egress) closers.push(() => egress.close());
    // --mcp-config takes every value up to the next flag: it goes first, never last.
    const mcp: string[] = [];
    const extra: string[] = [];
    const stateText = await i.state;
    if (stateText !== null) {
      const file = path.join(dir, 'session-state.md');
      fs.writeFileSync(file, `${stateText}\n`, { mode: 0o600 });
      extra.push('--append-system-prompt-file', file);
    }
    let hooks: SessionHooks | null = null;
    if (config.hooks.enabled) {
      hooks = await startSessionHooks({
        vault: config.vault, extraDirs: config.hooks.extra_dirs, timeoutMs: config.hooks.timeout, logger: log, redact: i.redact, dir, listen: at('h', WALL_PORTS.hooks),
        limits: { maxRepeats: config.loop.max_repeats, window: config.loop.window, cycleRepeats: config.loop.cycle_repeats },
      });
      closers.push(() => hooks!.close());
      extra.push(...hooks.args);
    }
    let spawned = () => {};
    let served = false;
    try {
      const memory = await memoryStart;
      spawned = memory.warm;
      served = true;
      const file = path.join(dir, 'mcp.json');
      fs.writeFileSync(file, memory.mcpConfig, { mode: 0o600 });
      mcp.push('--mcp-config', file);
    } catch (err) {
      // The session still runs, without memory tools; why is logged.
      log.warn({ event: 'memory_unavailable', err }, `memory not served to this session: ${i.redact((err as Error)?.message ?? String(err))}`);
    }
    // Walled, the bridge hears which of the API's peers it refused.
    const peers = walled ? await listenApiPeers(path.join(sockets, 'r'), log) : null;
    if (peers) closers.push(() => peers.close());
    const env = sessionEnv({
      env: i.env, agentEnv: i.agent.env, home, apiUrl: walled ? WALL_API.baseUrl : proxy.url, apiSocket: walled ? WALL_API.socket : null, apiToken: proxy.token, oauth: credential?.kind === 'oauth', proxyUrl: egress?.url ?? null,
    });
    const cli = resolveCommand(config.claude.command, env.PATH);
    const args = baseArgs([...mcp, ...extra]);
    // A CLI that cannot be found is left to fail its spawn as such (spawn_failed), walled or not.
    if (config.sandbox === 'bwrap' && cli) {
      const bwrap = resolveCommand('bwrap', env.PATH);
      if (!bwrap) throw new SandboxUnavailableError('Refused: sandbox: bwrap is configured and `bwrap` is not on PATH');
      const layout = { ...layoutFor(config, i.env, dir, home, cli, os.homedir()), overlays: gitConfigOverlay(config.vault, dir, log) };
      if (i.pinSettings !== false) pinUserSettings(layout, home);
      // What the session user cannot reach is hidden already (an env file in a folder of root's).
      if (walledAs) {
        layout.hidden = layout.hidden.filter((p) => !outOfReach(p, walledAs));
        layout.hiddenFiles = layout.hiddenFiles.filter((p) => !outOfReach(p, walledAs));
      }
      const filtered = i.seccomp !== false;
      // A machine without a filter refuses the session (the probe said so before the charge).
      let inputs: ChildInput[] = [];
      try {
        if (filtered) inputs = [seccompProgram()];
      } catch (err) {
        throw new SandboxUnavailableError(`Refused: sandbox: bwrap is configured and ${(err as Error).message}`);
      }
      // Each Bash command in a Landlock domain of its own: no tool reaches the memory or the
      // descriptors of the CLI, the bridge or bwrap's pid 1. The operator's own value never applies.
      if (i.domain !== false) {
        try {
          env.CLAUDE_CODE_SHELL_PREFIX = writeShellPrefix(dir, perl!);
        } catch (err) {
          throw new SandboxUnavailableError(`Refused: sandbox: bwrap is configured and ${(err as Error).message}`);
        }
      }
      else delete env.CLAUDE_CODE_SHELL_PREFIX;
      // The supervisor's sockets are out of the session's sight (a path socket answers through the
      // read-only bind): the bridge gets their folder as a descriptor, fd 3 + its place in inputs.
      if (peerChecked) layout.hidden = [...layout.hidden, sockets];
      const dirFd = fs.openSync(sockets, 'r');
      closers.push(() => fs.closeSync(dirFd));
      inputs.push(dirFd);
      const inner = bridged(perl!, { dirFd: 3 + inputs.length - 1, routes, api: { path: WALL_API.socket, socket: 'a', onlyCli: peerChecked }, refused: 'r' }, cli, args);
      // Last, once every file and socket is in place: the folder is the session user's.
      if (walledAs) giveToSession(dir, walledAs);
      const wall = bwrapArgs({ ...layout, network: 'private' }, inner.command, inner.args, { seccompFd: filtered ? SECCOMP_FD : null });
      return { ...cell.wrap(bwrap, wall), inputs, env, cli, sandboxed: true, user: walledAs, hooks, memory: served, egress: egress?.stats ?? null, api: proxy.stats, apiPeers: peers?.stats ?? null, cell, dir, spawned, close };
    }
    return { ...cell.wrap(cli ?? config.claude.command, args), inputs: [], env, cli, sandboxed: false, user: null, hooks, memory: served, egress: egress?.stats ?? null, api: proxy.stats, apiPeers: null, cell, dir, spawned, close };
  } catch (err) {
    // The memory server may still be starting: it is closed with the rest once it is up.
    await memoryStart.catch(() => {});
    await close();
    throw err;
  }
}
