// The network bridge's API peer check (sessions/wall/bridge.ts), run for real without a wall: the
// bridge's own child (standing in for the CLI) reaches the API socket through it, another process
// is closed unanswered and reported on the refused socket, where the supervisor counts it. The
// control: the same bridge told to let any peer through answers the other process. A perl whose
// peer check cannot be made refuses to start, by name.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { bridgeArgs, bridged, BRIDGE_FAILED_CODE, BRIDGE_FAILED_RE, parseRefusal, peerChecked, type BridgePlan } from '../../../sessions/wall/bridge.js';
import { listenApiPeers, LOGGED_REFUSALS } from '../../../sessions/wall/api-peers.js';
import { findPerl } from '../../../sessions/run/reaper.js';
import { resolveCommand } from '../../../sessions/wall/sandbox.js';
import { inputStdio } from '../../../core/child-process.js';
import { createLogger } from '../../../logs/logger.js';
import { NEEDS_BWRAP, ROOT, tempDir } from '../../helpers.js';

const perl = findPerl();
// getsockopt answers nothing, as a perl or kernel without SO_PEERCRED would.
const NO_PEERCRED = 'BEGIN { *CORE::GLOBAL::getsockopt = sub { $! = 92; undef } }';
const quiet = createLogger({ redact: (t) => t, level: 'warn', stderr: { write: () => {} } });

describe('the bridge\'s arguments', () => {
  test('name the sockets\' folder, the TCP routes, the API socket and its check, and where refusals go', () => {
    const plan: BridgePlan = { dirFd: 4, routes: [{ port: 41002, socket: 'h' }], api: { path: '/tmp/nightshift-api.sock', socket: 'a', onlyCli: true }, refused: 'r' };
    assert.deepEqual(bridgeArgs(plan), ['dir=4', '41002=h', 'unix:/tmp/nightshift-api.sock=a', 'refused=r']);
    assert.deepEqual(bridgeArgs({ ...plan, dirFd: null, api: { ...plan.api!, onlyCli: false }, refused: null }), ['41002=h', 'unix-any:/tmp/nightshift-api.sock=a']);
  });

  test('a refusal line reads back as pid and name; anything else is no refusal', () => {
    assert.deepEqual(parseRefusal('refused 42 curl'), { pid: 42, comm: 'curl' });
    assert.deepEqual(parseRefusal('refused -1 ?'), { pid: -1, comm: '?' });
    for (const l of ['refused 42', 'refused x curl', 'refused 42 two words', 'nightshift-bridge: refused 1 a']) assert.equal(parseRefusal(l), null, l);
  });
});

