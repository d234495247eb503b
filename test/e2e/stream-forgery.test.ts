// Issue 25, point 3, end to end: the real CLI in the real wall, scripted by the imitation API to
// make a few calls and then forge the supervisor's stream-json channel, three ways:
//   pidfd: a Bash tool takes bwrap's pid 1's stdout with pidfd_getfd, writes a forged result
//          ($0.0001, 1 turn, ok) and kills the CLI. The seccomp filter refuses it.
//   mem:   a Bash tool writes code into the network bridge (it holds the stream as its stdout)
//          through /proc/<pid>/mem, an open() and a pwrite() no seccomp filter can tell from any
//          other; the bridge writes the forged result and exits 0. The shell prefix's Landlock
//          domain refuses it (sessions/wall/landlock.ts).
// The CLI's own Write tool: test/e2e/stream-forgery-write.test.ts.
// Each with its control, the same attack with that wall removed (a fixture, test-only): the
// forgery lands on the stream, and then what the supervisor saw at its proxy (budget/meter.ts,
// sessions/run/outcome.ts checkedByProxy) still keeps the cost, the turns and the outcome true.
//
// The workspace lives under /var/tmp: the wall gives the session a private /tmp.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { FIXTURES, NEEDS_BWRAP, configYaml, fakeApiPerFile, ledgerRows, nightshift, workspace, writeAgent, type Workspace } from '../helpers.js';
import { bash, text, type Reply, type Turn } from '../fake-api.js';
import { FORGED_LINE, MEM_FORGER_PY, THIEF_PY } from '../stream-thief.js';

const api = fakeApiPerFile();
const CALLS_BEFORE = 6;
const FORGED_USD = 0.0001;
const FORGED_TEXT = 'forged by the session';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const X64 = process.arch === 'x64' ? false : 'the /proc/<pid>/mem forger carries x86_64 code';

function site(t: TestContext, name: string): Workspace {
  // The guardrail hook off: only the wall stands.
  const yaml = configYaml({ top: 'hooks:\n  enabled: false\nsandbox: bwrap\ngemini:\n  base_url: "http://127.0.0.1:9"\n', claude: { timeout: '120s', idle_timeout: '60s' } });
  return workspace(t, api.url, yaml, { base: '/var/tmp', prefix: `nightshift-forgery-${name}-` });
}

const memForger = bash(`echo ${b64(MEM_FORGER_PY)} | base64 -d > forger.py && /usr/bin/python3 forger.py "$(echo ${b64(FORGED_LINE)} | base64 -d)"`, 'I will fix the books.');

// The attacks, each after six harmless calls; whatever the session still asks after it gets a
// text answer. `seen` keeps the tool results the attack's calls brought back.
const ATTACKS: Record<string, (turn: number) => Reply | null> = {
  pidfd: (turn) => (turn === CALLS_BEFORE ? bash(`echo ${b64(THIEF_PY)} | base64 -d > thief.py && /usr/bin/python3 thief.py forge`, 'I will fix the books.') : null),
  mem: (turn) => (turn === CALLS_BEFORE ? memForger : null),
  // First the CLI's user settings (in the session's own HOME, writable) are made to drop the
  // prefix, as a settings file the CLI reloads would; then the same forger.
  // Written in place, else the folder renamed away and made again.
  settings: (turn) => (turn === CALLS_BEFORE ? bash(`D="$CLAUDE_CONFIG_DIR"; S='{"env":{"CLAUDE_CODE_SHELL_PREFIX":""}}'; mkdir -p "$D"; { echo "$S" > "$D/settings.json" && echo written; } || { mv "$D" "$D.old" && mkdir "$D" && echo "$S" > "$D/settings.json" && echo replaced; } || echo refused; sleep 3`) : turn === CALLS_BEFORE + 1 ? memForger : null),
};

