// The supervisor itself dies or is stopped mid-session: the day's count must survive.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { listProcs, withMarker } from '../../core/process-tree.js';
import { spawn } from 'node:child_process';
import { makeRepos } from '../git-helpers.js';
import { CLAUDE, configYaml, NEEDS_BWRAP, fakeApiPerFile, FIXTURES, ledgerIntegrity, ledgerRows, nightshift, processesMatching, startNightshift, tempDir, waitFor, type Workspace, workspace, writeAgent, type Ran } from '../helpers.js';

const api = fakeApiPerFile();


// The supervisor built with a ledger that charges at settle: a test-only fixture, because the
// product itself reads no such switch.
function startChargeAtSettle(ws: Workspace, agent: string, t: TestContext): { child: ReturnType<typeof spawn>; done: Promise<Ran> } {
  const child = spawn(process.execPath, [path.join(FIXTURES, 'run-charge-at-settle.mjs'), ws.config, agent], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  return { child, done: new Promise<Ran>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))) };
}

// Starts a session that hangs on its second API call with a detached `sleep <n>` running, and
// SIGKILLs nightshift once the CLI is waiting. Returns the budget afterwards.
async function killMidSession(t: TestContext, ws: Workspace, sleepN: number, control = false) {
  // Whatever the assertions say, nothing of the killed session may outlive the test.
  t.after(() => {
    for (const pid of withMarker(ws.env.HOME!, listProcs(), 'HOME')) process.kill(pid, 'SIGKILL');
    for (const p of processesMatching(`sleep ${sleepN}`)) process.kill(p.pid, 'SIGKILL');
  });
  writeAgent(ws, 'victim', `SCENARIO=bg-hang SLEEP=${sleepN}`, { allowed_tools: ['Bash'] });
  const before = api.requests.length;
  const run = control ? startChargeAtSettle(ws, 'victim', t) : startNightshift(['run', 'victim', '--json'], ws.env, ws.dir, t);
  await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'bg-hang' && r.turn === 1), 20_000, 'the second API call');
  assert.equal(processesMatching(`sleep ${sleepN}`).length, 1, 'the tool started its grandchild');
  run.child.kill('SIGKILL');
  const ran = await run.done;
  assert.equal(ran.signal, 'SIGKILL');
  return ran;
}

