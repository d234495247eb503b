// Ticks, locks, the daemon and next/status, through the built binary.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { configYaml, fakeApiPerFile, ledgerIntegrity, ledgerRows, nightshift, processesMatching, startNightshift, waitFor, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

const gitOff = 'git:\n  enabled: false\n';

// While the daemon starts, the file may exist before its table does.
function settledCount(dir: string): number {
  try {
    return ledgerRows(dir).filter((r) => r.status === 'settled').length;
  } catch {
    return 0;
  }
}

// The JSON log lines a run wrote to stderr.
const logEvents = (stderr: string): Array<Record<string, any>> => stderr.trim().split('\n').filter(Boolean).map((l) => {
  try {
    return JSON.parse(l);
  } catch {
    throw new Error(`not a JSON log line: ${JSON.stringify(l.slice(0, 300))}`);
  }
});
// What supervise() logs when the run lock refuses a tick.
const lockSkips = (events: Array<Record<string, any>>) => events.filter((e) => e.event === 'skipped' && e.limit === 'lock');

describe('tick', () => {
  test('nothing due: skip, exit 0, reason given', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: sleeper\n    hours: [0]\n` }));
    writeAgent(ws, 'sleeper', 'SCENARIO=text');
    const next = JSON.parse((await nightshift(['next', '--json', '--at', '2026-12-01T15:00:00Z'], ws.env, ws.dir)).stdout);
    // No timer installed: the default's hourly ticks, the first at --at itself.
    assert.deepEqual(next, { agent: null, rule: null, starts: false, reason: 'no rule is due', tick_at: '2026-12-01T15:00:00.000Z', next_ticks: ['15', '16', '17', '18', '19', '20'].map((h) => `2026-12-01T${h}:00:00.000Z`), calendar: { on_calendar: ['hourly'], source: 'default', file: '/etc/systemd/system/nightshift.timer', assumed: null }, rules: [{ index: 0, agent: 'sleeper', matched: false, why: 'not at hour 15 (hours: 0)', next_due: '2026-12-02T00:00:00.000Z' }], holds: {}, next_due: { sleeper: '2026-12-02T00:00:00.000Z' }, why: {}, waits: {}, windows: [], window_hold: null, beside: { max_concurrent: 1, running: [], starts: [], waits: [] } });
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}dispatch: []\n` }));
    const ran = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0);
    const r = JSON.parse(ran.stdout);
    assert.equal(r.action, 'skip');
    assert.equal(r.reason, 'no dispatch rules configured');
    assert.equal(r.session, null);
  });

  test('a failed session exits 1 so OnFailure= can fire; a spent budget is a skip with exit 0', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: failing\n`, budget: { max_sessions_per_day: 1 } }));
    writeAgent(ws, 'failing', 'SCENARIO=err500');
    const first = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(first.code, 1);
    assert.equal(JSON.parse(first.stdout).session.outcome, 'error');
    const second = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(second.code, 0);
    const r = JSON.parse(second.stdout);
    assert.equal(r.action, 'skip');
    assert.match(r.reason, /max_sessions_per_day/);
  });

  test('10 ticks started at once run exactly one session; the rest exit 0 as locked', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: slow\n` }));
    writeAgent(ws, 'slow', 'SCENARIO=slow-tool SLEEP=3', { allowed_tools: ['Bash'] });
    const runs = await Promise.all(Array.from({ length: 10 }, () => nightshift(['tick', '--json'], ws.env, ws.dir)));
    const results = runs.map((r) => {
      try {
        return { code: r.code, ...JSON.parse(r.stdout), events: logEvents(r.stderr) };
      } catch {
        throw new Error(`a tick printed no JSON (exit ${r.code}, signal ${r.signal}):\n${r.stderr}`);
      }
    });
    const sessions = results.filter((r) => r.action === 'session');
    const locked = results.filter((r) => r.action === 'skip' && /^locked/.test(r.reason));
    assert.equal(sessions.length, 1, JSON.stringify(results.map((r) => r.reason)));
    assert.equal(locked.length, 9);
    assert.ok(locked.every((r) => r.code === 0));
    // Each refused tick logged the run lock's refusal once; the tick that ran logged none.
    for (const r of locked) assert.equal(lockSkips(r.events).length, 1, JSON.stringify(r.events));
    assert.deepEqual(lockSkips(sessions[0].events), []);
    assert.equal(sessions[0].events.filter((e: Record<string, any>) => e.event === 'session_start').length, 1);
    assert.equal(ledgerRows(ws.dir).length, 1);
    assert.equal(ledgerIntegrity(ws.dir), 'ok');
    // Every tick left its fire: the nine turned away each settled `locked`, exit 0, as its JSON said.
    const fires = JSON.parse((await nightshift(['fires', '--json'], ws.env, ws.dir)).stdout) as any[];
    assert.deepEqual(fires.map((f) => f.action).sort(), ['locked', 'locked', 'locked', 'locked', 'locked', 'locked', 'locked', 'locked', 'locked', 'session']);
    assert.deepEqual(locked.map((r) => r.fire).sort(), fires.filter((f) => f.action === 'locked').map((f) => f.id).sort());
    assert.ok(fires.every((f) => f.status === 'settled' && f.exit_code === 0), JSON.stringify(fires));
  });

  test('a run lock left by a SIGKILLed tick is recovered, and its session settled abandoned', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: hang\n` }));
    writeAgent(ws, 'hang', 'SCENARIO=bg-hang SLEEP=661', { allowed_tools: ['Bash'] });
    const before = api.requests.length;
    const victim = startNightshift(['tick'], ws.env, ws.dir, t);
    await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'bg-hang' && r.turn === 1), 20_000, 'the session to hang');
    victim.child.kill('SIGKILL');
    await victim.done;
    assert.ok(fs.existsSync(path.join(ws.state, 'run.lock')), 'the dead tick left its lock');
    const status = JSON.parse((await nightshift(['status', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(status.locks.run.pid, victim.child.pid);
    writeAgent(ws, 'hang', 'SCENARIO=text');
    const ran = await nightshift(['tick', '--json'], ws.env, ws.dir);
    const r = JSON.parse(ran.stdout);
    // Taken over from the dead holder (mtime staleness is set beyond reach in core/lock.ts).
    assert.equal(r.action, 'session', ran.stderr);
    assert.match(ran.stderr, /"event":"lock_recovered"/);
    const all = ledgerRows(ws.dir);
    assert.deepEqual(all.map((x) => x.outcome), ['abandoned', 'ok']);
    assert.equal(ledgerIntegrity(ws.dir), 'ok');
    await waitFor(() => processesMatching('sleep 661').length === 0, 5000, 'the dead session\'s grandchild to be ended');
  });

  test('status --json has the documented shape', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: ok\n` }));
    writeAgent(ws, 'ok', 'SCENARIO=text');
    const before = Date.now();
    await nightshift(['tick'], ws.env, ws.dir);
    const s = JSON.parse((await nightshift(['status', '--json'], ws.env, ws.dir)).stdout);
    assert.deepEqual(Object.keys(s).sort(), ['branches', 'budget', 'fires_error', 'fleet', 'holds', 'invalid_agents', 'last_fires', 'last_ok_at', 'last_sessions', 'locks', 'max_concurrent', 'next', 'running', 'tick_gaps', 'unpushed', 'window_hold', 'windows']);
    assert.deepEqual([s.running, s.max_concurrent], [[], 1]);
    // No fleet's database named: no fleet, and nothing of pg asked.
    assert.equal(s.fleet, null);
    assert.equal(s.budget.sessions, 1);
    assert.equal(s.last_sessions[0].outcome, 'ok');
    assert.equal(s.next.agent, 'ok');
    assert.deepEqual(s.locks, { run: null, git: null });
    assert.equal(s.unpushed, null);
    assert.ok(Date.parse(s.last_ok_at) >= before - 1000, `last_ok_at ${s.last_ok_at} is this tick's`);
  });
});

