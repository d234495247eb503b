// Issue 37, point 7: the session limits, each set low in a real session's config and pushed by the
// real CLI's scripted tool calls until it refuses; the control is the same session with the limit
// raised, which is not refused. A limit set to a million by mistake fails these tests.
//   limits.memory_writes: three `observe` calls through the session's memory server; the third is
//     refused at 2 and stored at 10.
//   limits.endpoint_requests: a Bash tool opens connections through the bridge to the session's
//     hooks endpoint, one after another, each answered before the next opens (the hooks server
//     keeps a connection open after its 401), so which ones the server took is certain.
//   limits.egress_connections: the same with CONNECT tunnels through the egress proxy to a listed
//     name (the test-only resolver maps it to a stand-in that holds every tunnel open).
// A connection the server closes at once (past its maxConnections) reads as EOF through the bridge.
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { bash, text, type Turn } from '../fake-api.js';
import { NEEDS_BWRAP, runWithEgressNet, configYaml, fakeApiPerFile, nightshift, runJson, workspace, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();
// The wall's fixed ports inside the session's namespace (sessions/wall/bridge.ts WALL_PORTS),
// written out: a test that took them from the code would follow a change it should notice.
const HOOKS_PORT = 41002;
const EGRESS_PORT = 41004;
const CONNECTIONS = 6;
const LOW = 3;

function site(t: TestContext, name: string, limits: Record<string, number>): Workspace {
  const top = `limits:\n${Object.entries(limits).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`;
  return workspace(t, api.url, configYaml({ top, claude: { timeout: '120s', idle_timeout: '60s' } }), { prefix: `nightshift-limits-${name}-` });
}

// A Bash command (a script the guardrail does not read: its redirects to /dev/tcp are the point
// here, and the wall must hold them without it) that opens `n` connections to 127.0.0.1:<port>, one at a time, sends each
// `request` (a printf format, `$auth` at hand) and prints what came back: `connI=[<first 12 bytes>
// rc=<head's exit>]`. Every connection stays open until all are made. Empty before rc: closed
// unanswered. rc=124: no answer at all (a failure of the test, never a refusal).
function flood(port: number, n: number, request: string): string {
  const script = [
    "trap '' PIPE",
    'a=${HTTPS_PROXY#*://}; auth=$(printf %s "${a%@*}" | base64 -w0)',
    'fds=()',
    `for i in $(seq ${n}); do`,
    `  exec {fd}<>/dev/tcp/127.0.0.1/${port} || { echo "conn$i=[connect failed]"; continue; }`,
    '  fds+=($fd)',
    `  printf '${request}' "$auth" >&$fd 2>/dev/null`,
    '  r=$(timeout 30 head -c 12 <&$fd | tr -d "\\r\\n"; echo " rc=${PIPESTATUS[0]}")',
    '  echo "conn$i=[$r]"',
    'done',
    'for fd in "${fds[@]}"; do exec {fd}>&-; done',
    'echo flood-done',
  ].join('\n');
  return `echo ${Buffer.from(script).toString('base64')} | base64 -d > flood.sh && bash flood.sh`;
}

type Flooded = { answered: number; closed: number; other: string[]; out: string };

function tally(out: string | null, n: number): Flooded {
  assert.ok(out && /flood-done/.test(out), `the flood ran to its end: ${out}`);
  const lines = [...out.matchAll(/^conn\d+=\[(.*)\]$/gm)].map((m) => m[1]);
  assert.equal(lines.length, n, out);
  const answered = lines.filter((l) => /^HTTP\/1\.1 \d{3} rc=0$/.test(l)).length;
  const closed = lines.filter((l) => l === ' rc=0').length;
  return { answered, closed, other: lines.filter((l) => !/^HTTP\/1\.1 \d{3} rc=0$/.test(l) && l !== ' rc=0'), out };
}

// The tool result of a scenario's flood, as the API saw it come back.
function floodResult(scenario: string): string | null {
  const results = api.requests.filter((q) => q.scenario === scenario).map((q) => q.toolResult ?? '');
  return results.find((x) => x.includes('flood-done')) ?? JSON.stringify(results);
}

async function endpointFlood(t: TestContext, limit: number): Promise<Flooded> {
  const scenario = `limits-endpoint-${limit}`;
  const ws = site(t, `endpoint-${limit}`, { endpoint_requests: limit });
  // No token: the hooks server answers 401 and keeps the connection (its keep-alive is 60 s).
  api.script(scenario, ({ turn }) => (turn === 0 ? bash(flood(HOOKS_PORT, CONNECTIONS, 'GET /health HTTP/1.1\\r\\nHost: h\\r\\nX-Auth: %s\\r\\n\\r\\n')) : text('Flooded.')));
  writeAgent(ws, 'flooder', `SCENARIO=${scenario}`, { allowed_tools: ['Bash'] });
  const { ran, record } = await runJson(ws, 'flooder');
  assert.equal(record.outcome, 'ok', `${record.error}\n${ran.stderr.slice(-1500)}`);
  const f = tally(floodResult(scenario), CONNECTIONS);
  t.diagnostic(`endpoint_requests ${limit}: ${f.answered} answered, ${f.closed} closed unanswered; ${f.out.replace(/\n/g, ' ')}`);
  return f;
}

// A TCP stand-in that takes every tunnel and holds it open, saying nothing.
async function holder(t: TestContext): Promise<{ port: number; connections: () => number }> {
  const held = new Set<net.Socket>();
  let count = 0;
  const server = net.createServer((s) => {
    count++;
    held.add(s);
    s.on('error', () => {});
    s.on('close', () => held.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => new Promise<void>((r) => {
    for (const s of held) s.destroy();
    server.close(() => r());
  }));
  return { port: (server.address() as net.AddressInfo).port, connections: () => count };
}

async function egressFlood(t: TestContext, limit: number): Promise<Flooded & { reached: number }> {
  const scenario = `limits-egress-${limit}`;
  const ws = site(t, `egress-${limit}`, { egress_connections: limit });
  const standin = await holder(t);
  api.script(scenario, ({ turn }) => (turn === 0 ? bash(flood(EGRESS_PORT, CONNECTIONS, 'CONNECT example.test:443 HTTP/1.1\\r\\nHost: example.test:443\\r\\nProxy-Authorization: Basic %s\\r\\n\\r\\n')) : text('Tunnelled.')));
  writeAgent(ws, 'tunneller', `SCENARIO=${scenario}`, { allowed_tools: ['Bash'], network: ['example.test'] });
  const r = await runWithEgressNet(ws, 'tunneller', { 'example.test': ['93.184.216.34'] }, standin.port);
  assert.equal(r.record?.outcome, 'ok', `${r.record?.error} (exit ${r.code})\n${r.stderr.slice(-1500)}`);
  const f = tally(floodResult(scenario), CONNECTIONS);
  t.diagnostic(`egress_connections ${limit}: ${f.answered} tunnels, ${f.closed} closed unanswered, ${standin.connections()} reached the stand-in; ${f.out.replace(/\n/g, ' ')}`);
  return { ...f, reached: standin.connections() };
}

describe('the session limits hold in a real session', { skip: NEEDS_BWRAP }, () => {
  test(`limits.endpoint_requests: ${LOW}: of ${CONNECTIONS} connections a tool holds open to the hooks endpoint, the server takes at most ${LOW}; the rest are closed unanswered`, { timeout: 180_000 }, async (t) => {
    const f = await endpointFlood(t, LOW);
    assert.deepEqual(f.other, [], 'every connection was answered or closed, none hung');
    assert.ok(f.answered <= LOW, `at most ${LOW} answered: ${f.answered}`);
    // The CLI's own connections to the endpoint (keep-alive) count too: they only take slots.
    assert.ok(f.closed >= CONNECTIONS - LOW, `at least ${CONNECTIONS - LOW} closed: ${f.closed}`);
  });

  test(`control: limits.endpoint_requests: 64, the same ${CONNECTIONS} connections are all answered`, { timeout: 180_000 }, async (t) => {
    const f = await endpointFlood(t, 64);
    assert.equal(f.answered, CONNECTIONS, f.out);
  });

  test(`limits.egress_connections: ${LOW}: of ${CONNECTIONS} tunnels a tool holds open through the egress proxy, at most ${LOW} are made; the rest are closed unanswered`, { timeout: 180_000 }, async (t) => {
    const f = await egressFlood(t, LOW);
    assert.deepEqual(f.other, [], 'every connection was answered or closed, none hung');
    assert.ok(f.answered <= LOW && f.reached <= LOW, `at most ${LOW} tunnels: ${f.answered} answered, ${f.reached} reached the stand-in`);
    assert.ok(f.closed >= CONNECTIONS - LOW, `at least ${CONNECTIONS - LOW} closed: ${f.closed}`);
    assert.match(f.out, /conn1=\[HTTP\/1\.1 200 rc=0\]/, 'the first tunnel was made');
  });

  test(`control: limits.egress_connections: 64, the same ${CONNECTIONS} tunnels are all made`, { timeout: 180_000 }, async (t) => {
    const f = await egressFlood(t, 64);
    assert.equal(f.answered, CONNECTIONS, f.out);
    assert.match(f.out, /^(conn\d=\[HTTP\/1\.1 200 rc=0\]\n){6}/m);
    assert.equal(f.reached, CONNECTIONS);
  });
});

async function memoryWrites(t: TestContext, limit: number): Promise<{ results: string[]; stored: number }> {
  const scenario = `limits-memory-${limit}`;
  const ws = site(t, `memory-${limit}`, { memory_writes: limit });
  const facts = ['The backup host rotates its disks on Mondays.', 'The billing service retries three times.', 'The mail relay listens on port 2525.'];
  const results: string[] = [];
  api.script(scenario, ({ turn, lastToolResult }: Turn) => {
    if (turn > 0) results.push(lastToolResult ?? '');
    if (turn < facts.length) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__observe', input: { text: facts[turn], category: 'entity' } }] };
    return text('Observed.');
  });
  writeAgent(ws, 'observer', `SCENARIO=${scenario}`);
  const { ran, record } = await runJson(ws, 'observer');
  assert.equal(record.outcome, 'ok', `${record.error}\n${ran.stderr.slice(-1500)}`);
  assert.equal(results.length, facts.length, JSON.stringify(results));
  // Which of the facts the store holds (it holds the session's own summary besides).
  let stored = 0;
  for (const fact of facts) {
    const q = await nightshift(['memory', 'query', fact, '--json'], ws.env, ws.dir);
    assert.equal(q.code, 0, q.stderr);
    if (JSON.parse(q.stdout).some((m: any) => m.text === fact)) stored++;
  }
  t.diagnostic(`memory_writes ${limit}: ${stored} of the facts stored; results ${JSON.stringify(results)}`);
  return { results, stored };
}

describe('limits.memory_writes in a real session', () => {
  test('at 2, the third observe through the session\'s memory server is refused by name and not stored', { timeout: 120_000 }, async (t) => {
    const { results, stored } = await memoryWrites(t, 2);
    for (const r of results.slice(0, 2)) assert.doesNotMatch(r, /limits\.memory_writes/);
    assert.match(results[2], /made its 2 memory writes \(limits\.memory_writes\); `observe` was not run/);
    assert.equal(stored, 2);
  });

  test('control: at 10, the same three observes are all stored', { timeout: 120_000 }, async (t) => {
    const { results, stored } = await memoryWrites(t, 10);
    for (const r of results) assert.doesNotMatch(r, /limits\.memory_writes/);
    assert.equal(stored, 3);
  });
});