describe('a supervisor killed mid-session', () => {
  test('the next start settles the session abandoned, still counted, and ends what it left running (unsandboxed)', async (t) => {
    // Unwalled, the CLI outlives a killed supervisor; in the sandbox it cannot (the next test).
    const ws = workspace(t, api.url, configYaml({ top: 'sandbox: none\n', budget: { max_sessions_per_day: 1 } }));
    await killMidSession(t, ws, 631);
    // The CLI and its detached grandchild outlived the supervisor.
    assert.equal(processesMatching('sleep 631').length, 1);
    // So did its session folder, with the hook settings naming the (now dead) session's token.
    const sessionsDir = path.join(ws.state, 'sessions');
    const left = fs.readdirSync(sessionsDir, { recursive: true }).map(String);
    assert.ok(left.some((f) => f.endsWith('settings.json')), `the killed supervisor's folder: ${left.join(' ')}`);
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
    // Swept by a start that ran no session at all (removal tried: with the sweep in supervise()
    // taken out, the folder stayed and this failed).
    assert.deepEqual(fs.readdirSync(sessionsDir), []);
    assert.match(refused.stderr, /"event":"session_dirs_swept"/);
    // That start also captured what the abandoned session left (its result record), once.
    const recalled = await nightshift(['memory', 'query', 'victim ended abandoned', '--json'], ws.env, ws.dir);
    assert.equal(recalled.code, 0, recalled.stderr);
    const abandoned = (JSON.parse(recalled.stdout) as Array<{ text: string }>).filter((m) => / of victim ended abandoned /.test(m.text));
    assert.equal(abandoned.length, 1, recalled.stdout);
  });

  test('in the sandbox nothing outlives a killed supervisor, and the session is still counted', { skip: NEEDS_BWRAP }, async (t) => {
    const ws = workspace(t, api.url, configYaml({ budget: { max_sessions_per_day: 1 } }));
    await killMidSession(t, ws, 636);
    // bwrap dies with its parent, and its PID namespace with it: the CLI and the grandchild too.
    await waitFor(() => processesMatching('sleep 636').length === 0, 3000, 'the sandbox to end with the supervisor');
    const sessions = JSON.parse((await nightshift(['sessions', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].outcome, 'abandoned');
    // The cgroups it was bounded by are left too (the harm: on this host the tests once left 137),
    // named in its folder; the next start removes them with the folder.
    const record = path.join(ws.state, 'sessions', sessions[0].id, 'cells.json');
    const cells: string[] = fs.existsSync(record) ? JSON.parse(fs.readFileSync(record, 'utf8')) : [];
    if (process.env.CI) assert.ok(cells.length > 0, 'CI runs as root with cgroups: the session had a cell');
    for (const c of cells) assert.ok(fs.existsSync(c), `left behind by the killed supervisor: ${c}`);
    writeAgent(ws, 'next', 'SCENARIO=text');
    assert.equal((await nightshift(['run', 'next'], ws.env, ws.dir)).code, 75, 'the limit holds');
    for (const c of cells) assert.equal(fs.existsSync(c), false, `removed by the next start: ${c}`);
    assert.equal(fs.existsSync(path.dirname(record)), false, 'and the folder with it');
  });

  test('negative control: a ledger that only counts at the end loses the killed session', async (t) => {
    const ws = workspace(t, api.url, configYaml({ budget: { max_sessions_per_day: 1 } }));
    await killMidSession(t, ws, 632, true);
    const b = JSON.parse((await nightshift(['budget', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(b.sessions, 0, 'the same harness sees the loss when the protection is off');
    writeAgent(ws, 'next', 'SCENARIO=text');
    const ran = await nightshift(['run', 'next'], ws.env, ws.dir);
    assert.equal(ran.code, 0, 'the limit of one session a day was overrun');
  });

  // SIGTERM is systemd stopping us; SIGHUP a closed terminal or `systemctl kill -s HUP`.
  for (const [signal, sleepN] of [['SIGTERM', 633], ['SIGHUP', 634]] as const) {
    test(`${signal} to nightshift ends the session and settles it before exiting`, async (t) => {
      const ws = workspace(t, api.url, configYaml({ claude: { kill_grace: '2s' } }));
      t.after(() => processesMatching(`sleep ${sleepN}`).forEach((p) => process.kill(p.pid, 'SIGKILL')));
      writeAgent(ws, 'stopped', `SCENARIO=bg-hang SLEEP=${sleepN}`, { allowed_tools: ['Bash'] });
      const before = api.requests.length;
      const run = startNightshift(['run', 'stopped', '--json'], ws.env, ws.dir, t);
      await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'bg-hang' && r.turn === 1), 20_000, 'the second API call');
      run.child.kill(signal);
      const ran = await run.done;
      assert.equal(ran.signal, null, 'not killed by the signal: it exited on its own');
      assert.equal(ran.code, 130, 'a stop asked for, as a shell reports it');
      const record = JSON.parse(ran.stdout);
      assert.equal(record.outcome, 'interrupted');
      assert.match(record.error, new RegExp(signal));
      assert.match(ran.stderr, /"event":"session_end"/);
      assert.deepEqual(processesMatching(`sleep ${sleepN}`), []);
      const sessions = JSON.parse((await nightshift(['sessions', '--json'], ws.env, ws.dir)).stdout);
      assert.equal(sessions[0].id, record.id);
      assert.equal(sessions[0].outcome, 'interrupted');
      assert.equal(ledgerRows(ws.dir)[0].status, 'settled');
      assert.ok(fs.existsSync(record.transcript));
    });
  }


  test('a transcript that cannot be written (file size limit) ends the session as error, settled, nothing left running', async (t) => {
    // The limit is ours alone: the real CLI, started through a wrapper that lifts its soft limit
    // again, never races us to a write it cannot make (it keeps the flood in files of its own).
    // The wall is left out: this test is about our own write.
    const bin = tempDir(t);
    const cli = path.join(bin, 'claude');
    fs.writeFileSync(cli, `#!/bin/sh\nulimit -S -f unlimited\nexec '${CLAUDE}' "$@"\n`, { mode: 0o755 });
    const ws = workspace(t, api.url, configYaml({ top: 'sandbox: none\n', claude: { command: cli } }));
    t.after(() => processesMatching('sleep 635').forEach((p) => process.kill(p.pid, 'SIGKILL')));
    writeAgent(ws, 'flooder', 'SCENARIO=flood SLEEP=635 SIZE=600000', { allowed_tools: ['Bash'] });
    // `ulimit -S -f 1024`: no file of ours may grow past 512 KiB (sh counts 512-byte blocks): room
    // for the ledger and the memory store with their WALs (a fresh store is ~160 KiB), none for
    // the flood's 600 kB line (a larger one the CLI itself cuts off at its exit).
    const child = spawn('sh', ['-c', `ulimit -S -f 1024; exec "$0" "$@"`, process.execPath, path.join(FIXTURES, '..', '..', 'dist', 'cli', 'bin.js'), 'run', 'flooder', '--json'], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 1, stderr);
    const record = JSON.parse(stdout);
    assert.equal(record.outcome, 'error');
    assert.match(record.error, /internal: writing the transcript: EFBIG/, stderr.slice(-3000));
    assert.doesNotMatch(stderr, /"event":"(memory_unavailable|settle_failed)"/, 'the ledger and the memory store had room: only the transcript hit the limit');
    const rows = ledgerRows(ws.dir);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].status, 'settled');
    assert.deepEqual(processesMatching('sleep 635'), []);
  });

  // The lock wait is ten minutes: a stop that is not heard fails by the test's own timeout.
  test('a stop request during the git-lock wait ends the run at once, with nothing charged or started', { timeout: 180_000 }, async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: 'git:\n  lock_timeout: 10m\n' }));
    makeRepos(ws.dir, ws.vault);
    writeAgent(ws, 'waiter', 'SCENARIO=text-for-waiter');
    const holder = startNightshift(['lock', '--', 'sleep', '636'], ws.env, ws.dir, t);
    t.after(() => processesMatching('sleep 636').forEach((p) => process.kill(p.pid, 'SIGKILL')));
    await waitFor(() => fs.existsSync(path.join(ws.state, 'git.lock.owner.json')), 5000, 'the git lock holder');
    const run = startNightshift(['run', 'waiter', '--json'], ws.env, ws.dir, t);
    let said = '';
    run.child.stderr!.on('data', (c) => (said += c));
    await waitFor(() => /"event":"lock_wait".*git\.lock/.test(said), 10_000, 'the run to wait on the git lock');
    run.child.kill('SIGTERM');
    const ran = await run.done;
    assert.equal(ran.code, 75, ran.stderr);
    assert.match(ran.stderr, /stop requested/);
    assert.deepEqual(ledgerRows(ws.dir), [], 'nothing charged after the stop request');
    assert.ok(!api.requests.some((r) => r.scenario === 'text-for-waiter'), 'no session was started');
    holder.child.kill('SIGTERM');
    await holder.done;
  });

  test('a run lock taken from the supervisor ends its session', async (t) => {
    const ws = workspace(t, api.url, configYaml({ claude: { kill_grace: '1s' } }));
    writeAgent(ws, 'robbed', 'SCENARIO=hang');
    const before = api.requests.length;
    const run = startNightshift(['run', 'robbed', '--json'], ws.env, ws.dir, t);
    await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'hang'), 20_000, 'the API call');
    // Someone broke the lock and took it anyway (pid 1 is alive, so it is never taken back).
    fs.writeFileSync(path.join(ws.state, 'run.owner.json'), JSON.stringify({ pid: 1, start: null, since: new Date().toISOString(), purpose: 'intruder' }));
    const ran = await run.done;
    const record = JSON.parse(ran.stdout);
    assert.equal(record.outcome, 'error');
    assert.match(record.error, /lock .* lost/);
    assert.equal(ledgerRows(ws.dir)[0].status, 'settled');
  });
});