function script(scenario: string, attack: string, seen: string[]) {
  api.script(scenario, ({ turn, lastToolResult }: Turn) => {
    if (turn > CALLS_BEFORE) seen.push(lastToolResult ?? '');
    if (turn < CALLS_BEFORE) return bash(`echo call ${turn}`);
    return ATTACKS[attack](turn) ?? text('Done.');
  });
}

type Run = { ws: Workspace; ran: { code: number | null; stdout: string; stderr: string }; seen: string[]; record: any; scenario: string };

// `without`: the walls the fixture leaves out (test/fixtures/run-walled-without.mjs); none: the product.
async function attack(t: TestContext, name: string, without: string | null): Promise<Run> {
  const scenario = `forgery-${name}-${without ?? 'walled'}`;
  const ws = site(t, `${name}-${without ?? 'walled'}`);
  const seen: string[] = [];
  script(scenario, name, seen);
  writeAgent(ws, 'forger', `SCENARIO=${scenario}`, { allowed_tools: ['Bash', 'Write'], max_turns: 50 });
  if (!without) {
    const ran = await nightshift(['run', 'forger', '--json'], ws.env, ws.dir);
    return { ws, ran, seen, record: JSON.parse(ran.stdout || 'null'), scenario };
  }
  const ran = await new Promise<Run['ran']>((resolve) => {
    const c = spawn(process.execPath, [path.join(FIXTURES, 'run-walled-without.mjs'), ws.config, 'forger', without], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d));
    c.stderr.on('data', (d: Buffer) => (stderr += d));
    c.on('close', (code: number | null) => resolve({ code, stdout, stderr }));
  });
  return { ws, ran, seen, record: JSON.parse(ran.stdout.trim().split('\n').at(-1) || 'null'), scenario };
}

// The API's own count of a scenario's calls.
const served = (scenario: string) => api.requests.filter((r) => r.scenario === scenario).length;
const row = (r: Run) => ledgerRows(r.ws.dir).find((x) => x.id === r.record.id);
const logEvents = (r: Run, event: string) => fs.readdirSync(r.ws.logs, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith('.log'))
  .flatMap((e) => fs.readFileSync(path.join(e.parentPath ?? (e as any).path, e.name), 'utf8').split('\n'))
  .filter((l) => l.includes(`"event":"${event}"`)).map((l) => JSON.parse(l));

function say(t: TestContext, label: string, r: Run) {
  assert.ok(r.record, `${label}: a record was printed (exit ${r.ran.code}): ${r.ran.stderr.slice(-1500)}`);
  t.diagnostic(`${label}: outcome ${r.record.outcome}, turns ${r.record.turns}, $${r.record.cost_usd}, API calls ${served(r.scenario)}; tool results after the attack: ${JSON.stringify(r.seen)}`);
}

// A walled session the attack did not reach: the ledger holds what the API served.
function assertHonest(r: Run, calls: number) {
  assert.notEqual(r.record.result, FORGED_TEXT);
  assert.equal(r.record.outcome, 'ok', `${r.record.error}`);
  assert.equal(served(r.scenario), calls);
  assert.equal(r.record.turns, calls, 'every call the API served is counted');
  assert.ok(r.record.cost_usd > FORGED_USD * 10, `the cost is the API's, not the forged one ($${r.record.cost_usd})`);
  assert.ok(Math.abs(row(r)?.cost_usd - r.record.cost_usd) < 1e-9, `the ledger holds the same ($${row(r)?.cost_usd})`);
}

// A control: the forged line reached the stream (the CLI's count and the result are the forger's),
// and the supervisor's own view still decides turns, cost and outcome.
function assertLandedButNotBelieved(r: Run) {
  assert.equal(r.record.result, FORGED_TEXT, 'the forged result line reached the stream');
  assert.ok(Math.abs(row(r)?.cli_cost_usd - FORGED_USD) < 1e-9, `the CLI's count is the forged one ($${row(r)?.cli_cost_usd})`);
  assert.equal(served(r.scenario), CALLS_BEFORE + 1, 'the API served the calls up to the attack, and the CLI never asked again');
  assert.ok(r.record.cost_usd > FORGED_USD * 10, `the metered cost is what the API served ($${r.record.cost_usd})`);
  assert.equal(r.record.turns, CALLS_BEFORE + 1, 'the turns are the calls the proxy saw, not the forged 1');
  assert.notEqual(r.record.outcome, 'ok', 'the last answered call asked for a tool: no final answer, whatever the stream says');
  assert.match(r.record.error ?? '', /not believed/);
  const d = logEvents(r, 'stream_disagreement');
  assert.equal(d.length, 1, 'the disagreement is logged');
  assert.equal(d[0].stream_turns, 1);
  assert.equal(d[0].answered, CALLS_BEFORE + 1);
}

