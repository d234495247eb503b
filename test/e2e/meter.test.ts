// The meter end to end, with the real CLI in its wall against the imitation API: the ledger's
// cost is what the API served (priced at the published prices written out here, from the
// imitation's own usage log, which counts input from each body), whatever
// the session calls around the CLI, compresses, or writes into the CLI's stream; and the day's cap
// holds across sessions.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { bash, text, type ServedRecord } from '../fake-api.js';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, runJson, workspace, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();
const CURL: string | false = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0 ? false : 'curl is not installed';

// Anthropic's published prices in USD per million tokens, written out here (not the meter's own
// table, which a wrong number there would then agree with): input, output; a 5-minute cache write
// is 1.25x input, a cache read 0.1x. These sessions ask for sonnet (the CLI's alias) and haiku.
const USD_PER_MTOK: Array<[RegExp, { input: number; output: number }]> = [
  [/sonnet/, { input: 3, output: 15 }],
  [/haiku/, { input: 1, output: 5 }],
];
function usdPerMtok(model: string) {
  const p = USD_PER_MTOK.find(([re]) => re.test(model))?.[1];
  assert.ok(p, `the test has no price for ${model}`);
  return p;
}
// What the imitation served, priced at those numbers from its own usage; `output: false` leaves the output out.
const priced = (s: ServedRecord[], o: { output?: boolean } = {}) =>
  s.reduce((sum, r) => {
    const p = usdPerMtok(r.model);
    const u = r.usage;
    return sum + (u.input_tokens * p.input + (u.cache_creation_input_tokens ?? 0) * p.input * 1.25 + (u.cache_read_input_tokens ?? 0) * p.input * 0.1 + (o.output === false ? 0 : u.output_tokens * p.output)) / 1e6;
  }, 0);
