// Ctrl-C is the operator's, not the agent's failure (issue 29, point 7): `run` ends the session,
// exits 130, records `interrupted`, starts no backoff streak, and the next state carries no
// ATTENTION asking the agent for the root cause of it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, processesMatching, startNightshift, waitFor, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

test('Ctrl-C during run: exit 130, outcome interrupted, no streak, no ATTENTION', { timeout: 120_000 }, async (t) => {
  const ws = workspace(t, api.url, configYaml({ top: 'git:\n  enabled: false\n', claude: { kill_grace: '2s' } }));
  writeAgent(ws, 'hang', 'SCENARIO=bg-hang SLEEP=663', { allowed_tools: ['Bash'] });
  for (let i = 0; i < 3; i++) {
    const before = api.requests.length;
    const d = startNightshift(['run', 'hang', '--json'], ws.env, ws.dir, t);
    await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'bg-hang' && r.turn === 1), 30_000, 'the session to hang');
    d.child.kill('SIGINT');
    const ran = await d.done;
    assert.equal(ran.code, 130, ran.stderr.slice(-2000));
    assert.equal(JSON.parse(ran.stdout).outcome, 'interrupted');
  }
  assert.deepEqual(ledgerRows(ws.dir).map((r) => r.outcome), ['interrupted', 'interrupted', 'interrupted']);
  assert.deepEqual(processesMatching('sleep 663'), []);
  // Three in a row would back an erroring agent off; an interrupted one runs at once.
  const status = JSON.parse((await nightshift(['status', '--json'], ws.env, ws.dir)).stdout);
  assert.deepEqual(status.holds, {}, JSON.stringify(status.holds));
  const state = await nightshift(['state', '--agent', 'hang'], ws.env, ws.dir);
  assert.equal(state.code, 0, state.stderr);
  assert.doesNotMatch(state.stdout, /ATTENTION/);
});
