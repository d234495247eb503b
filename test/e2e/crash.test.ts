// The supervisor itself dies or is stopped mid-session: the day's count must survive.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { listProcs, withMarker } from '../../sessions/process-tree.js';
import { configYaml, fakeApiPerFile, ledgerIntegrity, nightshift, processesMatching, startNightshift, waitFor, type Workspace, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();


// Starts a session that hangs on its second API call with a detached `sleep <n>` running, and
// SIGKILLs nightshift once the CLI is waiting. Returns the budget afterwards.
async function killMidSession(t: TestContext, ws: Workspace, sleepN: number, env: NodeJS.ProcessEnv = {}) {
  writeAgent(ws, 'victim', `SCENARIO=bg-hang SLEEP=${sleepN}`, { allowed_tools: ['Bash'] });
  const before = api.requests.length;
  const run = startNightshift(['run', 'victim', '--json'], { ...ws.env, ...env }, ws.dir, t);
  await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'bg-hang' && r.turn === 1), 20_000, 'the second API call');
  assert.equal(processesMatching(`sleep ${sleepN}`).length, 1, 'the tool started its grandchild');
  run.child.kill('SIGKILL');
  const ran = await run.done;
  assert.equal(ran.signal, 'SIGKILL');
  return ran;
}

describe('a supervisor killed mid-session', () => {
  test('the next start settles the session abandoned, still counted, and ends what it left running', async (t) => {
    const ws = workspace(t, api.url, configYaml({ budget: { max_sessions_per_day: 1 } }));
    await killMidSession(t, ws, 631);
    // The CLI and its detached grandchild outlived the supervisor.
    assert.equal(processesMatching('sleep 631').length, 1);
    const budget = await nightshift(['budget', '--json'], ws.env, ws.dir);
    assert.equal(budget.code, 0, budget.stderr);
    const b = JSON.parse(budget.stdout);
    assert.equal(b.sessions, 1, 'the day count survived');
    assert.ok(b.cost_usd > 0, 'the spend recorded before the kill survived');
    const sessions = JSON.parse((await nightshift(['sessions', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(sessions[0].outcome, 'abandoned');
    assert.equal(sessions[0].cost_estimated, true);
    await waitFor(() => processesMatching('sleep 631').length === 0, 5000, 'the leftover grandchild to be ended');
    // And the limit holds: with one session allowed, the next run is refused.
    writeAgent(ws, 'next', 'SCENARIO=text');
    const refused = await nightshift(['run', 'next'], ws.env, ws.dir);
    assert.equal(refused.code, 75);
    assert.equal(ledgerIntegrity(ws.dir), 'ok');
  });

  test('negative control: a ledger that only counts at the end loses the killed session', async (t) => {
    const ws = workspace(t, api.url, configYaml({ budget: { max_sessions_per_day: 1 } }));
    const control = { NIGHTSHIFT_TEST_CHARGE_ON: 'settle' };
    await killMidSession(t, ws, 632, control);
    const b = JSON.parse((await nightshift(['budget', '--json'], { ...ws.env, ...control }, ws.dir)).stdout);
    assert.equal(b.sessions, 0, 'the same harness sees the loss when the protection is off');
    writeAgent(ws, 'next', 'SCENARIO=text');
    const ran = await nightshift(['run', 'next'], { ...ws.env, ...control }, ws.dir);
    assert.equal(ran.code, 0, 'the limit of one session a day was overrun');
    // Nothing of the control run may outlive the test.
    for (const pid of withMarker(ws.env.HOME!, listProcs(), 'HOME')) process.kill(pid, 'SIGKILL');
  });

  test('SIGTERM to nightshift ends the session and settles it before exiting', async (t) => {
    const ws = workspace(t, api.url, configYaml({ claude: { kill_grace: '2s' } }));
    writeAgent(ws, 'stopped', 'SCENARIO=bg-hang SLEEP=633', { allowed_tools: ['Bash'] });
    const before = api.requests.length;
    const run = startNightshift(['run', 'stopped', '--json'], ws.env, ws.dir, t);
    await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'bg-hang' && r.turn === 1), 20_000, 'the second API call');
    run.child.kill('SIGTERM');
    const ran = await run.done;
    assert.equal(ran.code, 1);
    const record = JSON.parse(ran.stdout);
    assert.equal(record.outcome, 'error');
    assert.match(record.error, /SIGTERM/);
    assert.deepEqual(processesMatching('sleep 633'), []);
    const sessions = JSON.parse((await nightshift(['sessions', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(sessions[0].id, record.id);
    assert.equal(sessions[0].outcome, 'error');
    assert.ok(fs.existsSync(record.transcript));
  });
});
