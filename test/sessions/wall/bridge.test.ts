// The network bridge's API peer check (sessions/wall/bridge.ts), run for real without a wall: the
// bridge's own child (standing in for the CLI) reaches the API socket through it, another process
// is closed unanswered and reported on the refused socket, where the supervisor counts it. The
// control: the same bridge told to let any peer through answers the other process. A perl whose
// peer check cannot be made refuses to start, by name.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
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
      // Closed once the listener has read it all: its side ends only after the last data event.
      const closed = new Promise((r) => c.once('close', r));
      c.end();
      await closed;
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

// The pipes themselves: every connection is carried by the bridge's one loop (sessions/wall/
// bridge.ts), run for real with the supervisor's sockets in a folder given as a descriptor.
type Pipes = { ports: Record<string, number>; pid: number };

const freePort = () => new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as net.AddressInfo;
    s.close(() => resolve(port));
  });
});

// The bridge with a TCP route to each server (a unix socket of the folder), around a command that
// waits; `edit` changes the script's text (the controls).
async function pipes(t: TestContext, servers: Record<string, net.Server>, edit?: (script: string) => string): Promise<Pipes> {
  const dir = tempDir(t, 'nightshift-pipes-');
  const routes = [];
  const ports: Record<string, number> = {};
  for (const [name, server] of Object.entries(servers)) {
    await new Promise<void>((r) => server.listen(path.join(dir, name), () => r()));
    t.after(() => { server.close(); });
    ports[name] = await freePort();
    routes.push({ port: ports[name], socket: name });
  }
  const dirFd = fs.openSync(dir, 'r');
  t.after(() => fs.closeSync(dirFd));
  const b = bridged(perl!, { dirFd: 3, routes }, '/bin/sh', ['-c', 'echo up; exec sleep 600']);
  const args = [...b.args];
  if (edit) {
    args[1] = edit(args[1]!);
    assert.notEqual(args[1], b.args[1], 'the control\'s edit applies to the script');
  }
  const proc = spawn(b.command, args, { stdio: ['ignore', 'pipe', 'inherit', ...inputStdio([dirFd])] });
  // TERM reaches the command through the bridge, and both end (a KILL would leave the command
  // holding the output open).
  const closed = new Promise<void>((r) => proc.on('close', () => r()));
  t.after(async () => { proc.kill('SIGTERM'); await closed; });
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (d) => { if (String(d).includes('up')) resolve(); });
    proc.on('close', (code) => reject(new Error(`the bridge ended (${code}) before its command started`)));
  });
  return { ports, pid: proc.pid! };
}

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

// Sends `body` on a new connection to `port`, half-closes, and resolves with all it got back.
const exchange = (port: number, body: Buffer) => new Promise<Buffer>((resolve, reject) => {
  const c = net.connect(port, '127.0.0.1');
  const got: Buffer[] = [];
  c.on('data', (d) => got.push(d));
  c.on('end', () => resolve(Buffer.concat(got)));
  c.on('error', reject);
  c.end(body);
});

// The processes whose parent is `pid`, from /proc.
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let stat: string;
    try { stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8'); } catch { continue; }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) out.push(Number(e));
  }
  return out;
}

