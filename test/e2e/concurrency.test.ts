// Many agents at once on one host (sessions.max_concurrent), through the built binary, the real CLI
// and the fake API: a tick starts due agents beside each other up to the limit, one per agent and
// one per vault, each with a fire row and a ledger row of its own; the rest start as slots free.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { formatSize } from '../../config/size.js';
import { configYaml, fakeApiPerFile, ledgerRows, runningSessions, nightshift, processesMatching, shareWithSession, startNightshift, waitFor, workspace, writeAgent, mostAtOnce, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();
const gitOff = 'git:\n  enabled: false\n';

const fires = async (ws: Workspace) => {
  const r = await nightshift(['fires', '--json'], ws.env, ws.dir);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as any[];
};

// Each agent a vault of its own (vaults.<agent>), so that they may run at once.
function ownVaults(ws: Workspace, names: string[]): string {
  for (const n of names) {
    const v = path.join(ws.dir, `vault-${n}`);
    fs.mkdirSync(v);
    shareWithSession(v);
  }
  return vaultsYaml(names);
}
const vaultsYaml = (names: string[]) => `vaults:\n${names.map((n) => `  ${n}: ./vault-${n}\n`).join('')}`;

const five = ['a1', 'a2', 'a3', 'a4', 'a5'];

describe('sessions.max_concurrent', () => {
  test('max_concurrent 3, five agents due with vaults of their own: one tick runs three at once, then the other two as slots free; five fire rows, five ledger rows', async (t) => {
    const ws = workspace(t, api.url, 'x');
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}sessions:\n  max_concurrent: 3\n${ownVaults(ws, five)}dispatch:\n${five.map((n) => `  - agent: ${n}\n`).join('')}` }));
    for (const n of five) writeAgent(ws, n, `SCENARIO=slow-tool SLEEP=6 ${n}`, { allowed_tools: ['Bash'] });
    const ran = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    const lines = ran.stdout.trim().split('\n');
    assert.equal(lines.length, 1, ran.stdout);
    const r = JSON.parse(lines[0]);
    assert.equal(r.session.outcome, 'ok');
    assert.equal(r.beside.length, 4, JSON.stringify(r.beside));
    assert.ok(r.beside.every((b: any) => b.outcome === 'ok' && b.exit_code === 0), JSON.stringify(r.beside));
    const rows = ledgerRows(ws.dir);
    assert.deepEqual(rows.map((x) => x.agent).sort(), five);
    assert.ok(rows.every((x) => x.status === 'settled' && x.outcome === 'ok'));
    assert.equal(mostAtOnce(rows), 3, JSON.stringify(rows.map((x) => [x.agent, x.started_at, x.ended_at])));
    const f = await fires(ws);
    assert.equal(f.length, 5);
    assert.deepEqual(f.map((x) => x.action), Array(5).fill('session'));
    assert.deepEqual(f.map((x) => x.agent).sort(), five);
  });

  test('the control: max_concurrent 1 (the default), the same five agents: one tick runs one session', async (t) => {
    const ws = workspace(t, api.url, 'x');
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}${ownVaults(ws, five)}dispatch:\n${five.map((n) => `  - agent: ${n}\n`).join('')}` }));
    for (const n of five) writeAgent(ws, n, 'SCENARIO=text', {});
    const ran = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(JSON.parse(ran.stdout).beside, undefined);
    assert.deepEqual(ledgerRows(ws.dir).map((x) => x.agent), ['a1']);
    assert.equal((await fires(ws)).length, 1);
  });

  test('agents sharing the vault take turns: both run in one tick, never at once', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}sessions:\n  max_concurrent: 2\ndispatch:\n  - agent: s1\n  - agent: s2\n` }));
    for (const n of ['s1', 's2']) writeAgent(ws, n, `SCENARIO=slow-tool SLEEP=3 ${n}`, { allowed_tools: ['Bash'] });
    const ran = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    const rows = ledgerRows(ws.dir);
    assert.deepEqual(rows.map((x) => x.agent), ['s1', 's2']);
    assert.equal(mostAtOnce(rows), 1, JSON.stringify(rows.map((x) => [x.agent, x.started_at, x.ended_at])));
    // Mutation: busy() never naming a shared vault and no vault turn taken: both at once (2 !== 1), caught here.
  });

  test('a run by hand of an agent a tick is running is refused; another agent with its own vault runs beside it; past the limit a run is refused at capacity', async (t) => {
    const names = ['long', 'other', 'third'];
    const ws = workspace(t, api.url, 'x');
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}sessions:\n  max_concurrent: 2\n${ownVaults(ws, names)}dispatch:\n  - agent: long\n` }));
    writeAgent(ws, 'long', 'SCENARIO=slow-tool SLEEP=15', { allowed_tools: ['Bash'] });
    writeAgent(ws, 'other', 'SCENARIO=slow-tool SLEEP=6', { allowed_tools: ['Bash'] });
    writeAgent(ws, 'third', 'SCENARIO=text');
    // While the tick starts, the file may exist before its table does.
    const running = (agent: string) => {
      try {
        return ledgerRows(ws.dir).some((x) => x.agent === agent && x.status === 'running');
      } catch {
        return false;
      }
    };
    const tick = startNightshift(['tick', '--json'], ws.env, ws.dir);
    await waitFor(() => running('long'), 30_000, 'the tick\'s session');
    const same = await nightshift(['run', 'long', '--json'], ws.env, ws.dir);
    assert.equal(same.code, 75, same.stderr);
    assert.match(JSON.parse(same.stdout).reason, /^long cannot start now: long is running \(session \S+, pid \d+\)/);
    const other = startNightshift(['run', 'other', '--json'], ws.env, ws.dir);
    await waitFor(() => running('other'), 30_000, 'the run by hand');
    // status shows both, side by side, with the slots in use.
    const look = JSON.parse((await nightshift(['status', '--json'], ws.env, ws.dir)).stdout);
    assert.deepEqual(look.running.map((r: any) => r.agent).sort(), ['long', 'other']);
    assert.equal(look.max_concurrent, 2);
    const text = (await nightshift(['status'], ws.env, ws.dir)).stdout;
    assert.match(text, /^running +long for \S+, \$[\d.]+ of \$[\d.]+ reserved \(\S+-long-\S+, pid \d+\)$/m);
    assert.match(text, /^slots +2 of 2 in use \(sessions\.max_concurrent\)$/m);
    // Both slots held: a third agent is refused, naming the limit.
    const third = await nightshift(['run', 'third', '--json'], ws.env, ws.dir);
    assert.equal(third.code, 75, third.stderr);
    assert.match(JSON.parse(third.stdout).reason, /^at capacity: 2 sessions running, sessions.max_concurrent 2 \(pids \d+, \d+\)$/);
    const o = await other.done;
    assert.equal(o.code, 0, o.stderr);
    assert.equal(JSON.parse(o.stdout).outcome, 'ok');
    const done = await tick.done;
    assert.equal(done.code, 0, done.stderr);
    const rows = ledgerRows(ws.dir);
    assert.deepEqual(rows.map((x) => x.agent), ['long', 'other']);
    assert.equal(mostAtOnce(rows), 2, JSON.stringify(rows.map((x) => [x.agent, x.started_at, x.ended_at])));
  });

  test('next says which due agents the tick starts and which wait; a tick that finds every slot held records a fire row for each agent that waits, with the next tick', async (t) => {
    const names = ['b1', 'b2', 'b3', 'b4'];
    const ws = workspace(t, api.url, 'x');
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}sessions:\n  max_concurrent: 2\n${ownVaults(ws, names)}dispatch:\n${names.map((n) => `  - agent: ${n}\n`).join('')}` }));
    for (const n of names) writeAgent(ws, n, 'SCENARIO=slow-tool SLEEP=12', { allowed_tools: ['Bash'] });
    const plan = JSON.parse((await nightshift(['next', '--json'], ws.env, ws.dir)).stdout).beside;
    assert.deepEqual(plan.starts, ['b1', 'b2']);
    assert.deepEqual(plan.waits.map((w: any) => [w.agent, w.why]), [['b3', 'at capacity: sessions.max_concurrent 2'], ['b4', 'at capacity: sessions.max_concurrent 2']]);
    assert.match((await nightshift(['next'], ws.env, ws.dir)).stdout, /side by side \(sessions\.max_concurrent 2\): the tick starts b1, b2\n +b3 waits: at capacity/);
    const running = () => runningSessions(ws.dir);
    const first = startNightshift(['tick', '--json'], ws.env, ws.dir, t);
    await waitFor(() => running() === 2, 60_000, 'two sessions of the first tick');
    const busy = JSON.parse((await nightshift(['next', '--json'], ws.env, ws.dir)).stdout).beside;
    assert.deepEqual(busy.running.sort(), ['b1', 'b2']);
    assert.deepEqual(busy.starts, []);
    const second = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(second.code, 0, second.stderr);
    assert.match(JSON.parse(second.stdout).reason, /^at capacity: 2 sessions running/);
    // Mutation: recordWaiting never called (tick.ts's at-capacity branch off): no row for b3 and b4, caught here.
    const waited = (await fires(ws)).filter((f) => f.supervisor_pid !== first.child.pid && f.agent);
    assert.deepEqual(waited.map((f) => [f.agent, f.action]).sort(), [['b3', 'locked'], ['b4', 'locked']]);
    for (const f of waited) assert.match(f.reason, new RegExp(`^${f.agent} is due and waits: at capacity: 2 sessions running, sessions.max_concurrent 2 .*; the next tick \\(\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\) tries again$`));
    assert.equal((await first.done).code, 0);
  });

  test('an agent with a vault of its own (vaults.<agent>) works there, and the site\'s vault is untouched', async (t) => {
    const ws = workspace(t, api.url, 'x');
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}${ownVaults(ws, ['mine'])}` }));
    writeAgent(ws, 'mine', 'SCENARIO=write FILE=mine.txt CONTENT=hello', { allowed_tools: ['Bash'] });
    const ran = await nightshift(['run', 'mine', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(fs.readFileSync(path.join(ws.dir, 'vault-mine', 'mine.txt'), 'utf8'), 'hello\n');
    assert.equal(fs.existsSync(path.join(ws.vault, 'mine.txt')), false);
  });

  test('beside other sessions a session\'s memory bound is at most its share of the host, said in its log; one at a time, limits.memory as written', async (t) => {
    const ws = workspace(t, api.url, 'x');
    writeAgent(ws, 'solo', 'SCENARIO=text');
    const bounds = async (n: number) => {
      fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}sessions:\n  max_concurrent: ${n}\nlimits:\n  memory: 64T\n` }));
      const ran = await nightshift(['run', 'solo'], ws.env, ws.dir);
      assert.equal(ran.code, 0, ran.stderr);
      const line = ran.stderr.split('\n').find((l) => l.includes('"event":"bounds"'));
      assert.ok(line, ran.stderr);
      return { line: JSON.parse(line!).msg as string, split: ran.stderr.includes('"event":"bounds_split"') };
    };
    // Mutation: guest.ts passing limits as written (no splitBounds): 64T beside another session, caught here.
    const two = await bounds(2);
    assert.ok(two.split, 'the lowering is said');
    const share = Math.floor((os.totalmem() * 0.8) / 2);
    assert.match(two.line, new RegExp(`${formatSize(share).replace('.', '\\.')} of memory`));
    const one = await bounds(1);
    assert.equal(one.split, false);
    assert.match(one.line, new RegExp(`${formatSize(64 * 1024 ** 4)} of memory`));
  });

  test('vaults naming an agent that does not exist is a config error naming the key', async (t) => {
    const ws = workspace(t, api.url, 'x');
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}vaults:\n  ghost: ./vault\ndispatch:\n  - agent: real\n` }));
    writeAgent(ws, 'real', 'SCENARIO=text');
    const ran = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 78, ran.stderr);
    assert.match(ran.stderr, /vaults\.ghost: Expected an agent in .*prompts \(real\), got `ghost`/);
  });

  test('a supervisor SIGKILLed with three sessions running: the next start settles all three abandoned (counted) and their fires crashed, and sweeps their folders', async (t) => {
    const names = ['k1', 'k2', 'k3'];
    const ws = workspace(t, api.url, 'x');
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}sessions:\n  max_concurrent: 3\n${ownVaults(ws, names)}dispatch:\n${names.map((n) => `  - agent: ${n}\n`).join('')}` }));
    for (const n of names) writeAgent(ws, n, `SCENARIO=bg-hang SLEEP=${664 + names.indexOf(n)}`, { allowed_tools: ['Bash'] });
    const before = api.requests.length;
    const victim = startNightshift(['tick'], ws.env, ws.dir, t);
    await waitFor(() => api.requests.slice(before).filter((r) => r.scenario === 'bg-hang' && r.turn === 1).length === 3, 60_000, 'three sessions to hang');
    assert.equal(fs.readdirSync(path.join(ws.state, 'sessions')).length, 3);
    victim.child.kill('SIGKILL');
    await victim.done;
    for (const n of names) writeAgent(ws, n, 'SCENARIO=text');
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}sessions:\n  max_concurrent: 3\n${vaultsYaml(names)}dispatch: []\n` }));
    const next = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(next.code, 0, next.stderr);
    const rows = ledgerRows(ws.dir);
    assert.deepEqual(rows.map((x) => [x.agent, x.status, x.outcome]).sort(), names.map((n) => [n, 'settled', 'abandoned']));
    const f = (await fires(ws)).filter((x) => x.supervisor_pid === victim.child.pid);
    assert.deepEqual(f.map((x) => [x.status, x.action, x.outcome]), Array(3).fill(['settled', 'crashed', 'abandoned']));
    assert.deepEqual(fs.readdirSync(path.join(ws.state, 'sessions')), []);
    await waitFor(() => [664, 665, 666].every((n) => processesMatching(`sleep ${n}`).length === 0), 10_000, 'the dead sessions\' grandchildren to be ended');
  });
});
