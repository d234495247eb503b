// A walled session sees only what it needs of the host (issue 37, point 4): a service's unix socket
// left world-connectable (0777) under /var/lib or /srv needs no write to be connected, so a
// read-only view of all of `/` let a session's tool reach it. The wall's view leaves those folders
// out of sight. Controls, through the same scripted Bash call of the real CLI: `sandbox: none`, and
// the wall with the whole host in view (the test-only switch), each reach the secret.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { bash, text } from '../fake-api.js';
import { FIXTURES, NEEDS_BWRAP, configYaml, fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const SECRET = 'svc-admin-token-2718';

// What a hostile tool would try: connect to each socket and print what answered, as one JSON line.
const PROBE = String.raw`
const net = require('net');
const ask = (p) => new Promise((res) => { const s = net.connect({ path: p }); let got = ''; s.setTimeout(3000);
  s.on('data', (d) => (got += d)); s.on('end', () => res(got)); s.on('error', (e) => res('error ' + e.code)); s.on('timeout', () => { s.destroy(); res('timeout'); }); });
(async () => { const out = {}; for (const p of process.argv.slice(2)) out[p] = await ask(p); console.log('PROBE ' + JSON.stringify(out)); })();
`;

// A host service's socket in a folder of its own under `base`: mode 0777, answering the secret.
async function service(t: TestContext, base: string, name: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(base, `nightshift-view-${name}-`));
  fs.chmodSync(dir, 0o755);
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sock = path.join(dir, 'svc.sock');
  const server = net.createServer((c) => c.end(SECRET));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(sock, () => resolve());
  });
  fs.chmodSync(sock, 0o777);
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return sock;
}

type Mode = 'walled' | 'unwalled' | 'whole-host';

async function probe(t: TestContext, mode: Mode): Promise<Record<string, string>> {
  const socks = [await service(t, '/var/lib', mode), await service(t, '/srv', mode)];
  const ws = workspace(t, api.url, mode === 'unwalled' ? configYaml({ top: 'sandbox: none\n' }) : configYaml({ top: 'sandbox: bwrap\n' }));
  fs.writeFileSync(path.join(ws.vault, 'probe.cjs'), PROBE);
  const name = `view-${mode}`;
  api.script(name, ({ turn }) => (turn === 0 ? bash(`node probe.cjs ${socks.join(' ')}`) : text('Probed.')));
  writeAgent(ws, 'prober', `SCENARIO=${name}`, { allowed_tools: ['Bash'] });
  let outcome: string;
  let stderr: string;
  if (mode === 'whole-host') {
    const ran = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      const c = spawn(process.execPath, [path.join(FIXTURES, 'run-walled-without.mjs'), ws.config, 'prober', 'view'], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let err = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d));
      c.stderr.on('data', (d: Buffer) => (err += d));
      c.on('close', () => resolve({ stdout, stderr: err }));
    });
    outcome = JSON.parse(ran.stdout.trim().split('\n').at(-1) || 'null')?.outcome;
    stderr = ran.stderr;
  } else {
    const r = await runJson(ws, 'prober');
    outcome = r.record.outcome;
    stderr = r.ran.stderr;
  }
  assert.equal(outcome, 'ok', stderr.slice(-1500));
  const result = api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult ?? '').find((x) => x.includes('PROBE '));
  assert.ok(result, `the probe ran: ${JSON.stringify(api.requests.filter((q) => q.scenario === name).map((q) => q.toolResult))}`);
  const out = JSON.parse(result.slice(result.indexOf('PROBE ') + 6).split('\n')[0]) as Record<string, string>;
  t.diagnostic(`${mode}: ${JSON.stringify(out)}`);
  assert.deepEqual(Object.keys(out), socks, 'both sockets were tried');
  return out;
}

test('a walled session cannot reach a 0777 unix socket under /var/lib or /srv: neither is in its view', { skip: NEEDS_BWRAP, timeout: 120_000 }, async (t) => {
  for (const [sock, got] of Object.entries(await probe(t, 'walled'))) {
    assert.doesNotMatch(got, new RegExp(SECRET), `${sock} answered inside the wall`);
    assert.equal(got, 'error ENOENT', `${sock}: not there at all`);
  }
});

test('negative control: with `sandbox: none` both sockets answer the secret', { timeout: 120_000 }, async (t) => {
  for (const [sock, got] of Object.entries(await probe(t, 'unwalled'))) assert.equal(got, SECRET, sock);
});

test('negative control: the wall with the whole host in view (read-only) answers the secret too', { skip: NEEDS_BWRAP, timeout: 120_000 }, async (t) => {
  for (const [sock, got] of Object.entries(await probe(t, 'whole-host'))) assert.equal(got, SECRET, sock);
});