const logsOf = (ws: Workspace) =>
  fs.readdirSync(ws.logs, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.log')).map((e) => fs.readFileSync(path.join(e.parentPath ?? (e as any).path, e.name), 'utf8')).join('\n');

describe('the meter with the real CLI', () => {
  // Unwalled: in the wall no process but the CLI reaches the API at all (e2e/wall-redteam), so the
  // meter's count of calls around the CLI is what holds where a tool can reach the proxy.
  test('calls an unwalled session makes around the CLI (curl with its own token, one gzip stream, one JSON reply) are metered: the ledger equals the API\'s usage to the cent, the gzip bytes reach curl unchanged, and show gives the CLI\'s lower count beside it', { skip: CURL, timeout: 120_000 }, async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: 'sandbox: none\n' }));
    api.script('around-stream', () => ({ kind: 'message', blocks: [{ type: 'text', text: 'streamed around the CLI' }], usage: { input_tokens: 20_000, output_tokens: 900 } }));
    api.script('around-json', () => ({ kind: 'message', blocks: [{ type: 'text', text: 'answered around the CLI' }], usage: { input_tokens: 7000, output_tokens: 300 } }));
    const body = (scenario: string, stream: boolean) => JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 1000, stream, messages: [{ role: 'user', content: `SCENARIO=${scenario} COMPRESS=gzip` }] });
    const curl = (b: string, out: string) => `curl -s -o ${out} -w 'HTTP=%{http_code}\\n' -H "x-api-key: $ANTHROPIC_API_KEY" -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' -H 'accept-encoding: gzip' --data '${b}' "$ANTHROPIC_BASE_URL/v1/messages"`;
    const cmd = `${curl(body('around-stream', true), 's.bin')}; ${curl(body('around-json', false), 'j.bin')}; sha256sum s.bin`;
    api.script('meter-around', ({ turn, lastToolResult }) => (turn === 0 ? bash(cmd) : text(`curl said: ${lastToolResult}`)));
    writeAgent(ws, 'around', 'SCENARIO=meter-around', { allowed_tools: ['Bash'] });
    const n = api.served.length;
    const { ran, record } = await runJson(ws, 'around', [], { NIGHTSHIFT_LOG_LEVEL: 'debug' });
    assert.equal(record?.outcome, 'ok', ran.stderr);
    const served = api.served.slice(n);
    const stream = served.find((s) => s.prompt.includes('around-stream'));
    assert.ok(stream?.compressed && stream.stream, `the stream went gzip-compressed: served ${JSON.stringify(served.map((s) => [s.prompt.slice(0, 60), s.compressed]))}, tool said ${api.requests.at(-1)?.toolResult}`);
    assert.ok(served.find((s) => s.prompt.includes('around-json') && !s.stream), 'the JSON reply was served');
    assert.equal(served.length, 4, 'two turns of the CLI and two calls around it');
    const out = api.requests.at(-1)?.toolResult ?? '';
    assert.equal(out.match(/HTTP=200/g)?.length, 2, out);
    assert.ok(out.includes(stream.sha256), `Expected curl's bytes to hash as the imitation's (${stream.sha256}), got ${out}`);
    const row = ledgerRows(ws.dir).find((r) => r.id === record.id);
    const truth = priced(served);
    assert.equal(Math.round(row.cost_usd * 100), Math.round(truth * 100), `to the cent: ledger ${row.cost_usd}, served ${truth}`);
    assert.ok(Math.abs(row.cost_usd - truth) < 1e-9, `exactly: ledger ${row.cost_usd}, served ${truth}`);
    assert.equal(row.metered_calls, 4);
    assert.equal(record.cost_estimated, false);
    // The CLI counted only its own two turns.
    assert.ok(row.cli_cost_usd < truth - 0.05, `the CLI's own count ${row.cli_cost_usd} misses the calls around it (${truth})`);
    assert.match(logsOf(ws), /"level":20,[^\n]*"event":"cost_disagreement"/);
    const shown = await nightshift(['show', record.id], ws.env, ws.dir);
    assert.match(shown.stdout, new RegExp(`cost +\\$${truth.toFixed(2).replace('.', '\\.')} metered, \\$${row.cli_cost_usd.toFixed(2).replace('.', '\\.')} by the CLI's count`));
  });

  test('a stream whose cost the CLI reports low (message_delta restating a lower input count, which the CLI believes) does not lower the ledger\'s cost: the meter\'s wins', { timeout: 120_000 }, async (t) => {
    const ws = workspace(t, api.url);
    // The counts are cumulative: the meter keeps the larger of message_start's and message_delta's.
    api.script('lowball', () => ({ kind: 'message', blocks: [{ type: 'text', text: 'cheap, it says' }], usage: { input_tokens: 30_000, output_tokens: 500 }, deltaUsage: { input_tokens: 1 } }));
    writeAgent(ws, 'lowball', 'SCENARIO=lowball');
    const n = api.served.length;
    const { ran, record } = await runJson(ws, 'lowball', [], { NIGHTSHIFT_LOG_LEVEL: 'debug' });
    assert.equal(record.outcome, 'ok', ran.stderr);
    const truth = priced(api.served.slice(n));
    assert.ok(truth > 0.09, `the imitation served ${truth}`);
    const row = ledgerRows(ws.dir).find((r) => r.id === record.id);
    assert.ok(row.cli_cost_usd < 0.01, `Expected the CLI to report it low, got ${row.cli_cost_usd}`);
    assert.ok(Math.abs(row.cost_usd - truth) < 1e-9, `Expected the meter's ${truth}, got ${row.cost_usd}`);
    assert.equal(record.cost_usd, Math.round(truth * 1e6) / 1e6);
    assert.match(logsOf(ws), /"level":20,[^\n]*"event":"cost_disagreement"/);
  });

  test('a session that kills its own CLI before the result line is still counted at what the API served (the stream is a report, not the truth)', { timeout: 120_000 }, async (t) => {
    const ws = workspace(t, api.url);
    // Its stdout is a socket: a result line cannot be written into it through /proc (tried: ENXIO),
    // so a forgery has only this: end the CLI before it reports.
    const script = ['p=$$', 'while [ "$p" -gt 1 ]; do case "$(cat /proc/$p/comm)" in claude*) break;; esac; p=$(awk \'{print $4}\' /proc/$p/stat); done', 'kill -9 $p', ''].join('\n');
    const kill = `echo ${Buffer.from(script).toString('base64')} | base64 -d > kill.sh && sh kill.sh`;
    api.script('self-kill', ({ turn }) => (turn === 0 ? { ...bash(kill), usage: { input_tokens: 30_000, output_tokens: 500 } } : text('not reached')));
    writeAgent(ws, 'killer', 'SCENARIO=self-kill', { allowed_tools: ['Bash'] });
    const n = api.served.length;
    const { record } = await runJson(ws, 'killer');
    const truth = priced(api.served.slice(n));
    const row = ledgerRows(ws.dir).find((r) => r.id === record.id);
    assert.equal(row.cli_cost_usd, null, 'the CLI reported nothing');
    assert.ok(truth > 0.09 && Math.abs(row.cost_usd - truth) < 1e-9, `Expected the meter's ${truth}, got ${row.cost_usd}`);
  });

  test('spenders end to end: sessions reserve what is left of a small day, the proxy lowers their calls to fit, and what the API served stays within one request\'s input of the cap; then run exits 75', { timeout: 300_000 }, async (t) => {
    // The CLI's own first call is ~130 KB, whose input alone is estimated at ~$0.16 on sonnet.
    const cap = 1.2;
    const ws = workspace(t, api.url, configYaml({ claude: { max_turns: 30 }, budget: { max_usd_per_day: cap, max_usd_per_session: 0.5, min_session_usd: 0.2 } }));
    // 40k output tokens asked a call: every call wants more than any reservation here holds.
    api.script('spend-e2e', ({ turn }) => ({ ...bash(`echo spent-${turn}`), usage: { input_tokens: 1000, output_tokens: 40_000 } }));
    writeAgent(ws, 'spender', 'SCENARIO=spend-e2e');
    const n = api.served.length;
    const records = [];
    let last = null;
    for (let i = 0; i < 6; i++) {
      last = await nightshift(['run', 'spender', '--json'], ws.env, ws.dir);
      if (last.code === 75) break;
      records.push(JSON.parse(last.stdout));
    }
    assert.equal(last?.code, 75, `Expected a budget skip at last, got ${last?.code}: ${last?.stderr}`);
    assert.match(last!.stderr, /budget\.min_session_usd/);
    assert.ok(records.length >= 2, `${records.length} sessions ran`);
    for (const r of records) assert.equal(r.outcome, 'budget', JSON.stringify(r));
    const served = api.served.slice(n);
    const truth = priced(served);
    const maxInput = Math.max(...served.map((s) => priced([s], { output: false })));
    t.diagnostic(`${records.length} sessions, ${served.length} calls: served $${truth.toFixed(4)} against a cap of $${cap}`);
    assert.ok(truth <= cap + maxInput, `served $${truth} against $${cap} (one input: $${maxInput})`);
    assert.ok(truth > cap * 0.5, `the day was used: $${truth}`);
    const rows = ledgerRows(ws.dir);
    assert.ok(Math.abs(rows.reduce((s, r) => s + r.cost_usd, 0) - truth) < 0.01, 'the ledger holds what was served');
    const budget = JSON.parse((await nightshift(['budget', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(budget.reserved_usd, 0);
    assert.ok(budget.left_usd < 0.2, `below min_session_usd: ${budget.left_usd}`);
  });
});

describe('subscription usage windows', () => {
  const gitOff = 'git:\n  enabled: false\n';
  const reset = Math.floor(Date.now() / 1000) + 3 * 3600;
  test('windows at 85% with the limit at 80%: the next tick starts nothing and says why, with the reset; run refuses with 75; budget shows it', { timeout: 120_000 }, async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: windowed\n` }));
    writeAgent(ws, 'windowed', `SCENARIO=text WINDOW5H=0.85 RESET5H=${reset} WINDOW7D=0.3`);
    const first = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(JSON.parse(first.stdout).session?.outcome, 'ok', first.stderr);
    const second = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(second.code, 0);
    const r = JSON.parse(second.stdout);
    assert.equal(r.action, 'skip');
    const until = new Date(reset * 1000).toISOString();
    assert.equal(r.reason, `budget.max_window_utilization: the 5h usage window is at 85% (unattended sessions may use 80%); it resets at ${until}`);
    assert.equal(ledgerRows(ws.dir).length, 1, 'nothing started');
    const byHand = await nightshift(['run', 'windowed'], ws.env, ws.dir);
    assert.equal(byHand.code, 75);
    assert.match(byHand.stderr, /the 5h usage window is at 85%/);
    const shown = await nightshift(['budget'], ws.env, ws.dir);
    assert.match(shown.stdout, new RegExp(`5h +85% used \\(limit 80%\\), resets ${until.replace(/\./g, '\\.')}`));
    assert.match(shown.stdout, /7d +30% used/);
    assert.match(shown.stdout, /no session starts: budget\.max_window_utilization/);
    const status = await nightshift(['status'], ws.env, ws.dir);
    assert.match(status.stdout, new RegExp(`window +5h +85% used \\(limit 80%\\), resets ${until.replace(/\./g, '\\.')}`));
    assert.match(status.stdout, /held +every agent: budget\.max_window_utilization/);
    const next = JSON.parse((await nightshift(['next', '--json'], ws.env, ws.dir)).stdout);
    assert.equal(next.window_hold?.until, until);
    const json = JSON.parse((await nightshift(['budget', '--json'], ws.env, ws.dir)).stdout);
    assert.deepEqual(json.windows.map((x: any) => [x.name, x.utilization, x.resets_at]), [['5h', 0.85, until], ['7d', 0.3, null]]);
  });

  test('windows at 50%: the next tick runs', { timeout: 120_000 }, async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}dispatch:\n  - agent: roomy\n` }));
    writeAgent(ws, 'roomy', `SCENARIO=text WINDOW5H=0.5 RESET5H=${reset}`);
    for (let i = 0; i < 2; i++) {
      const ran = await nightshift(['tick', '--json'], ws.env, ws.dir);
      assert.equal(JSON.parse(ran.stdout).session?.outcome, 'ok', ran.stdout + ran.stderr);
    }
  });
});
