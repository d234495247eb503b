// The dead-man's ping (monitor.ping_url): healthchecks.io's /start, success and /fail (the reason
// as the body), against a loopback server; a ping that hangs or is refused never blocks or fails
// the tick, and the URL (a secret) never reaches a log.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../logs/logger.js';
import { ping, pingTarget } from '../../report/ping.js';
import { configYaml, nightshift, workspace, writeAgent } from '../helpers.js';

type Hit = { method: string; url: string; body: string };
async function server(answer: 'ok' | 'hang' | 500 = 'ok'): Promise<{ url: string; hits: Hit[]; close: () => Promise<void> }> {
  const hits: Hit[] = [];
  const open = new Set<http.ServerResponse>();
  const s = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      hits.push({ method: req.method!, url: req.url!, body });
      if (answer === 'hang') return void open.add(res);
      res.writeHead(answer === 'ok' ? 200 : answer).end('OK');
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return { url, hits, close: () => new Promise<void>((r) => { for (const res of open) res.destroy(); s.closeAllConnections(); s.close(() => r()); }) };
}

const UUID = '5f0c9a4e-77b1-4c1e-9a33-0d2b6e8f1a2c';
const lines: string[] = [];
const logger = createLogger({ redact: (t: string) => t, timezone: 'UTC', level: 'debug', stderr: { write: (l: string) => void lines.push(l) } } as never);

test('pingTarget: healthchecks.io\'s convention', () => {
  assert.equal(pingTarget('https://hc-ping.com/u/', 'start'), 'https://hc-ping.com/u/start');
  assert.equal(pingTarget('https://hc-ping.com/u', 'success'), 'https://hc-ping.com/u');
  assert.equal(pingTarget('https://hc-ping.com/u', 'fail'), 'https://hc-ping.com/u/fail');
});

test('a hanging or failing monitor: false within the timeout, said without the URL; control: an answering one, true', async () => {
  const hang = await server('hang');
  const down = await server(500);
  const up = await server('ok');
  try {
    const deps = { fetch, logger, timeoutMs: 300 };
    assert.equal(await ping(`${hang.url}/${UUID}`, 'start', null, deps), false);
    assert.equal(await ping(`${down.url}/${UUID}`, 'fail', 'why', deps), false);
    assert.equal(await ping(`${up.url}/${UUID}`, 'fail', 'the reason', deps), true);
    assert.deepEqual(up.hits, [{ method: 'POST', url: `/${UUID}/fail`, body: 'the reason' }]);
    assert.equal(await ping(undefined, 'start', null, deps), false, 'no URL, no ping');
    const said = lines.join('');
    assert.match(said, /monitor ping start: no answer in 300 ms/);
    assert.match(said, /monitor ping fail: HTTP 500/);
    assert.ok(!said.includes(UUID), said);
  } finally {
    await Promise.all([hang.close(), down.close(), up.close()]);
  }
});

test('a tick pings /start then success; a failed tick pings /fail with the reason; the URL is in no log line', async (t) => {
  const mon = await server('ok');
  t.after(() => mon.close());
  // `hours`: an hour twelve away from now (nothing due), or none (due at once).
  const yaml = (hours: string) => `${configYaml({ top: 'sandbox: none\nbudget:\n  timezone: UTC\n', claude: { command: '/nonexistent/claude' } })}monitor:\n  ping_url: ${mon.url}/${UUID}\n  ping_timeout: 2s\ndispatch:\n  - agent: worker\n${hours}`;
  const ws = workspace(t, 'http://127.0.0.1:9', yaml(`    hours: [${(new Date().getUTCHours() + 12) % 24}]\n`));
  writeAgent(ws, 'worker', 'hello');
  // Nothing due: a skip, exit 0, the tick alive.
  const idle = await nightshift(['tick'], ws.env, ws.dir);
  assert.equal(idle.code, 0, idle.stderr);
  assert.deepEqual(mon.hits.map((h) => h.url), [`/${UUID}/start`, `/${UUID}`]);
  // A session that cannot start (the CLI is missing): exit 1, and /fail says why.
  fs.writeFileSync(ws.config, yaml(''));
  const failed = await nightshift(['tick'], ws.env, ws.dir);
  assert.equal(failed.code, 1, failed.stderr);
  assert.deepEqual(mon.hits.slice(2).map((h) => h.url), [`/${UUID}/start`, `/${UUID}/fail`]);
  assert.match(mon.hits[3].body, /^session: worker: spawn_failed/);
  const logs = fs.readdirSync(ws.logs).filter((f) => f.endsWith('.log')).map((f) => fs.readFileSync(path.join(ws.logs, f), 'utf8')).join('');
  assert.ok(!`${idle.stderr}${failed.stderr}${logs}`.includes(UUID), 'the ping URL is never logged');
});

// A tick that exits 78 (a due agent file invalid) and one that throws (a damaged ledger, 70) are
// failures to the monitor too, not only a failed session.
// mutation: success for a tick that exits 78 (only a failed session pings /fail, daemon/tick/tick.ts), caught here.
// mutation: success for a tick that throws (daemon/tick/tick.ts's catch), caught here.
test('a tick that exits 78 or throws (a damaged ledger, 70) pings /fail with the reason; control: the same site sound pings success', async (t) => {
  const mon = await server('ok');
  t.after(() => mon.close());
  const yaml = `${configYaml({ top: 'sandbox: none\n', claude: { command: '/nonexistent/claude' } })}monitor:\n  ping_url: ${mon.url}/${UUID}\n  ping_timeout: 2s\ndispatch:\n  - agent: worker\n`;
  const ws = workspace(t, 'http://127.0.0.1:9', yaml);
  const urls = () => mon.hits.splice(0).map((h) => h.url);
  fs.writeFileSync(path.join(ws.prompts, 'worker.md'), '---\nmax_turns: lots\n---\nhi\n');
  const invalid = await nightshift(['tick'], ws.env, ws.dir);
  assert.equal(invalid.code, 78, invalid.stderr);
  const invalidBody = mon.hits[1]?.body;
  assert.deepEqual(urls(), [`/${UUID}/start`, `/${UUID}/fail`]);
  assert.match(invalidBody, /^skip: .*rule 0 \(worker\) is passed over: the agent file is invalid/);
  // Control: nothing due (no rules), the same site: success.
  fs.writeFileSync(ws.config, yaml.replace(/dispatch:\n {2}- agent: worker\n$/, 'dispatch: []\n'));
  assert.equal((await nightshift(['tick'], ws.env, ws.dir)).code, 0);
  assert.deepEqual(urls(), [`/${UUID}/start`, `/${UUID}`]);
  fs.writeFileSync(path.join(ws.state, 'ledger.db'), 'not a database, not at all: '.repeat(200));
  for (const f of ['ledger.db-wal', 'ledger.db-shm']) fs.rmSync(path.join(ws.state, f), { force: true });
  const damaged = await nightshift(['tick'], ws.env, ws.dir);
  assert.equal(damaged.code, 70, damaged.stderr);
  const damagedBody = mon.hits[1]?.body;
  assert.deepEqual(urls(), [`/${UUID}/start`, `/${UUID}/fail`]);
  assert.match(damagedBody, /^tick failed: Ledger .*ledger\.db cannot be opened \(SQLITE_NOTADB\)/);
});
