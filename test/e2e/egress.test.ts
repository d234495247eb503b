// Egress by name (issue 26, point 2), end to end with the real CLI in the wall. An agent with
// `network: [example.test, "*.example.test"]` gets the proxy in its environment: its curl reaches
// the HTTPS stand-in for example.test (a name the injected resolver maps to a public address, whose
// final connect the test seam redirects to a loopback TLS server), and is refused for a name not
// listed and for a listed name that resolves to 127.0.0.1 (a loopback server there counts no
// connection). The refusals are logged with the session id and counted in its record, and the
// session's own API calls still go direct. An agent without `network:` has no proxy at all.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { describe, test, type TestContext } from 'node:test';
import { bash, text } from '../fake-api.js';
import { NEEDS_BWRAP, runWithEgressNet, configYaml, fakeApiPerFile, tempDir, workspace, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();
const PUBLIC = '93.184.216.34';
const SECRET = 'loopback-admin-secret-2718';
const NAMES = { 'example.test': [PUBLIC], 'other.test': [PUBLIC], 'internal.example.test': ['127.0.0.1'] };

type Counted = { port: number; connections: number };

async function listening(t: TestContext, server: net.Server, c: Counted, event = 'connection'): Promise<Counted> {
  server.on(event, () => c.connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  c.port = (server.address() as net.AddressInfo).port;
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return c;
}

// The HTTPS stand-in for example.test: a certificate made for the name, its CA handed to curl.
async function tlsStandin(t: TestContext, dir: string): Promise<Counted & { ca: string }> {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=example.test', '-addext', 'subjectAltName=DNS:example.test'], { stdio: 'ignore' });
  const server = tls.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, (s) => {
    s.once('data', () => s.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 18\r\nconnection: close\r\n\r\nSTANDIN-OK example'));
    s.on('error', () => {});
  });
  const c = await listening(t, server, { port: 0, connections: 0 }, 'secureConnection');
  return Object.assign(c, { ca: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8') });
}

// What the session's Bash printed, from the tool result the API saw.
function bashOutput(scenario: string): string {
  const out = api.requests.filter((q) => q.scenario === scenario).map((q) => q.toolResult ?? '').find((x) => x.includes('PROXIES'));
  assert.ok(out, `the script ran: ${JSON.stringify(api.requests.filter((q) => q.scenario === scenario).map((q) => q.toolResult))}`);
  return out;
}

const logLines = (ws: Workspace) => fs.readdirSync(ws.logs).filter((f) => f.endsWith('.log') || f.endsWith('.jsonl')).flatMap((f) => fs.readFileSync(path.join(ws.logs, f), 'utf8').split('\n')).filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);

describe('egress by name', { skip: NEEDS_BWRAP }, () => {
  test('an agent with network: reaches the host it names, is refused the rest and loopback, and each refusal is counted', { timeout: 180_000 }, async (t) => {
    const dir = tempDir(t);
    const standin = await tlsStandin(t, dir);
    const secret = await listening(t, http.createServer((_q, res) => res.end(SECRET)), { port: 0, connections: 0 });
    const ws = workspace(t, api.url, configYaml());
    fs.writeFileSync(path.join(ws.vault, 'ca.pem'), standin.ca);
    const curl = 'curl -s --max-time 15';
    const cmd = [
      'echo "PROXIES $(env | grep -ci _proxy) NO_PROXY=$NO_PROXY"',
      `echo "LISTED $(${curl} --cacert ca.pem https://example.test/) rc=$?"`,
      `echo "UNLISTED $(${curl} --cacert ca.pem -w 'connect=%{http_connect}' https://other.test/) rc=$?"`,
      `echo "LOOPBACK $(${curl} -w 'connect=%{http_connect}' https://internal.example.test:${secret.port}/) rc=$?"`,
      `echo "LOOPBACK_HTTP $(${curl} -w ' code=%{http_code}' http://internal.example.test:${secret.port}/) rc=$?"`,
    ].join('; ');
    api.script('egress-named', ({ turn }) => (turn === 0 ? bash(cmd) : text('Fetched.')));
    writeAgent(ws, 'fetcher', 'SCENARIO=egress-named', { allowed_tools: ['Bash'], network: ['example.test', '*.example.test'] });
    const r = await runWithEgressNet(ws, 'fetcher', NAMES, standin.port);
    assert.ok(r.record, `a record (exit ${r.code}): ${r.stderr.slice(-1500)}`);
    assert.equal(r.record.outcome, 'ok', r.stderr.slice(-1500));
    const out = bashOutput('egress-named');
    t.diagnostic(out);
    assert.match(out, /PROXIES 6 NO_PROXY=127\.0\.0\.1,localhost,::1/);
    assert.match(out, /LISTED STANDIN-OK example rc=0/);
    assert.match(out, /UNLISTED connect=403 rc=56/);
    assert.match(out, /LOOPBACK connect=403 rc=56/);
    assert.match(out, /LOOPBACK_HTTP nightshift: egress to internal\.example\.test:\d+ refused: resolves to 127\.0\.0\.1: loopback \(127\/8\)\s+code=403 rc=0/);
    assert.doesNotMatch(out, new RegExp(SECRET));
    assert.equal(secret.connections, 0, 'nothing connected to the loopback server');
    assert.equal(standin.connections, 1, 'the stand-in was reached once');
    // Exactly the three curls: the CLI's own API, hook and memory calls never went to the proxy.
    assert.equal(r.record.egress_refused, 3);
    assert.ok(api.requests.filter((q) => q.scenario === 'egress-named').length >= 2, 'the API calls went direct');
    const refusals = logLines(ws).filter((l) => l.event === 'egress_refused');
    assert.equal(refusals.length, 3, JSON.stringify(refusals));
    assert.ok(refusals.every((l) => l.sessionId === r.record.id), 'each refusal is logged with the session id');
  });

  test('an agent without network: gets no proxy, and nothing answers beyond its endpoints', { timeout: 180_000 }, async (t) => {
    const dir = tempDir(t);
    const standin = await tlsStandin(t, dir);
    const ws = workspace(t, api.url, configYaml());
    const cmd = [
      'echo "PROXIES $(env | grep -ci _proxy)"',
      `echo "NAMED $(curl -s --max-time 5 https://example.test/) rc=$?"`,
      `echo "PORT $(curl -s --max-time 5 http://127.0.0.1:41004/) rc=$?"`,
    ].join('; ');
    api.script('egress-none', ({ turn }) => (turn === 0 ? bash(cmd) : text('Nothing.')));
    writeAgent(ws, 'offline', 'SCENARIO=egress-none', { allowed_tools: ['Bash'] });
    const r = await runWithEgressNet(ws, 'offline', NAMES, standin.port);
    assert.equal(r.record?.outcome, 'ok', r.stderr.slice(-1500));
    const out = bashOutput('egress-none');
    t.diagnostic(out);
    assert.match(out, /PROXIES 0/);
    assert.match(out, /NAMED {2}rc=6/, 'the name does not resolve: the wall has no DNS');
    assert.match(out, /PORT {2}rc=7/, 'no egress port in the wall');
    assert.equal(standin.connections, 0);
    assert.equal(r.record.egress_refused, null);
  });
});
