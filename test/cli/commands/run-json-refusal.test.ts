// `run --json` refused (issue 35, point 8): one JSON object on stdout saying why, with the exit
// code the refusal has; a script never has to scrape stderr. Each through the real path.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { acquireLock } from '../../../core/lock.js';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, workspace, writeAgent } from '../../helpers.js';

const api = fakeApiPerFile();

// stdout parsed as exactly one JSON object (a second line or plain text fails the parse).
const parsed = (stdout: string): any => JSON.parse(stdout);

describe('run --json when no session runs', () => {
  test('a reached daily limit: refused, BUDGET_EXHAUSTED, exit 75, the limit named; the run before it printed its record', async (t) => {
    const ws = workspace(t, api.url, configYaml({ budget: { max_sessions_per_day: 1 } }));
    writeAgent(ws, 'once', 'SCENARIO=text');
    // Control: the first run is a session, printed as its record (no `refused`).
    const first = await nightshift(['run', 'once', '--json'], ws.env, ws.dir);
    assert.equal(first.code, 0, first.stderr);
    const record = parsed(first.stdout);
    assert.equal(record.outcome, 'ok');
    assert.equal(record.refused, undefined);
    const ran = await nightshift(['run', 'once', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 75, ran.stderr);
    const o = parsed(ran.stdout);
    assert.deepEqual({ refused: o.refused, agent: o.agent, code: o.code, exit_code: o.exit_code, limit: o.limit }, { refused: true, agent: 'once', code: 'BUDGET_EXHAUSTED', exit_code: 75, limit: 'max_sessions_per_day' });
    assert.match(o.reason, /max_sessions_per_day reached: 1 of 1/);
    assert.match(ran.stderr, /max_sessions_per_day/, 'stderr still says it in words');
    assert.equal(ledgerRows(ws.dir).length, 1, 'nothing charged for the refusal');
  });

  test('another supervisor holds the run lock: refused, LOCKED, exit 75', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'worker', 'SCENARIO=text');
    fs.mkdirSync(ws.state, { recursive: true });
    const held = await acquireLock(path.join(ws.state, 'run'), { timeoutMs: 0, purpose: 'test' });
    assert.ok(held);
    t.after(() => held.release());
    const ran = await nightshift(['run', 'worker', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 75, ran.stderr);
    const o = parsed(ran.stdout);
    assert.equal(o.refused, true);
    assert.equal(o.code, 'LOCKED');
    assert.equal(o.exit_code, 75);
    assert.match(o.reason, new RegExp(`locked: another supervisor is running \\(pid ${process.pid} `));
  });

  test('no credential: refused, ENV_FILE, exit 78, the env file named', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'worker', 'SCENARIO=text');
    const env = { ...ws.env };
    delete env.ANTHROPIC_API_KEY;
    const ran = await nightshift(['run', 'worker', '--json'], env, ws.dir);
    assert.equal(ran.code, 78, ran.stderr);
    const o = parsed(ran.stdout);
    assert.equal(o.refused, true);
    assert.equal(o.code, 'ENV_FILE');
    assert.equal(o.exit_code, 78);
    assert.ok(o.reason.includes(path.join(ws.dir, 'nightshift.env')), o.reason);
    assert.match(o.reason, /no credential/);
  });

  test('without --json a refusal prints nothing on stdout (the words go to stderr)', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'worker', 'SCENARIO=text');
    const env = { ...ws.env };
    delete env.ANTHROPIC_API_KEY;
    const ran = await nightshift(['run', 'worker'], env, ws.dir);
    assert.equal(ran.code, 78);
    assert.equal(ran.stdout, '');
    assert.match(ran.stderr, /no credential/);
  });
});
