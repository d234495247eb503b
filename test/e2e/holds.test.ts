// Holds and backoff as an operator meets them: a rate-limited session, a failing agent, what
// `next`, `status`, `tick` and `run` say about it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const dispatch = (...agents: string[]) => `dispatch:\n${agents.map((a) => `  - agent: ${a}\n`).join('')}`;

describe('holds and backoff', () => {
  test('a 429 is rate_limited, counted, and holds the agent: tick runs the next rule, next and status say why, run by hand still runs', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: dispatch('limited', 'other') }));
    writeAgent(ws, 'limited', 'SCENARIO=err429');
    writeAgent(ws, 'other', 'SCENARIO=text');
    const { ran, record } = await runJson(ws, 'limited');
    assert.equal(ran.code, 1);
    assert.equal(record.outcome, 'rate_limited', ran.stderr);
    assert.match(record.error, /429/);
    assert.equal(ledgerRows(ws.dir).length, 1, 'counted in the ledger like any session');
    // `next` speaks of the timer's next tick: a timer each minute, so that tick comes within the hold (15m).
    const units = path.join(ws.dir, 'units');
    fs.mkdirSync(units);
    fs.writeFileSync(path.join(units, 'nightshift.timer'), '[Timer]\nOnCalendar=minutely\n');
    const next = JSON.parse((await nightshift(['next', '--json', '--prefix', units], ws.env, ws.dir)).stdout);
    assert.equal(next.calendar.source, 'timer');
    assert.equal(next.agent, 'other');
    assert.match(next.rules[0].why, /^held until \S+Z: rate limited \(no reset time given: backoff after 1 rate-limited session\)$/);
    assert.equal(next.holds.limited.kind, 'rate_limited');
    const status = await nightshift(['status'], ws.env, ws.dir);
    assert.match(status.stdout, /^held {6}limited until \d{4}-\d\d-\d\d \d\d:\d\d \S+: rate limited/m);
    const tick = JSON.parse((await nightshift(['tick', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(tick.session.agent, 'other', 'the tick skipped the held agent');
    const byHand = await runJson(ws, 'limited');
    assert.equal(byHand.record.outcome, 'rate_limited', 'run by hand still runs a held agent');
    assert.match(byHand.ran.stderr, /limited is held until \S+Z \(rate limited .*\): running it anyway, by hand/);
  });

  test('a 429 whose headers give a reset holds the agent until that reset, to the second (the proxy read it; the CLI\'s text is not asked)', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: dispatch('window', 'other') }));
    // Two hours on, in whole seconds: what a subscription's rejected window says.
    const reset = Math.floor(Date.now() / 1000) + 7200;
    writeAgent(ws, 'window', `SCENARIO=err429 RESET=${reset}`);
    writeAgent(ws, 'other', 'SCENARIO=text');
    const { ran, record } = await runJson(ws, 'window');
    assert.equal(record.outcome, 'rate_limited', ran.stderr.slice(-1500));
    const until = new Date(reset * 1000).toISOString();
    assert.equal(record.retry_at, until);
    assert.match(record.error, new RegExp(`^the API answered 429 \\(usage window rejected\\), until ${until.replace(/\./g, '\\.')}`));
    assert.match(ran.stderr, /"event":"api_limited".*"source":"anthropic-ratelimit-unified-reset"/);
    const next = JSON.parse((await nightshift(['next', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(next.holds.window.until, until.replace(/\.\d+Z$/, 'Z'));
    assert.equal(next.holds.window.reason, 'rate limited (the API gave this reset time)');
    assert.equal(next.agent, 'other');
  });

  test('three failures in a row back the agent off (tick skips it); fewer do not', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${dispatch('flaky')}backoff:\n  after_failures: 3\n  base: 2h\n` }));
    writeAgent(ws, 'flaky', 'SCENARIO=err400');
    for (let i = 0; i < 2; i++) assert.equal((await runJson(ws, 'flaky')).record.outcome, 'error');
    // Negative control: two failures hold nothing yet.
    assert.equal(JSON.parse((await nightshift(['next', '--json'], ws.env, ws.dir)).stdout).agent, 'flaky');
    const third = await runJson(ws, 'flaky');
    assert.match(third.ran.stderr, /flaky: backed off after 3 failures in a row, until \S+Z/);
    const next = JSON.parse((await nightshift(['next', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(next.agent, null);
    assert.match(next.rules[0].why, /^held until \S+Z: backed off after 3 failures in a row \(last: error\)$/);
    const until = Date.parse(next.holds.flaky.until);
    const last = Date.parse(ledgerRows(ws.dir).at(-1).ended_at);
    // `until` is printed to the second.
    assert.ok(Math.abs((until - last) / 1000 - 7200) <= 1, `one base (2h) after the last failure: ${next.holds.flaky.until} vs ${ledgerRows(ws.dir).at(-1).ended_at}`);
    const tick = JSON.parse((await nightshift(['tick', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(tick.action, 'skip');
    // The skip names the hold and its end; next says the agent runs at the first tick after it
    // ends (the default timer's: an hour's start), not now.
    assert.equal(tick.reason, `no rule is due: rule 0 (flaky) is held until ${next.holds.flaky.until}: backed off after 3 failures in a row (last: error)`);
    assert.equal(next.next_due.flaky, new Date(Math.ceil(until / 3_600_000) * 3_600_000).toISOString());
    assert.equal(ledgerRows(ws.dir).length, 3, 'the tick started nothing');
  });
});