describe('the bridge\'s pipes', { skip: perl ? false : 'no perl' }, () => {
  test('20 connections at once each get their own 1 MiB back, intact and in order', async (t) => {
    const echo = net.createServer({ allowHalfOpen: true }, (c) => c.pipe(c));
    const { ports } = await pipes(t, { echo });
    const bodies = Array.from({ length: 20 }, () => crypto.randomBytes(1 << 20));
    const back = await Promise.all(bodies.map((b) => exchange(ports.echo!, b)));
    back.forEach((b, i) => {
      assert.equal(b.length, bodies[i]!.length, `connection ${i}'s length`);
      assert.equal(sha(b), sha(bodies[i]!), `connection ${i}'s bytes`);
    });
  });

  test('a request half-closed by the client still gets the whole answer the server gives at its end', async (t) => {
    const answer = crypto.randomBytes(3 << 20);
    const atEnd = net.createServer({ allowHalfOpen: true }, (c) => {
      const got: Buffer[] = [];
      c.on('data', (d) => got.push(d));
      c.on('end', () => c.end(Buffer.concat([Buffer.from(sha(Buffer.concat(got))), answer])));
    });
    const { ports } = await pipes(t, { atEnd });
    const request = crypto.randomBytes(100_000);
    const back = await exchange(ports.atEnd!, request);
    assert.equal(back.subarray(0, 64).toString(), sha(request), 'the server got the whole request and its end');
    assert.equal(sha(back.subarray(64)), sha(answer), 'the client got the whole answer');
  });

  // A client sends 16 MiB to a server that does not read; meanwhile another connection asks and is
  // answered. Returns what the first client's kernel took while the server held still, and whether
  // the second was answered before the first was let go (`fallback`: let go anyway after that long).
  async function slowReader(t: TestContext, edit?: (s: string) => string, fallback = 60_000) {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const slow = net.createServer({ allowHalfOpen: true }, (c) => {
      c.pause();
      void released.then(() => {
        const h = crypto.createHash('sha256');
        c.on('data', (d) => h.update(d));
        c.on('end', () => c.end(h.digest('hex')));
        c.resume();
      });
    });
    const quick = net.createServer({ allowHalfOpen: true }, (c) => {
      c.on('data', () => {});
      c.on('end', () => c.end('pong'));
    });
    const { ports } = await pipes(t, { slow, quick }, edit);
    const big = crypto.randomBytes(16 << 20);
    const c = net.connect(ports.slow!, '127.0.0.1');
    const bigAnswer = new Promise<string>((resolve, reject) => {
      let got = '';
      c.on('data', (d) => (got += d));
      c.on('end', () => resolve(got));
      c.on('error', reject);
    });
    c.end(big);
    // What the kernel took from the client stops growing once every buffer on the way is full.
    const taken = () => c.bytesWritten - c.writableLength;
    let last = -1;
    for (let same = 0; same < 6; await new Promise((r) => setTimeout(r, 50))) same = taken() === last ? same + 1 : ((last = taken()), 0);
    const takenWhileHeld = taken();
    let order = '';
    const fallbackTimer = setTimeout(() => { order += 'released '; release(); }, fallback);
    const pong = await exchange(ports.quick!, Buffer.from('ping'));
    order += 'answered ';
    clearTimeout(fallbackTimer);
    release();
    assert.equal(await bigAnswer, sha(big), 'the held connection got through whole once read');
    return { takenWhileHeld, order: order.trim(), pong: pong.toString(), size: big.length };
  }

  test('a server that does not read holds a bounded part of a large body in the bridge, and another connection is answered meanwhile', async (t) => {
    const r = await slowReader(t);
    assert.equal(r.pong, 'pong');
    assert.equal(r.order, 'answered', 'the second connection was answered while the first was held');
    assert.ok(r.takenWhileHeld < r.size / 4, `the bridge stopped reading the client: ${r.takenWhileHeld} of ${r.size} bytes taken`);
  });

  test('control: with the bound lifted, the bridge takes the whole body while the server holds still', async (t) => {
    const r = await slowReader(t, (s) => s.replace('my $MAX = 262144;', 'my $MAX = 1 << 40;'));
    assert.equal(r.takenWhileHeld, r.size);
  });

  test('control: with blocking sockets, the loop stalls on the held server and the other connection waits for it', async (t) => {
    const r = await slowReader(t, (s) => s.replace(/sub nonblocking \{[^\n]*\}/, 'sub nonblocking { 1 }'), 3000);
    assert.equal(r.order, 'released answered');
  });

  // The control is the bridge before this loop, which forked a child per connection: it counted 11
  // children here (checked by hand once against that script).
  test('10 open connections are carried by the bridge alone: its one child is the command', async (t) => {
    const held: net.Socket[] = [];
    const hold = net.createServer((c) => { held.push(c); });
    const { ports, pid } = await pipes(t, { hold });
    const clients = Array.from({ length: 10 }, () => net.connect(ports.hold!, '127.0.0.1'));
    for (let i = 0; i < 400 && held.length < 10; i++) await new Promise((r) => setTimeout(r, 25));
    const children = childrenOf(pid).length;
    // Closed before the bridge is stopped: a child per connection would hold its output open.
    for (const c of [...clients, ...held]) c.destroy();
    assert.equal(held.length, 10, 'every connection reached the server');
    assert.equal(children, 1);
  });
});
