// Issue 25, point 3, end to end: the real CLI in the real wall, scripted by the imitation API to
// make a few calls and then run, through its Bash tool, a thief that takes bwrap's pid 1's stdout
// (the supervisor's stream-json channel) with pidfd_getfd, writes a forged result there ($0.0001,
// 1 turn, ok) and kills the CLI. With the seccomp filter the theft fails and the ledger records
// what the API served; without it (the test-only control, a fixture) the ledger records the forgery.
//
// The workspace lives under /var/tmp: the wall gives the session a private /tmp.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { FIXTURES, NEEDS_BWRAP, configYaml, fakeApiPerFile, ledgerRows, nightshift, workspace, writeAgent, type Workspace } from '../helpers.js';
import { bash, text, type Turn } from '../fake-api.js';
import { THIEF_PY } from '../stream-thief.js';

const api = fakeApiPerFile();
const CALLS_BEFORE = 6;
const FORGED_USD = 0.0001;
const FORGED_TEXT = 'forged by the session';

function site(t: TestContext, name: string): Workspace {
  // The guardrail hook off: only the wall stands.
  const yaml = configYaml({ top: 'hooks:\n  enabled: false\nsandbox: bwrap\ngemini:\n  base_url: "http://127.0.0.1:9"\n', claude: { timeout: '120s', idle_timeout: '60s' } });
  return workspace(t, api.url, yaml, { base: '/var/tmp', prefix: `nightshift-forgery-${name}-` });
}

// Six harmless calls, then the thief; whatever the session still asks after it gets a text answer.
function script(name: string, seen: { thief: string | null }) {
  api.script(name, ({ turn, lastToolResult }: Turn) => {
    if (turn < CALLS_BEFORE) return bash(`echo call ${turn}`);
    if (turn === CALLS_BEFORE) return bash(`echo ${Buffer.from(THIEF_PY).toString('base64')} | base64 -d > thief.py && /usr/bin/python3 thief.py forge`, 'I will fix the books.');
    seen.thief ??= lastToolResult ?? '';
    return text('Done.');
  });
}

async function runFiltered(t: TestContext) {
  const ws = site(t, 'filtered');
  const seen = { thief: null as string | null };
  script('forgery-filtered', seen);
  writeAgent(ws, 'forger', 'SCENARIO=forgery-filtered', { allowed_tools: ['Bash'], max_turns: 50 });
  const ran = await nightshift(['run', 'forger', '--json'], ws.env, ws.dir);
  return { ws, ran, seen, record: JSON.parse(ran.stdout || 'null') };
}

async function runControl(t: TestContext) {
  const ws = site(t, 'control');
  const seen = { thief: null as string | null };
  script('forgery-control', seen);
  writeAgent(ws, 'forger', 'SCENARIO=forgery-control', { allowed_tools: ['Bash'], max_turns: 50 });
  const ran = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const c = spawn(process.execPath, [path.join(FIXTURES, 'run-without-seccomp.mjs'), ws.config, 'forger'], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d));
    c.stderr.on('data', (d: Buffer) => (stderr += d));
    c.on('close', (code: number | null) => resolve({ code, stdout, stderr }));
  });
  return { ws, ran, seen, record: JSON.parse(ran.stdout.trim().split('\n').at(-1) || 'null') };
}

// The API's own count of this scenario's calls.
const served = (scenario: string) => api.requests.filter((r) => r.scenario === scenario).length;

describe('the accounting does not rest on a channel the session can write', { skip: NEEDS_BWRAP }, () => {
  test('a session whose tool steals the stream (pidfd_getfd on pid 1) and writes a forged result is recorded as the API served it', { timeout: 5 * 60_000 }, async (t) => {
    const { ran, seen, record, ws } = await runFiltered(t);
    assert.ok(record, `run --json printed a record (exit ${ran.code}): ${ran.stderr.slice(-1500)}`);
    t.diagnostic(`filtered: outcome ${record.outcome}, turns ${record.turns}, $${record.cost_usd}, API calls ${served('forgery-filtered')}; the thief said: ${JSON.stringify(seen.thief)}`);
    assert.match(seen.thief ?? '', /stealing the stream failed: EPERM/, 'the thief ran and the kernel refused it');
    assert.notEqual(record.result, FORGED_TEXT);
    assert.equal(record.outcome, 'ok', `${record.error}`);
    assert.equal(record.turns, CALLS_BEFORE + 2, 'every call the API served is counted');
    assert.equal(served('forgery-filtered'), CALLS_BEFORE + 2);
    assert.ok(record.cost_usd > FORGED_USD * 10, `the cost is the API's, not the forged one ($${record.cost_usd})`);
    const row = ledgerRows(ws.dir).find((r) => r.id === record.id);
    assert.ok(Math.abs(row?.cost_usd - record.cost_usd) < 1e-9, `the ledger holds the same ($${row?.cost_usd})`);
  });

  test('negative control: walled without the filter, the forgery is taken for the outcome and turns (ok, 1 turn), and only the meter keeps the cost true', { timeout: 5 * 60_000 }, async (t) => {
    const { ran, seen, record, ws } = await runControl(t);
    assert.ok(record, `the fixture printed a record (exit ${ran.code}): ${ran.stderr.slice(-1500)}`);
    t.diagnostic(`control: outcome ${record.outcome}, turns ${record.turns}, $${record.cost_usd}, API calls ${served('forgery-control')}; the thief said: ${JSON.stringify(seen.thief)}`);
    assert.equal(seen.thief, null, 'the CLI never asked again: it was killed');
    assert.equal(served('forgery-control'), CALLS_BEFORE + 1, 'the API served the calls up to the thief');
    assert.equal(record.result, FORGED_TEXT, 'the ledger took the forged result');
    assert.equal(record.outcome, 'ok');
    assert.equal(record.turns, 1, 'the forged turns');
    // The stream's cost is the forger's; the ledger's is what the proxy metered (budget/meter.ts).
    const row = ledgerRows(ws.dir).find((r) => r.id === record.id);
    assert.ok(Math.abs(row?.cli_cost_usd - FORGED_USD) < 1e-9, `the CLI's count is the forged one ($${row?.cli_cost_usd})`);
    assert.ok(row?.cost_usd > FORGED_USD * 10, `the metered cost is what the API served ($${row?.cost_usd})`);
  });
});
