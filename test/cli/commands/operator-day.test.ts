// What the operator sees on a day of use (issue 29): doctor with a broken config, human lines at a
// terminal, config typos, `logs -f` stopped with Ctrl-C.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { acquireLock } from '../../../daemon/lock.js';
import { BIN, configYaml, startNightshift, workspace, writeAgent } from '../../helpers.js';

// Runs the built CLI with a terminal for stdin, stdout and stderr (util-linux `script`), as an
// operator's shell would; returns what the terminal showed and the exit code.
function atTerminal(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; shown: string }> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const child = spawn('script', ['-qec', [process.execPath, BIN, ...args].map(quote).join(' '), '/dev/null'], { env: { ...env, SHELL: '/bin/sh', NO_COLOR: '1' }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let shown = '';
  child.stdout.on('data', (c) => (shown += c));
  child.stderr.on('data', (c) => (shown += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, shown: shown.replace(/\r/g, '') })));
}

test('`logs -f` stopped with Ctrl-C writes nothing into the log it follows', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml());
  fs.mkdirSync(ws.logs);
  const { child, done } = startNightshift(['logs', '-f'], ws.env, ws.dir, t);
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  // The follower is running once the day's file exists to be followed (or a moment has passed).
  await new Promise((r) => setTimeout(r, 1500));
  child.kill('SIGINT');
  const ran = await done;
  assert.equal(ran.code, 0, ran.stderr);
  const files = fs.readdirSync(ws.logs).filter((f) => f.endsWith('.log'));
  const text = files.map((f) => fs.readFileSync(path.join(ws.logs, f), 'utf8')).join('');
  assert.doesNotMatch(text, /received SIGINT/, `the daily log: ${text}`);
  assert.match(ran.stderr, /received SIGINT/, 'the terminal still hears of it');
});

test('at a terminal, doctor and status write human lines; a refusal is one line', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml());
  writeAgent(ws, 'gardener', 'SCENARIO=text');
  // A line the env file skips: the warning every command gives.
  fs.writeFileSync(path.join(ws.dir, 'nightshift.env'), 'NOT A LINE\n', { mode: 0o600 });
  for (const args of [['doctor'], ['status']]) {
    const r = await atTerminal(args, ws.env, ws.dir);
    assert.doesNotMatch(r.shown, /\{"level":/, `${args[0]}: ${r.shown}`);
    assert.match(r.shown, /^\d\d:\d\d:\d\d warn +.*nightshift\.env: lines skipped/m, `${args[0]}: ${r.shown}`);
  }
  // Control: with --json the same warning stays JSON, for machines.
  assert.match((await atTerminal(['status', '--json'], ws.env, ws.dir)).shown, /\{"level":40/);
  const held = await acquireLock(path.join(ws.state, 'run'), { timeoutMs: 0, purpose: 'test' });
  t.after(() => held?.release());
  const r = await atTerminal(['run', 'gardener'], ws.env, ws.dir);
  assert.equal(r.code, 75, r.shown);
  assert.equal(r.shown.match(/locked: another supervisor is running/g)?.length, 1, r.shown);
  assert.match(r.shown, /^\d\d:\d\d:\d\d warn +Refused: locked/m);
});

test('status: one time form with its zone, "12m ago" not "0h ago", "1 turn", cents, aligned columns', async (t) => {
  const { Ledger } = await import('../../../budget/ledger.js');
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml({ budget: { timezone: 'Europe/Berlin' } }));
  writeAgent(ws, 'gardener', 'SCENARIO=text');
  const started = new Date(Date.now() - 13 * 60_000);
  const l = Ledger.open(path.join(ws.state, 'ledger.db'));
  for (const [id, turns, cost] of [['s-one', 1, 0.0135], ['s-two', 12, 1.5]] as const) {
    const open = { id, agent: 'gardener', day: started.toISOString().slice(0, 10), started_at: started.toISOString(), transcript: null, model: 'sonnet', supervisor_pid: null, supervisor_start: null };
    l.open(open);
    l.settle(open, { outcome: 'ok', ended_at: new Date(started.getTime() + 60_000).toISOString(), duration_ms: 60_000, cost_usd: cost, cost_estimated: false, turns, exit_code: 0, result: null, error: null, input_tokens: 0, output_tokens: 0 });
  }
  l.close();
  const r = await (await import('../../helpers.js')).nightshift(['status'], ws.env, ws.dir);
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout;
  assert.match(out, /^last ok +12m \d\ds ago \(\d{4}-\d\d-\d\d \d\d:\d\d (CET|CEST|GMT\+1|GMT\+2)\)$/m, out);
  assert.doesNotMatch(out, /\b0h ago|\d{4}-\d\d-\d\dT\d\d:/, 'no hours rounded to 0, no ISO instant');
  assert.match(out, /\$\d+\.\d\d of \$20\.00/, 'the day in cents beside the limit');
  assert.doesNotMatch(out, /\$\d+\.\d{3}/, 'never four places');
  assert.match(out, / 1 turn /);
  assert.match(out, / 12 turns /);
  // Aligned: every value of the top block starts at one column.
  const top = out.split('\n\n')[0].split('\n');
  assert.equal(new Set(top.map((line) => /^\S+(?: \S+)? +/.exec(line)![0].length)).size, 1, out);
  const rows = out.split('\n').filter((line) => /s-(one|two)/.test(line));
  assert.equal(new Set(rows.map((line) => line.indexOf('s-'))).size, 1, out);
});
