// A walled session has a network of its own (issue 26, point 1): the host's loopback services on
// 127.0.0.1 and [::1], an abstract unix socket, a link-local address and the host's listening
// ports in /proc/net are out of its reach, while the supervisor's endpoints (API, hooks, memory)
// still answer through the bridge. The same probe with `sandbox: none` reaches every one: the
// control that shows the harm.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { bash, text } from '../fake-api.js';
import { NEEDS_BWRAP, configYaml, fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const SECRET = 'admin-panel-db-password-3141';
const LINK_LOCAL = '169.254.169.254';

// What a hostile tool would try, printed as one JSON line.
const PROBE = String.raw`
const net = require('net'); const fs = require('fs');
const [port, port6, abstract, llPort] = process.argv.slice(2);
const ask = (o) => new Promise((res) => { const s = net.connect(o); let got = ''; s.setTimeout(1500);
  s.on('connect', () => s.write('GET / HTTP/1.0\r\n\r\n')); s.on('data', (d) => (got += d)); s.on('end', () => res(got)); s.on('error', (e) => res('error ' + e.code)); s.on('timeout', () => { s.destroy(); res('timeout'); }); });
(async () => {
  const out = { v4: await ask({ host: '127.0.0.1', port: +port }), v6: await ask({ host: '::1', port: +port6 }), abstract: await ask({ path: '\0' + abstract }) };
  if (llPort !== '0') out.linkLocal = await ask({ host: '169.254.169.254', port: +llPort });
  const hex = (+port).toString(16).toUpperCase().padStart(4, '0');
  out.procNet = fs.readFileSync('/proc/net/tcp', 'utf8').includes(':' + hex + ' ');
  console.log('PROBE ' + JSON.stringify(out));
})();
`;

async function listen(t: TestContext, server: net.Server, ...at: unknown[]): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    (server.listen as (...a: unknown[]) => void)(...at, () => resolve());
  });
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

async function probe(t: TestContext, sandboxNone: boolean): Promise<Record<string, unknown>> {
  const handler = (_req: http.IncomingMessage, res: http.ServerResponse) => res.end(SECRET);
  const v4 = http.createServer(handler);
  await listen(t, v4, 0, '127.0.0.1');
  const v6 = http.createServer(handler);
  await listen(t, v6, 0, '::1');
  const abstract = `nightshift-probe-${process.pid}-${Date.now()}`;
  const ab = http.createServer(handler);
  await listen(t, ab, `\0${abstract}`);
  // A stand-in for the cloud's metadata service, where the test may add the address. Under CI=true
  // (root, iproute2 installed by .ci/run) it must be made: a link-local check left out is a failure.
  let llPort = 0;
  let llMissing = process.getuid?.() === 0 ? null : 'not root';
  if (!llMissing) {
    try {
      execFileSync('ip', ['addr', 'add', `${LINK_LOCAL}/32`, 'dev', 'lo'], { stdio: ['ignore', 'ignore', 'pipe'] });
      t.after(() => execFileSync('ip', ['addr', 'del', `${LINK_LOCAL}/32`, 'dev', 'lo'], { stdio: 'ignore' }));
      const ll = http.createServer(handler);
      await listen(t, ll, 0, LINK_LOCAL);
      llPort = (ll.address() as net.AddressInfo).port;
    } catch (err) {
      llMissing = String((err as { stderr?: Buffer }).stderr ?? '').trim() || (err as Error).message;
    }
  }
  if (llMissing) {
    if (process.env.CI === 'true') assert.fail(`CI=true: the link-local stand-in at ${LINK_LOCAL} could not be made (${llMissing}); CI runs as root with iproute2`);
    t.diagnostic(`the link-local address is not tried here: ${llMissing}`);
  }
  const ws = workspace(t, api.url, sandboxNone ? configYaml({ top: 'sandbox: none\n' }) : configYaml());
  fs.writeFileSync(path.join(ws.vault, 'probe.cjs'), PROBE);
  const cmd = `node probe.cjs ${(v4.address() as net.AddressInfo).port} ${(v6.address() as net.AddressInfo).port} ${abstract} ${llPort}`;
  const name = sandboxNone ? 'probe-open' : 'probe-walled';
  api.script(name, ({ turn }) => (turn === 0 ? bash(cmd) : text('Probed.')));
  writeAgent(ws, 'prober', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
  const r = await runJson(ws, 'prober');
  assert.equal(r.record.outcome, 'ok', r.ran.stderr);
  const result = api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult ?? '').find((x) => x.includes('PROBE '));
  assert.ok(result, `the probe ran: ${JSON.stringify(api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult))}`);
  const out = JSON.parse(result.slice(result.indexOf('PROBE ') + 6).split('\n')[0]);
  return { ...out, llTried: llPort !== 0 };
}

test('a walled session reaches none of the host\'s network, and its own endpoints still answer', { skip: NEEDS_BWRAP, timeout: 120_000 }, async (t) => {
  const out = await probe(t, false);
  for (const k of ['v4', 'v6', 'abstract', ...(out.llTried ? ['linkLocal'] : [])]) {
    assert.doesNotMatch(String(out[k]), new RegExp(SECRET), `${k} answered inside the wall: ${out[k]}`);
    assert.match(String(out[k]), /^error (ECONNREFUSED|ENETUNREACH|EADDRNOTAVAIL|ENOENT|EHOSTUNREACH)|^timeout$/, `${k}: ${out[k]}`);
  }
  assert.equal(out.procNet, false, '/proc/net/tcp does not list the host\'s listener');
});

test('negative control: the same probe unwalled reaches every one of them', { timeout: 120_000 }, async (t) => {
  const out = await probe(t, true);
  for (const k of ['v4', 'v6', 'abstract', ...(out.llTried ? ['linkLocal'] : [])]) assert.match(String(out[k]), new RegExp(SECRET), `${k}: ${out[k]}`);
  assert.equal(out.procNet, true);
});
