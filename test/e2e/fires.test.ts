// Every fire leaves a row (issue 35), through the built binary, the real CLI and the fake API: a
// due rule passed over for an invalid agent file exits 78 and says which (control: the same agent
// valid runs and exits 0, its fire naming the session); a supervisor SIGKILLed mid-tick leaves an
// open fire that the next start settles `crashed` (control: while it lives, it stays open).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, processesMatching, startNightshift, waitFor, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const gitOff = 'git:\n  enabled: false\n';
const fires = async (ws: { env: NodeJS.ProcessEnv; dir: string }) => {
  const r = await nightshift(['fires', '--json'], ws.env, ws.dir);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as any[];
};

describe('fires', () => {
  test('a due agent with an invalid file: the tick exits 78 naming it; valid, it runs, exits 0, and its fire names the session', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: gardener\n` }));
    const file = path.join(ws.prompts, 'gardener.md');
    fs.writeFileSync(file, '---\nmax_turns: lots\n---\nhi\n');
    const broken = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(broken.code, 78, broken.stderr);
    const r = JSON.parse(broken.stdout);
    assert.equal(r.action, 'skip');
    assert.equal(r.exit_code, 78);
    assert.match(r.reason, /rule 0 \(gardener\) is passed over: the agent file is invalid: .*gardener\.md/);
    assert.match(broken.stderr, /"event":"due_rule_invalid".*"agent":"gardener"/);
    // `next` says the same for that agent.
    const next = JSON.parse((await nightshift(['next', '--json'], ws.env, ws.dir)).stdout);
    assert.match(next.rules[0].why, /^the agent file is invalid: .*gardener\.md.*\(due now: the tick passes it over and exits 78\)$/);
    const [first] = await fires(ws);
    assert.deepEqual([first.kind, first.trigger, first.action, first.exit_code, first.session], ['tick', 'hand', 'skip', 78, null]);
    assert.deepEqual(first.passed_over.map((p: any) => [p.agent, p.cause]), [['gardener', 'invalid']]);
    assert.deepEqual(ledgerRows(ws.dir), []);

    // Control: the same agent, valid.
    writeAgent(ws, 'gardener', 'SCENARIO=text');
    const ran = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    const ok = JSON.parse(ran.stdout);
    assert.equal(ok.session.outcome, 'ok');
    const [sessionRow] = ledgerRows(ws.dir);
    const [last, before] = await fires(ws);
    assert.equal(before.id, first.id);
    assert.deepEqual([last.action, last.agent, last.rule, last.session, last.outcome, last.exit_code, last.status], ['session', 'gardener', 0, sessionRow.id, 'ok', 0, 'settled']);
    assert.equal(ok.fire, last.id);
    assert.deepEqual(last.passed_over, []);
    assert.match(last.reason, new RegExp(`^rule 0 \\(gardener\\) is due: session ${sessionRow.id} ended ok$`));
    // `run` by hand leaves a fire of its own kind.
    const byHand = await nightshift(['run', 'gardener', '--json'], ws.env, ws.dir);
    assert.equal(byHand.code, 0, byHand.stderr);
    const [manual] = await fires(ws);
    assert.deepEqual([manual.kind, manual.trigger, manual.action, manual.session], ['run', 'hand', 'session', JSON.parse(byHand.stdout).id]);
  });

  test('a supervisor SIGKILLed mid-tick leaves its fire open; the next start settles it crashed, with its session', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: hang\n` }));
    writeAgent(ws, 'hang', 'SCENARIO=bg-hang SLEEP=663', { allowed_tools: ['Bash'] });
    const before = api.requests.length;
    const victim = startNightshift(['tick'], ws.env, ws.dir, t);
    await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'bg-hang' && r.turn === 1), 20_000, 'the session to hang');
    // Control: while its supervisor lives, a look leaves the fire open (running), its session noted.
    const [live] = await fires(ws);
    assert.deepEqual([live.status, live.action, live.agent, live.supervisor_pid], ['open', null, 'hang', victim.child.pid]);
    const session = ledgerRows(ws.dir)[0].id;
    assert.equal(live.session, session);
    // A tick the live holder's run lock turns away still leaves its row, settled `locked`, exit 0.
    // mutation: no fire row when the run lock's holder is alive (daemon/tick/tick.ts), caught here.
    const turned = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(turned.code, 0, turned.stderr);
    const away = JSON.parse(turned.stdout);
    assert.match(away.reason, /^locked: another supervisor is running \(pid \d+/);
    const [lockedRow, stillLive] = await fires(ws);
    assert.equal(stillLive.id, live.id);
    assert.equal(away.fire, lockedRow.id);
    assert.deepEqual([lockedRow.kind, lockedRow.status, lockedRow.action, lockedRow.exit_code, lockedRow.session], ['tick', 'settled', 'locked', 0, null]);
    assert.match(lockedRow.reason, new RegExp(`locked: another supervisor is running \\(pid ${victim.child.pid}`));
    victim.child.kill('SIGKILL');
    await victim.done;
    writeAgent(ws, 'hang', 'SCENARIO=text');
    const next = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(next.code, 0, next.stderr);
    assert.match(next.stderr, /"event":"fire_crashed"/);
    const [after, turnedAway, dead] = await fires(ws);
    assert.equal(turnedAway.id, lockedRow.id);
    assert.equal(dead.id, live.id);
    assert.deepEqual([dead.status, dead.action, dead.session, dead.outcome, dead.exit_code], ['settled', 'crashed', session, 'abandoned', null]);
    assert.match(dead.reason, new RegExp(`the supervisor \\(pid ${victim.child.pid}\\) died before the fire was settled: its session ${session} is settled abandoned`));
    assert.deepEqual([after.action, after.exit_code], ['session', 0]);
    assert.deepEqual(ledgerRows(ws.dir).map((x) => x.outcome), ['abandoned', 'ok']);
    await waitFor(() => processesMatching('sleep 663').length === 0, 5000, 'the dead session\'s grandchild to be ended');
  });

  test('a ledger that cannot be opened: the tick exits 70 and its fire says why; a fires file that cannot be written: the tick still exits non-zero', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch: []\n` }));
    // Control: a sound site, nothing due: exit 0.
    assert.equal((await nightshift(['tick'], ws.env, ws.dir)).code, 0);
    fs.writeFileSync(path.join(ws.state, 'ledger.db'), 'not a database, not at all: '.repeat(200));
    for (const f of ['ledger.db-wal', 'ledger.db-shm']) fs.rmSync(path.join(ws.state, f), { force: true });
    const damaged = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(damaged.code, 70, damaged.stderr);
    assert.match(damaged.stderr, /Ledger .*ledger\.db cannot be opened \(SQLITE_NOTADB\)/);
    const [failed, sound] = await fires(ws);
    assert.deepEqual([sound.action, sound.exit_code], ['skip', 0]);
    assert.deepEqual([failed.action, failed.exit_code], ['failed to start', 70]);
    assert.match(failed.reason, /Ledger .*ledger\.db cannot be opened \(SQLITE_NOTADB\)\. It is damaged or not a ledger: move it aside/);
    // The ledger sound again, the fires file damaged instead: nothing to record the fire in, and the
    // tick that would have exited 0 exits 70, the cause in its log.
    fs.rmSync(path.join(ws.state, 'ledger.db'));
    fs.writeFileSync(path.join(ws.state, 'fires.db'), 'not a database, not at all: '.repeat(200));
    for (const f of ['fires.db-wal', 'fires.db-shm']) fs.rmSync(path.join(ws.state, f), { force: true });
    const unrecorded = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(unrecorded.code, 70, unrecorded.stderr);
    assert.equal(JSON.parse(unrecorded.stdout).action, 'skip');
    assert.match(unrecorded.stderr, /"event":"fire_unwritable".*fires\.db cannot be opened \(SQLITE_NOTADB\)/);
  });
});
