// What the operator sees on a day of use (issue 29): doctor with a broken config, human lines at a
// terminal, config typos, `logs -f` stopped with Ctrl-C.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { acquireLock } from '../../../core/lock.js';
import { loadConfig } from '../../../config/config.js';
import { dayOf } from '../../../config/day.js';
import { BIN, configYaml, nightshift, startNightshift, waitFor, workspace, writeAgent } from '../../helpers.js';

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
  // Following (its Ctrl-C handler in place) once it has shown the day's first line.
  const day = path.join(ws.logs, `${dayOf(new Date(), loadConfig(ws.config).budget.timezone)}.log`);
  fs.writeFileSync(day, `${JSON.stringify({ level: 30, time: Date.now(), msg: 'a line before the follower' })}\n`);
  await waitFor(() => out.includes('a line before the follower'), 10_000, 'logs -f to show the day\'s line');
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
    // doctor says it in its table (its own check, env), status in a log line.
    assert.match(r.shown, args[0] === 'doctor' ? /^WARN {2}env +.*nightshift\.env: lines skipped/m : /^\d\d:\d\d:\d\d warn +.*nightshift\.env: lines skipped/m, `${args[0]}: ${r.shown}`);
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

test('at a terminal, doctor\'s table is the one place each check is said; piped or --json, stderr keeps a log line per check', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml());
  writeAgent(ws, 'gardener', 'SCENARIO=text');
  const json = await nightshift(['doctor', '--json'], ws.env, ws.dir);
  const said: string[] = JSON.parse(json.stdout).checks.filter((c: any) => c.status !== 'ok').map((c: any) => c.name);
  assert.ok(said.length >= 2, `some checks fail or warn here (the API at :9 is shut): ${json.stdout}`);
  // Piped (as the watch's journal has it) and with --json: a log line per failing or warning check on stderr.
  const piped = await nightshift(['doctor'], ws.env, ws.dir);
  for (const name of said) {
    assert.match(piped.stdout, new RegExp(`^(?:FAIL|WARN) {2}${name} `, 'm'), name);
    for (const r of [piped, json]) assert.match(r.stderr, new RegExp(`"msg":"doctor: ${name}: `), name);
  }
  const shown = (await atTerminal(['doctor'], ws.env, ws.dir)).shown;
  for (const name of said) {
    assert.equal(shown.match(new RegExp(`^(?:FAIL|WARN) {2}${name} `, 'gm'))?.length, 1, `${name} in the table:\n${shown}`);
    assert.doesNotMatch(shown, new RegExp(`doctor: ${name}: `), `${name} said once, in the table:\n${shown}`);
  }
  // The daily file still has them, from each of the three runs.
  const log = fs.readdirSync(ws.logs).map((f) => fs.readFileSync(path.join(ws.logs, f), 'utf8')).join('');
  for (const name of said) assert.equal(log.split('\n').filter((l) => l.includes(`"msg":"doctor: ${name}: `)).length, 3, name);
});
