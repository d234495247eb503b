// The loopback endpoints the supervisor serves one session, each with a token of its own: the API
// proxy (inference calls only, metered), the hooks, memory over MCP, and the egress proxy for an
// agent with a `network:`. Walled, the session has a network of its own: they listen on unix
// sockets in its folder, and the bridge serves them on the namespace's loopback
// (sessions/wall/bridge.ts). Each is added to the guest's teardown as it starts.
import path from 'node:path';
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { SandboxUnavailableError } from '../../core/errors.js';
import type { Listen } from '../../core/loopback.js';
import type { Logger } from '../../logs/logger.js';
import type { SessionMeter } from '../../budget/meter.js';
import type { TraceSpan } from '../../core/trace.js';
import type { SessionMemory } from '../../memory/mcp/session-server.js';
import { credentialFrom, startApiProxy, type ApiProxy } from './api-proxy.js';
import { listenApiPeers, type ApiPeers } from './api-peers.js';
import { wallUrl, WALL_PORTS, type BridgeRoute } from './bridge.js';
import type { EgressNet, EgressProxy } from './egress-proxy.js';
import { startSessionHooks, type SessionHooks } from '../hooks/session-hooks.js';
import type { Teardown } from './teardown.js';

export type EndpointsInput = {
  config: Config;
  agent: Pick<Agent, 'name' | 'network'>;
  sessionId: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  redact: (text: string) => string;
  // The memory store opens once the state has read it.
  state: Promise<string | null> | string | null;
  version: string;
  refuse?: () => string | null;
  meter?: SessionMeter;
  // The session's trace span (core/trace.ts): each endpoint puts what it serves under it.
  trace?: TraceSpan;
  onHeaders?: (headers: IncomingHttpHeaders) => void;
  // Each request and reply chunk the API proxy passes (sessions/wall/api-proxy.ts onActivity).
  onActivity?: () => void;
  egressNet?: Partial<EgressNet>;
  // false: the API's TCP route back, no peer check (the test-only control of the bridge's check).
  apiPeer?: boolean;
  // The session's folder; walled, its sockets live in `s` there.
  dir: string;
  walled: boolean;
};

export type Endpoints = {
  proxy: ApiProxy;
  // Whether the session's credential is an OAuth token (the CLI is told so).
  oauth: boolean;
  egress: EgressProxy | null;
  hooks: SessionHooks | null;
  // null: memory is not served to this session (why is logged).
  memory: SessionMemory | null;
  // Walled: which of the API's peers the bridge refused.
  peers: ApiPeers | null;
  // Walled: the sockets' folder, and the routes the bridge serves from it.
  sockets: string;
  routes: BridgeRoute[];
  // Whether the API is the CLI's alone (the bridge checks its peers).
  peerChecked: boolean;
};

export async function startEndpoints(i: EndpointsInput, teardown: Teardown): Promise<Endpoints> {
  const { config, logger: log, walled } = i;
  const sockets = path.join(i.dir, 's');
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
  // The store opens while the proxy and the hooks start, once the state has read it: two
  // connections of one process opening (or creating) the file at once would wait on each other.
  const memoryStart = Promise.resolve(i.state)
    .catch(() => null)
    .then(() => import('../../memory/mcp/session-server.js'))
    .then((m) => m.serveSessionMemory(config, i.env, log, i.sessionId, i.version, at('m', WALL_PORTS.memory), i.agent.name, i.trace));
  memoryStart.then((m) => teardown.add(() => m.close()), () => {});
  try {
    const upstream = i.env.ANTHROPIC_BASE_URL || config.claude.api_base;
    const credential = credentialFrom(i.env);
    const proxy = await startApiProxy({ upstream, credential, logger: log, redact: i.redact, refuse: i.refuse, meter: i.meter, trace: i.trace, onHeaders: i.onHeaders, onActivity: i.onActivity, listen: at('a', WALL_PORTS.api) });
    teardown.add(() => proxy.close());
    // Loaded only for an agent with a network (most have none).
    const egress = network === 'none' ? null : await (await import('./egress-proxy.js')).startEgressProxy({
      policy: network, listen: at('e', WALL_PORTS.egress), maxConnections: config.limits.egress_connections, logger: log, net: i.egressNet,
    });
    if (egress) teardown.add(() => egress.close());
    let hooks: SessionHooks | null = null;
    if (config.hooks.enabled) {
      hooks = await startSessionHooks({
        vault: config.vault, extraDirs: config.hooks.extra_dirs, timeoutMs: config.hooks.timeout, logger: log, redact: i.redact, dir: i.dir, listen: at('h', WALL_PORTS.hooks),
        limits: { maxRepeats: config.loop.max_repeats, window: config.loop.window, cycleRepeats: config.loop.cycle_repeats }, trace: i.trace,
      });
      const h = hooks;
      teardown.add(() => h.close());
    }
    let memory: SessionMemory | null = null;
    try {
      memory = await memoryStart;
    } catch (err) {
      // The session still runs, without memory tools; why is logged.
      log.warn({ event: 'memory_unavailable', err }, `memory not served to this session: ${i.redact((err as Error)?.message ?? String(err))}`);
    }
    // Walled, the bridge hears which of the API's peers it refused.
    const peers = walled ? await listenApiPeers(path.join(sockets, 'r'), log) : null;
    if (peers) teardown.add(() => peers.close());
    return { proxy, oauth: credential?.kind === 'oauth', egress, hooks, memory, peers, sockets, routes, peerChecked };
  } catch (err) {
    // The memory server may still be starting: it is closed with the rest once it is up.
    await memoryStart.catch(() => {});
    throw err;
  }
}
