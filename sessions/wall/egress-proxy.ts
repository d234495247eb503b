// The session's way to the internet, for agents that name hosts (`network:`): an HTTP proxy in the
// supervisor, one per session, that speaks CONNECT (HTTPS and any other TLS) and absolute-form
// requests (plain HTTP). It decides by name first (egress-policy.ts hostAllowed), resolves the name
// itself, refuses when any address it resolves to is not public or is the host's own, and connects
// to the very address it checked: nothing is resolved twice, so a name that changes its answer
// between the check and the connect (DNS rebinding) gains nothing. Every refusal is logged (the
// logger is the session's child, so it carries the session id) and counted.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { addressRefusal, hostAllowed, normalizeHost, type NetworkPolicy } from '../../config/egress-policy.js';
import { escapeControl } from './api-proxy.js';
import { listenEndpoint, type Listen } from '../../core/loopback.js';

type Log = { warn(o: object, m?: string): void; info(o: object, m?: string): void; debug(o: object, m?: string): void };

export type Resolved = { address: string; family: number };

// The network, passed in: production resolves with dns.lookup (every address) and connects with
// net.connect. Tests map names and redirect the final connect to a loopback stand-in, so the
// decision still sees the address the name resolved to.
export type EgressNet = {
  lookup(host: string): Promise<Resolved[]>;
  connect(o: { host: string; port: number }): net.Socket;
  // Every address of the host's interfaces, read at each decision (they may change).
  localAddresses(): string[];
};

export const defaultEgressNet: EgressNet = {
  lookup: (host) => dns.promises.lookup(host, { all: true, verbatim: true }),
  connect: (o) => net.connect(o),
  localAddresses: () => Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)),
};

export type EgressProxyOptions = {
  policy: Exclude<NetworkPolicy, 'none'>;
  // A unix socket for a walled session (the bridge serves it inside the wall); else 127.0.0.1.
  listen?: Listen | null;
  // Connections held open at once (tunnels included); past it a new one is closed at once.
  maxConnections: number;
  logger: Log;
  net?: Partial<EgressNet>;
  // Upstream connect timeout and a tunnel's idle timeout (no bytes either way).
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
};

// refused: by the policy or the address check (what the session's report counts); unauthorized:
// without the session's token; failed: allowed, but the name did not resolve or the host did not answer.
export type EgressStats = { connections: number; refused: number; unauthorized: number; failed: number };

export type EgressProxy = {
  // What the session's HTTPS_PROXY and HTTP_PROXY say: the token rides in the URL's user part.
  url: string;
  stats: EgressStats;
  close(): Promise<void>;
};

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate']);
const USER = 'nightshift';

// Pure: host and port of a CONNECT target (`host:port`, `[v6]:port`), or null.
export function parseAuthority(target: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.%]+)\]|([^:[\]/@\s]+)):(\d{1,5})$/.exec(target);
  if (!m) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { host: normalizeHost(m[1] ?? m[2]), port };
}