describe('daemon', () => {
  test('two schedules that fire together run one tick at a time', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: slow\ndaemon:\n  schedule: ["* * * * * *", "*/1 * * * * *"]\n  shutdown_grace: 20s\n`, budget: { max_sessions_per_day: 100 } }));
    writeAgent(ws, 'slow', 'SCENARIO=slow-tool SLEEP=2', { allowed_tools: ['Bash'] });
    const d = startNightshift(['daemon'], ws.env, ws.dir, t);
    await waitFor(() => settledCount(ws.dir) >= 2, 30_000, 'two sessions');
    d.child.kill('SIGTERM');
    const ran = await d.done;
    assert.equal(ran.code, 0, ran.stderr.slice(-2000));
    const all = ledgerRows(ws.dir);
    assert.ok(all.every((r) => r.status === 'settled'), 'every session settled');
    for (let i = 1; i < all.length; i++) assert.ok(all[i].started_at >= all[i - 1].ended_at, 'sessions never overlap');
    const events = logEvents(ran.stderr);
    assert.ok(events.some((e) => e.event === 'tick_overlap'), 'simultaneous fires were skipped');
    // They were skipped in-process, before the run lock: no tick was refused by the lock, and
    // every tick that started ran a session.
    assert.deepEqual(lockSkips(events), []);
    assert.equal(events.filter((e) => e.event === 'tick_start').length, all.length);
    const ends = events.filter((e) => e.event === 'tick_end');
    assert.equal(ends.length, all.length);
    assert.deepEqual(ends.filter((e) => e.action !== 'session'), []);
  });

  test('SIGTERM during a session ends it after shutdown_grace, settles it, and exits 0', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: hang\ndaemon:\n  schedule: "* * * * * *"\n  shutdown_grace: 1s\n`, claude: { kill_grace: '2s' } }));
    writeAgent(ws, 'hang', 'SCENARIO=bg-hang SLEEP=662', { allowed_tools: ['Bash'] });
    const before = api.requests.length;
    const d = startNightshift(['daemon'], ws.env, ws.dir, t);
    await waitFor(() => api.requests.slice(before).some((r) => r.scenario === 'bg-hang' && r.turn === 1), 20_000, 'the session to hang');
    d.child.kill('SIGTERM');
    const ran = await d.done;
    assert.equal(ran.code, 0, ran.stderr.slice(-2000));
    const all = ledgerRows(ws.dir);
    assert.equal(all.length, 1);
    assert.equal(all[0].status, 'settled');
    assert.equal(all[0].outcome, 'interrupted');
    assert.match(all[0].error, /daemon shutdown/);
    assert.deepEqual(processesMatching('sleep 662'), []);
  });

  test('memory pressure and nothing due gives a dream, logged and reported; a session due wins over it', async (t) => {
    const pressure = 'memory:\n  dream_after: 3\n';
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}${pressure}` }));
    const lines = ['the kettle is in the left cupboard', 'the spare key hangs by the door', 'the plants want water on mondays', 'the boiler code is in the blue folder']
      .map((text, i) => JSON.stringify({ text, source: `note-${i}` })).join('\n');
    fs.writeFileSync(path.join(ws.dir, 'notes.jsonl'), `${lines}\n`);
    const imported = await nightshift(['memory', 'import', path.join(ws.dir, 'notes.jsonl'), '--json'], ws.env, ws.dir);
    assert.equal(imported.code, 0, imported.stderr);
    const first = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(first.code, 0, first.stderr);
    const r = JSON.parse(first.stdout);
    assert.equal(r.action, 'dream');
    assert.match(r.reason, /4 observations since the last dream/);
    assert.equal(r.dream.ok, true, JSON.stringify(r.dream));
    assert.ok(r.dream.report.phases.fade.ok);
    const events = logEvents(first.stderr).map((e) => e.event);
    assert.ok(events.includes('dream_start') && events.includes('dream_end') && events.includes('report'), events.join(','));
    assert.deepEqual(ledgerRows(ws.dir), [], 'a dream is not a session: nothing charged');
    // The pressure is spent: the next tick skips.
    const second = JSON.parse((await nightshift(['tick', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(second.action, 'skip');
    // Pressure again, but now a session is due: the session wins.
    fs.writeFileSync(path.join(ws.dir, 'more.jsonl'), ['a', 'b', 'c'].map((x) => JSON.stringify({ text: `fresh fact ${x} about the garden shed roof`, source: x })).join('\n') + '\n');
    assert.equal((await nightshift(['memory', 'import', path.join(ws.dir, 'more.jsonl')], ws.env, ws.dir)).code, 0);
    fs.writeFileSync(ws.config, configYaml({ top: `${gitOff}${pressure}dispatch:\n  - agent: due\n` }));
    writeAgent(ws, 'due', 'SCENARIO=text');
    const third = JSON.parse((await nightshift(['tick', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(third.action, 'session');
    assert.equal(third.session.outcome, 'ok');
  });
});
