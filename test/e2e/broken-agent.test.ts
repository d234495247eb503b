// One broken agent file stops nothing but itself (issue 29, block 1): the tick skips it, says so
// (exit 78, so OnFailure= fires) and runs the agent that is due; status and next still answer; agents lists it as INVALID.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configYaml, fakeApiPerFile, nightshift, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

test('a broken agent file is skipped by the tick, which runs the agent due and exits 78; status, next and agents say which file', async (t) => {
  const ws = workspace(t, api.url, configYaml({ top: 'dispatch:\n  - agent: broken\n  - agent: worker\n' }));
  fs.writeFileSync(path.join(ws.prompts, 'broken.md'), '---\nmodel: [unclosed\n---\nhi\n');
  writeAgent(ws, 'worker', 'SCENARIO=text');
  const tick = await nightshift(['tick', '--json'], ws.env, ws.dir);
  // The worker ran; the broken agent's due rule was passed over, so the tick exits 78 (issue 35).
  assert.equal(tick.code, 78, tick.stderr);
  const r = JSON.parse(tick.stdout);
  assert.equal(r.session?.agent, 'worker', tick.stdout);
  assert.equal(r.session?.outcome, 'ok');
  assert.equal(r.exit_code, 78);
  assert.match(tick.stderr, /"event":"agent_invalid".*broken\.md/);
  const status = await nightshift(['status', '--json'], ws.env, ws.dir);
  assert.equal(status.code, 0, status.stderr);
  assert.deepEqual(JSON.parse(status.stdout).invalid_agents.map((b: any) => b.name), ['broken']);
  const next = await nightshift(['next', '--json'], ws.env, ws.dir);
  assert.equal(next.code, 0, next.stderr);
  assert.match(JSON.parse(next.stdout).rules[0].why, /the agent file is invalid: .*broken\.md/);
  const agents = await nightshift(['agents'], ws.env, ws.dir);
  assert.equal(agents.code, 78);
  assert.match(agents.stdout, /^broken\s+INVALID\s+.*broken\.md: front matter/m);
  assert.match(agents.stdout, /^worker\s/m);
  // Control: doctor, which must not pass a site with a broken file, still fails naming it.
  const doctor = await nightshift(['doctor', '--json'], ws.env, ws.dir);
  assert.notEqual(doctor.code, 0);
  assert.match(doctor.stdout, /broken\.md/);
});
