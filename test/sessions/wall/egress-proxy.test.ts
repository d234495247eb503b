// The egress proxy against loopback stand-ins. Names resolve through an injected resolver; the final
// connect of an allowed, public-looking address is redirected to a loopback server, so the decision
// sees the address the name resolved to and the bytes still flow. Every other address goes to the
// real net.connect: had the proxy connected to 127.0.0.1, the stand-in there would count it.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { parseAuthority, startEgressProxy, type EgressNet, type EgressProxy } from '../../../sessions/wall/egress-proxy.js';
import type { NetworkPolicy } from '../../../config/egress-policy.js';

const PUBLIC = '93.184.216.34';
const PUBLIC2 = '2606:2800:220:1:248:1893:25c8:1946';

type Standin = { port: number; connections: number };

// A loopback echo server (what a tunnel reaches) that counts its connections.
async function echoServer(t: TestContext): Promise<Standin> {
  const s: Standin = { port: 0, connections: 0 };
  const open = new Set<net.Socket>();
  const server = net.createServer((c) => {
    s.connections++;
    open.add(c);
    c.on('data', (d) => c.write(`echo:${d}`));
    c.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  s.port = (server.address() as net.AddressInfo).port;
  t.after(() => new Promise<void>((r) => (server.close(() => r()), open.forEach((c) => c.destroy()))));
  return s;
}

// A loopback HTTP server that answers with the Host it was asked for.
async function httpServer(t: TestContext): Promise<Standin & { seen: http.IncomingHttpHeaders[] }> {
  const s = { port: 0, connections: 0, seen: [] as http.IncomingHttpHeaders[] };
  const server = http.createServer((req, res) => {
    s.seen.push(req.headers);
    res.end(`hello from ${req.headers.host} ${req.url}`);
  });
  server.on('connection', () => s.connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  s.port = (server.address() as net.AddressInfo).port;
  t.after(() => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())));
  return s;
}

type Harness = { proxy: EgressProxy; lookups: string[]; connects: Array<{ host: string; port: number }>; logs: Array<Record<string, unknown>>; auth: string; port: number };

async function harness(t: TestContext, policy: Exclude<NetworkPolicy, 'none'>, names: Record<string, string[]>, redirectTo: number, o: { maxConnections?: number; own?: string[] } = {}): Promise<Harness> {
  const lookups: string[] = [];
  const connects: Array<{ host: string; port: number }> = [];
  const logs: Array<Record<string, unknown>> = [];
  const log = (o: object) => logs.push(o as Record<string, unknown>);
  const io: EgressNet = {
    lookup: async (host) => {
      lookups.push(host);
      const a = names[host];
      if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return a.map((address) => ({ address, family: net.isIP(address) }));
    },
    // Test-only: the public addresses go to the loopback stand-in; anything else is connected for real.
    connect: (c) => {
      connects.push(c);
      return c.host === PUBLIC || c.host === PUBLIC2 ? net.connect(redirectTo, '127.0.0.1') : net.connect(c.port, c.host);
    },
    localAddresses: () => o.own ?? [],
  };
  const proxy = await startEgressProxy({ policy, maxConnections: o.maxConnections ?? 8, logger: { warn: log, info: log, debug: log }, net: io });
  t.after(() => proxy.close());
  const u = new URL(proxy.url);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  return { proxy, lookups, connects, logs, auth, port: Number(u.port) };
}

// Sends a CONNECT and, once answered 200, `payload` through the tunnel; resolves with what came back.
function connectVia(h: Harness, target: string, payload = 'ping', auth: string | null = h.auth): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const s = net.connect(h.port, '127.0.0.1');
    let got = '';
    let status = 0;
    s.setTimeout(3000, () => s.destroy());
    s.on('connect', () => s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth ? `Proxy-Authorization: ${auth}\r\n` : ''}\r\n`));
    s.on('data', (d) => {
      got += d;
      if (!status && got.includes('\r\n\r\n')) {
        status = Number(got.split(' ')[1]);
        if (status === 200) {
          got = got.slice(got.indexOf('\r\n\r\n') + 4);
          s.write(payload);
        }
      }
      if (status === 200 && got.includes(`echo:${payload}`)) s.end();
    });
    s.on('error', () => {});
    s.on('close', () => resolve({ status: status || Number(got.split(' ')[1]) || 0, body: status === 200 ? got : got.slice(got.indexOf('\r\n\r\n') + 4) }));
  });
}

function getVia(h: Harness, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: h.port, method: 'GET', path: url, headers: { 'proxy-authorization': h.auth, host: new URL(url).host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the egress proxy', () => {
  test('tunnels to a listed name, connecting to the address it checked, resolved once', async (t) => {
    const echo = await echoServer(t);
    // A resolver that would answer loopback the second time (DNS rebinding): the proxy never asks twice.
    let answers = 0;
    const names: Record<string, string[]> = {};
    Object.defineProperty(names, 'example.test', { get: () => (answers++ === 0 ? [PUBLIC] : ['127.0.0.1']) });
    const h = await harness(t, ['example.test'], names, echo.port);
    const r = await connectVia(h, 'example.test:443');
    assert.equal(r.status, 200);
    assert.match(r.body, /echo:ping/);
    assert.deepEqual(h.lookups, ['example.test']);
    assert.deepEqual(h.connects, [{ host: PUBLIC, port: 443 }]);
    assert.equal(echo.connections, 1);
    assert.equal(h.proxy.stats.refused, 0);
  });

  for (const [name, address] of [['loopback', '127.0.0.1'], ['metadata', '169.254.169.254'], ['private', '10.0.0.1'], ['mapped', '::ffff:127.0.0.1'], ['v6-loopback', '::1'], ['cgnat', '100.64.1.1']]) {
    test(`refuses a listed name that resolves to ${address} with 403, and never connects`, async (t) => {
      const echo = await echoServer(t);
      const h = await harness(t, [`${name}.test`], { [`${name}.test`]: [address] }, echo.port);
      const r = await connectVia(h, `${name}.test:${echo.port}`);
      assert.equal(r.status, 403);
      assert.match(r.body, new RegExp(`refused: resolves to ${address.replace(/[.:]/g, '\\$&')}`));
      assert.deepEqual(h.connects, []);
      assert.equal(echo.connections, 0);
      assert.equal(h.proxy.stats.refused, 1);
      assert.ok(h.logs.some((l) => l.event === 'egress_refused' && l.host === `${name}.test`), JSON.stringify(h.logs));
    });
  }

  test('refuses a name whose answers mix a public address with a private one', async (t) => {
    const echo = await echoServer(t);
    const h = await harness(t, ['mixed.test'], { 'mixed.test': [PUBLIC, '192.168.1.1'] }, echo.port);
    assert.equal((await connectVia(h, 'mixed.test:443')).status, 403);
    assert.deepEqual(h.connects, []);
  });

  test('refuses the host\'s own address', async (t) => {
    const echo = await echoServer(t);
    const h = await harness(t, ['self.test'], { 'self.test': [PUBLIC] }, echo.port, { own: [PUBLIC] });
    const r = await connectVia(h, 'self.test:443');
    assert.equal(r.status, 403);
    assert.match(r.body, /the host's own address/);
    assert.equal(echo.connections, 0);
  });

  test('refuses a name not in the list without resolving it, and an IP literal the list does not name', async (t) => {
    const echo = await echoServer(t);
    const h = await harness(t, ['example.test', '127.0.0.1'], { 'other.test': [PUBLIC] }, echo.port);
    assert.equal((await connectVia(h, 'other.test:443')).status, 403);
    assert.equal((await connectVia(h, `${PUBLIC}:443`)).status, 403);
    // Listed, and still refused: the address check does not bend to the list.
    const r = await connectVia(h, `127.0.0.1:${echo.port}`);
    assert.equal(r.status, 403);
    assert.match(r.body, /loopback/);
    assert.deepEqual(h.lookups, []);
    assert.deepEqual(h.connects, []);
    assert.equal(echo.connections, 0);
    assert.equal(h.proxy.stats.refused, 3);
  });

  test('open allows any public name and still refuses the private ranges', async (t) => {
    const echo = await echoServer(t);
    const h = await harness(t, 'open', { 'anything.test': [PUBLIC], 'v6.test': [PUBLIC2], 'lan.test': ['172.20.0.5'], 'meta.test': ['169.254.169.254'] }, echo.port);
    assert.equal((await connectVia(h, 'anything.test:443')).status, 200);
    assert.equal((await connectVia(h, 'v6.test:8443')).status, 200);
    assert.equal((await connectVia(h, `${PUBLIC}:443`)).status, 200);
    assert.equal((await connectVia(h, 'lan.test:443')).status, 403);
    assert.equal((await connectVia(h, `meta.test:${echo.port}`)).status, 403);
    assert.equal((await connectVia(h, `[::1]:${echo.port}`)).status, 403);
    assert.equal((await connectVia(h, 'nowhere.test:443')).status, 502);
    assert.equal(echo.connections, 3);
    assert.equal(h.proxy.stats.refused, 3);
  });

  test('forwards a plain HTTP request to a listed name with its Host, and refuses one that resolves to loopback', async (t) => {
    const web = await httpServer(t);
    const h = await harness(t, ['example.test', 'inside.test'], { 'example.test': [PUBLIC], 'inside.test': ['127.0.0.1'] }, web.port);
    const r = await getVia(h, 'http://example.test/page?q=1');
    assert.equal(r.status, 200, r.body);
    assert.equal(r.body, 'hello from example.test /page?q=1');
    assert.equal(web.seen[0]['proxy-authorization'], undefined, 'the proxy token does not go upstream');
    assert.deepEqual(h.connects, [{ host: PUBLIC, port: 80 }]);
    const refused = await getVia(h, `http://inside.test:${web.port}/`);
    assert.equal(refused.status, 403);
    assert.equal(web.connections, 1);
    assert.equal((await getVia(h, 'http://unlisted.test/')).status, 403);
  });

  test('asks for the session\'s token before anything is resolved', async (t) => {
    const echo = await echoServer(t);
    const h = await harness(t, ['example.test'], { 'example.test': [PUBLIC] }, echo.port);
    assert.equal((await connectVia(h, 'example.test:443', 'ping', null)).status, 407);
    assert.equal((await connectVia(h, 'example.test:443', 'ping', 'Basic bmlnaHRzaGlmdDp3cm9uZw==')).status, 407);
    assert.deepEqual(h.lookups, []);
    assert.equal(h.proxy.stats.unauthorized, 2);
    assert.equal(h.proxy.stats.refused, 0);
  });

  test('holds at most maxConnections at once', async (t) => {
    const echo = await echoServer(t);
    const h = await harness(t, ['example.test'], { 'example.test': [PUBLIC] }, echo.port, { maxConnections: 2 });
    const open: net.Socket[] = [];
    t.after(() => open.forEach((s) => s.destroy()));
    for (let i = 0; i < 2; i++) {
      const s = net.connect(h.port, '127.0.0.1');
      open.push(s);
      await new Promise<void>((r) => {
        s.on('data', (d) => String(d).startsWith('HTTP/1.1 200') && r());
        s.write(`CONNECT example.test:443 HTTP/1.1\r\nProxy-Authorization: ${h.auth}\r\n\r\n`);
      });
    }
    const third = await connectVia(h, 'example.test:443');
    assert.equal(third.status, 0, 'the third connection is closed unanswered');
    assert.equal(echo.connections, 2);
  });

  test('reads CONNECT targets strictly', () => {
    assert.deepEqual(parseAuthority('Example.Test:443'), { host: 'example.test', port: 443 });
    assert.deepEqual(parseAuthority('[::1]:80'), { host: '::1', port: 80 });
    for (const bad of ['example.test', 'example.test:0', 'example.test:70000', 'user@example.test:443', 'http://x:1', '::1:80']) assert.equal(parseAuthority(bad), null, bad);
  });
});