// The API stand-in: answers every connection with one line.
async function answering(t: TestContext, socket: string): Promise<{ connections: number }> {
  const seen = { connections: 0 };
  const server = net.createServer((c) => {
    seen.connections++;
    c.end('ANSWER\n');
  });
  await new Promise<void>((r) => server.listen(socket, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return seen;
}

// What a connection to `socket` got before it closed.
const ask = (socket: string) => new Promise<string>((resolve) => {
  const c = net.connect(socket);
  let got = '';
  c.on('data', (d) => (got += d));
  c.on('close', () => resolve(got));
  c.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`));
});

// The bridge around a child that asks the API socket once, prints what it got, and waits for `go`.
async function bridgeWithChild(t: TestContext, onlyCli: boolean) {
  const dir = tempDir(t, 'nightshift-bridge-');
  const sockets = path.join(dir, 's');
  fs.mkdirSync(sockets);
  const api = await answering(t, path.join(sockets, 'a'));
  const peers = await listenApiPeers(path.join(sockets, 'r'), quiet);
  t.after(() => peers.close());
  const apiSocket = path.join(dir, 'api.sock');
  const go = path.join(dir, 'go');
  const child = `use IO::Socket::UNIX; my $u = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "child: $!"; print "child got: ", <$u>; $| = 1; select(undef, undef, undef, 0.05) until -e $ARGV[1];`;
  const dirFd = fs.openSync(sockets, 'r');
  t.after(() => fs.closeSync(dirFd));
  const b = bridged(perl!, { dirFd: 3, routes: [], api: { path: apiSocket, socket: 'a', onlyCli }, refused: 'r' }, perl!, ['-e', child, apiSocket, go]);
  const proc = spawn(b.command, b.args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe', ...inputStdio([dirFd])] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => (stdout += d));
  proc.stderr!.on('data', (d) => (stderr += d));
  const ended = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
  t.after(() => { proc.kill('SIGKILL'); });
  for (let i = 0; i < 200 && !stdout.includes('ANSWER'); i++) await new Promise((r) => setTimeout(r, 25));
  assert.match(stdout, /child got: ANSWER/, `the bridge's own child reached the API: ${stderr}`);
  const outsider = await ask(apiSocket);
  // The report reaches the supervisor a moment after the close.
  for (let i = 0; i < 40 && onlyCli && peers.stats.refused === 0; i++) await new Promise((r) => setTimeout(r, 25));
  fs.writeFileSync(go, '');
  const code = await ended;
  return { outsider, refused: peers.stats.refused, connections: api.connections, code, stderr };
}

describe('the bridge\'s API socket', { skip: perl ? false : 'no perl' }, () => {
  test('pipes its child\'s connection to the API, and closes another process\'s unanswered, reported', async (t) => {
    const r = await bridgeWithChild(t, true);
    assert.equal(r.outsider, '', 'the other process got no answer');
    assert.equal(r.connections, 1, 'the API saw the child\'s connection only');
    assert.equal(r.refused, 1, 'the refusal was counted by the supervisor');
    assert.equal(r.code, 0, r.stderr);
  });

  test('control: told to let any peer through, it answers the other process too', async (t) => {
    const r = await bridgeWithChild(t, false);
    assert.equal(r.outsider, 'ANSWER\n');
    assert.equal(r.connections, 2);
    assert.equal(r.refused, 0);
  });

  test('a perl that cannot tell a socket\'s peer refuses to start the command, by name', async (t) => {
    const dir = tempDir(t, 'nightshift-bridge-');
    const b = bridged(perl!, { routes: [], api: { path: path.join(dir, 'api.sock'), socket: 'a', onlyCli: true } }, '/bin/sh', ['-c', 'echo ran']);
    const args = ['-e', NO_PEERCRED, ...b.args];
    const proc = spawn(b.command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => proc.on('close', (c) => r(c)));
    assert.equal(code, BRIDGE_FAILED_CODE);
    assert.match(BRIDGE_FAILED_RE.exec(out)?.[1] ?? '', /SO_PEERCRED did not name this process/);
    assert.doesNotMatch(out, /ran/);
  });
});


describe('the peer check where it cannot be made', { skip: perl ? false : 'no perl' }, () => {
  test('the probe\'s check runs the command where the peer is told, and refuses it by name where it is not', () => {
    const c = peerChecked(perl!, '/bin/sh', ['-c', 'echo ran']);
    const ok = spawnSync(c.command, c.args, { encoding: 'utf8' });
    assert.equal(ok.stdout, 'ran\n', ok.stderr);
    const broken = spawnSync(c.command, ['-e', NO_PEERCRED, ...c.args], { encoding: 'utf8' });
    assert.equal(broken.status, BRIDGE_FAILED_CODE);
    assert.match(BRIDGE_FAILED_RE.exec(broken.stderr)?.[1] ?? '', /SO_PEERCRED did not name this process/);
    assert.equal(broken.stdout, '');
  });

  test('a perl that cannot tell a socket\'s peer fails the sandbox probe (before any charge), naming why; the control with a working perl passes', { skip: NEEDS_BWRAP }, (t) => {
    // Under /var/tmp: the probe's wall has a private /tmp.
    const dir = fs.mkdtempSync('/var/tmp/nightshift-noperl-');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, 'perl'), `#!/bin/sh\nexec ${perl} -e '${NO_PEERCRED}' "$@"\n`, { mode: 0o755 });
    const sandbox = path.join(ROOT, 'dist', 'sessions', 'wall', 'sandbox.js');
    const script = `import(${JSON.stringify(sandbox)}).then(async (m) => console.log(await m.bwrapProblem('bwrap', process.env.PATH)))`;
    const probe = (envPath: string) => spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { PATH: envPath } });
    const broken = probe(`${dir}:${process.env.PATH}`);
    assert.match(broken.stdout, /the wall's network bridge cannot run here: SO_PEERCRED did not name this process/, broken.stderr);
    assert.equal(probe(process.env.PATH ?? '').stdout.trim(), 'null');
    // No perl at all: the probe passed, and the session was refused only once charged.
    const bare = fs.mkdtempSync('/var/tmp/nightshift-noperl-');
    t.after(() => fs.rmSync(bare, { recursive: true, force: true }));
    fs.symlinkSync(resolveCommand('bwrap', process.env.PATH ?? '')!, path.join(bare, 'bwrap'));
    assert.match(probe(bare).stdout, /`perl` is not on PATH/, 'a machine without perl fails the probe');
  });
});

describe('the refusals the bridge reports', () => {
  // A tool's flood of connections (the red team measured 47118 in 4 s) is counted whole, and the
  // supervisor's log holds the first few and one line more, not a line for each.
  const flood = async (t: TestContext, n: number) => {
    const lines: string[] = [];
    const logger = createLogger({ redact: (x) => x, level: 'warn', stderr: { write: (l: string) => { lines.push(l); } } });
    const socket = path.join(tempDir(t), 'r');
    const peers = await listenApiPeers(socket, logger);
    t.after(() => peers.close());
    const c = net.connect(socket);
    await new Promise<void>((r) => c.once('connect', () => r()));
    c.end(Array.from({ length: n }, (_, i) => `refused ${1000 + i} python3\n`).join(''));
    for (let i = 0; i < 200 && peers.stats.refused < n; i++) await new Promise((r) => setTimeout(r, 10));
    return { refused: peers.stats.refused, logged: lines.filter((l) => l.includes('api_peer_refused')).length };
  };

  test('a flood is counted whole and logged in a bounded number of lines', async (t) => {
    assert.deepEqual(await flood(t, 5000), { refused: 5000, logged: LOGGED_REFUSALS + 1 });
  });

  test('the tail of an overlong line is no refusal; control: the same line alone is one', async (t) => {
    const socket = path.join(tempDir(t), 'r');
    const peers = await listenApiPeers(socket, quiet);
    t.after(() => peers.close());
    const send = async (...parts: string[]) => {
      const c = net.connect(socket);
      await new Promise<void>((r) => c.once('connect', () => r()));
      for (const p of parts) {
        c.write(p);
        await new Promise((r) => setTimeout(r, 50));
      }
      c.end();
      await new Promise((r) => setTimeout(r, 50));
    };
    await send('x'.repeat(4000), 'refused 5 curl\n');
    assert.equal(peers.stats.refused, 0, 'a cut-off line\'s tail is not counted');
    await send('refused 5 curl\n');
    assert.equal(peers.stats.refused, 1);
  });

  test('control: a few refusals are each logged', async (t) => {
    assert.deepEqual(await flood(t, 3), { refused: 3, logged: 3 });
  });
});