export async function startEgressProxy(o: EgressProxyOptions): Promise<EgressProxy> {
  const io: EgressNet = { ...defaultEgressNet, ...o.net };
  const connectTimeoutMs = o.connectTimeoutMs ?? 10_000;
  const idleTimeoutMs = o.idleTimeoutMs ?? 300_000;
  const token = randomBytes(24).toString('hex');
  const expected = Buffer.from(`Basic ${Buffer.from(`${USER}:${token}`).toString('base64')}`);
  const stats: EgressStats = { connections: 0, refused: 0, unauthorized: 0, failed: 0 };
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };

  const authorized = (req: http.IncomingMessage) => {
    const got = Buffer.from(String(req.headers['proxy-authorization'] ?? ''));
    return got.length === expected.length && timingSafeEqual(got, expected);
  };

  const refuse = (host: string, port: number, reason: string, addresses: string[] = []) => {
    stats.refused++;
    const shown = escapeControl(host).slice(0, 255);
    o.logger.warn({ event: 'egress_refused', host: shown, port, reason, addresses }, `egress refused: ${shown}:${port} (${reason})`);
    return `nightshift: egress to ${shown}:${port} refused: ${reason}\n`;
  };

  // The address to connect to, after every check, or the reason there is none.
  const decide = async (host: string, port: number): Promise<{ address: string } | { status: number; body: string }> => {
    if (!hostAllowed(o.policy, host)) {
      const why = net.isIP(host) ? 'an IP address the policy does not name' : 'not a host this agent\'s `network:` names';
      return { status: 403, body: refuse(host, port, why) };
    }
    let found: Resolved[];
    if (net.isIP(host)) found = [{ address: host, family: net.isIP(host) }];
    else {
      try {
        found = await io.lookup(host);
      } catch (err) {
        stats.failed++;
        o.logger.info({ event: 'egress_unresolved', host, port, code: (err as NodeJS.ErrnoException).code }, `egress: ${host} does not resolve`);
        return { status: 502, body: `nightshift: ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})\n` };
      }
    }
    if (!found.length) return { status: 502, body: `nightshift: ${host} does not resolve\n` };
    const own = io.localAddresses();
    // Any address refused refuses the name: one public answer beside a private one is a trick.
    for (const f of found) {
      const why = addressRefusal(f.address, own);
      if (why) return { status: 403, body: refuse(host, port, `resolves to ${f.address}: ${why}`, found.map((x) => x.address)) };
    }
    return { address: found[0].address };
  };

  const dial = (address: string, port: number): Promise<net.Socket> =>
    new Promise((resolve, reject) => {
      const s = io.connect({ host: address, port });
      track(s);
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`no answer within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        s.off('error', reject);
        resolve(s);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });

  const server = http.createServer(async (req, res) => {
    stats.connections++;
    const plain = (status: number, body: string, extra: http.OutgoingHttpHeaders = {}) => {
      req.resume();
      if (res.headersSent) return void res.destroy();
      res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), connection: 'close', ...extra });
      res.end(body);
    };
    if (!authorized(req)) {
      stats.unauthorized++;
      return plain(407, 'nightshift: the session\'s proxy token is missing or wrong\n', { 'proxy-authenticate': `Basic realm="nightshift"` });
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      return plain(400, 'nightshift: this proxy takes absolute-form http:// requests and CONNECT\n');
    }
    if (target.protocol !== 'http:') return plain(400, `nightshift: ${target.protocol} is not proxied as a request (HTTPS goes through CONNECT)\n`);
    const host = normalizeHost(target.hostname);
    const port = target.port ? Number(target.port) : 80;
    const d = await decide(host, port);
    if ('status' in d) return plain(d.status, d.body);
    const headers: http.OutgoingHttpHeaders = {};
    const named = new Set(String(req.headers.connection ?? '').toLowerCase().split(',').map((x) => x.trim()));
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && !named.has(k)) headers[k] = v;
    headers.host = target.host;
    const up = http.request({
      host: d.address, port, method: req.method, path: `${target.pathname}${target.search}`, headers, timeout: idleTimeoutMs,
      // The checked address, never the name again (no agent: createConnection is used only without one).
      createConnection: () => {
        const s = io.connect({ host: d.address, port });
        track(s);
        return s;
      },
    });
    up.on('response', (ur) => {
      const back: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(ur.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) back[k] = v;
      res.writeHead(ur.statusCode ?? 502, ur.statusMessage, back);
      ur.pipe(res);
    });
    const fail = (err: Error) => {
      stats.failed++;
      o.logger.info({ event: 'egress_failed', host, port, err: err.message }, `egress: ${host}:${port} failed: ${err.message}`);
      if (res.headersSent) res.destroy();
      else plain(502, `nightshift: ${host}:${port} failed: ${err.message}\n`);
    };
    up.on('error', fail);
    up.on('timeout', () => up.destroy(new Error(`no bytes for ${idleTimeoutMs} ms`)));
    res.on('close', () => up.destroy());
    req.pipe(up);
  });

  server.on('connect', async (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    stats.connections++;
    track(client);
    client.on('error', () => client.destroy());
    const answer = (status: number, reason: string, body = '', extra = '') => {
      client.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${extra}\r\n${body}`);
    };
    if (!authorized(req)) {
      stats.unauthorized++;
      return answer(407, 'Proxy Authentication Required', '', 'proxy-authenticate: Basic realm="nightshift"\r\n');
    }
    const at = parseAuthority(req.url ?? '');
    if (!at) return answer(400, 'Bad Request', 'nightshift: CONNECT takes host:port\n');
    const d = await decide(at.host, at.port);
    if ('status' in d) return answer(d.status, d.status === 403 ? 'Forbidden' : 'Bad Gateway', d.body);
    let up: net.Socket;
    try {
      up = await dial(d.address, at.port);
    } catch (err) {
      stats.failed++;
      o.logger.info({ event: 'egress_failed', host: at.host, port: at.port, err: (err as Error).message }, `egress: ${at.host}:${at.port} failed: ${(err as Error).message}`);
      return answer(502, 'Bad Gateway', `nightshift: ${at.host}:${at.port} failed: ${(err as Error).message}\n`);
    }
    if (client.destroyed) return void up.destroy();
    o.logger.debug({ event: 'egress_tunnel', host: at.host, port: at.port, address: d.address }, `egress: tunnel to ${at.host}:${at.port}`);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) up.write(head);
    for (const s of [client, up]) {
      s.setTimeout(idleTimeoutMs, () => (client.destroy(), up.destroy()));
      s.on('error', () => (client.destroy(), up.destroy()));
    }
    // An end is passed on by the pipes; a client gone ends the tunnel, an upstream gone lets the
    // client read what is still queued first.
    client.on('close', () => up.destroy());
    up.on('close', () => client.end());
    client.pipe(up);
    up.pipe(client);
  });
  server.on('connection', track);

  const listening = await listenEndpoint(server, o.listen ? { ...o.listen, maxConnections: o.maxConnections } : null);
  server.maxConnections = o.maxConnections;
  const u = new URL(listening.url);
  u.username = USER;
  u.password = token;
  o.logger.info({ event: 'egress_proxy_started', url: listening.url, policy: o.policy }, `egress proxy listening (${o.policy === 'open' ? 'any public host' : o.policy.join(', ')})`);
  return {
    url: u.toString().replace(/\/$/, ''),
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