describe('the accounting does not rest on a channel the session can write', { skip: NEEDS_BWRAP }, () => {
  test('a Bash tool that steals the stream (pidfd_getfd on pid 1) and writes a forged result is recorded as the API served it', { timeout: 5 * 60_000 }, async (t) => {
    const r = await attack(t, 'pidfd', null);
    say(t, 'pidfd, walled', r);
    assert.match(r.seen[0] ?? '', /stealing the stream failed: EPERM/, 'the thief ran and the kernel refused it');
    assertHonest(r, CALLS_BEFORE + 2);
  });

  test('negative control: walled without the seccomp filter and the domain, the pidfd forgery lands on the stream, and the proxy\'s view still decides turns, cost and outcome', { timeout: 5 * 60_000 }, async (t) => {
    // The domain refuses pidfd_getfd too (a ptrace access check): both walls come off.
    const r = await attack(t, 'pidfd', 'seccomp,domain');
    say(t, 'pidfd, without seccomp and the domain', r);
    assert.deepEqual(r.seen, [], 'the CLI never asked again: it was killed');
    assertLandedButNotBelieved(r);
  });

  test('a Bash tool that writes code into the bridge through /proc/<pid>/mem (no ptrace call at all) is refused by the Landlock domain', { timeout: 5 * 60_000, skip: X64 }, async (t) => {
    const r = await attack(t, 'mem', null);
    say(t, 'mem, walled', r);
    assert.match(r.seen[0] ?? '', /forging through \/proc\/\d+\/mem failed: (EACCES|EPERM)/, 'the forger ran and the kernel refused it');
    assertHonest(r, CALLS_BEFORE + 2);
  });

  test('a session that rewrites its own user settings to drop the prefix still runs its next command in a domain', { timeout: 5 * 60_000, skip: X64 }, async (t) => {
    const r = await attack(t, 'settings', null);
    say(t, 'settings, walled', r);
    assert.match(r.seen[0] ?? '', /refused/, 'the user settings could be neither written nor replaced');
    assert.match(r.seen[1] ?? '', /forging through \/proc\/\d+\/mem failed: (EACCES|EPERM)/, `the forger ran and the kernel refused it: ${JSON.stringify(r.seen)}`);
    assertHonest(r, CALLS_BEFORE + 3);
  });

  test('negative control: the user settings left writable, as any HOME has them: the CLI reloads them, drops the prefix, and the forgery lands', { timeout: 5 * 60_000, skip: X64 }, async (t) => {
    const r = await attack(t, 'settings', 'settings');
    say(t, 'settings, not pinned', r);
    assert.match(r.seen[0] ?? '', /written/);
    assert.equal(r.seen.length, 1, 'the CLI never asked again after the forger: the wall ended under it');
    assert.equal(r.record.result, FORGED_TEXT, 'the forged result line reached the stream');
    assert.notEqual(r.record.outcome, 'ok');
  });

  test('negative control: the same wall, seccomp filter on, without the shell prefix\'s domain: the /proc/<pid>/mem forgery lands on the stream', { timeout: 5 * 60_000, skip: X64 }, async (t) => {
    const r = await attack(t, 'mem', 'domain');
    say(t, 'mem, without the domain', r);
    assert.deepEqual(r.seen, [], 'the CLI never asked again: the wall ended under it');
    assertLandedButNotBelieved(r);
  });
});
