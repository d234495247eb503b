import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { prefixLines, stderrIsJournal, syslogPriority, withPriority } from '../../logs/journal.js';
import { createLogger } from '../../logs/logger.js';
import { BIN, tempDir } from '../helpers.js';

test('pino levels map to syslog priorities', () => {
  const table: Array<[number, number]> = [[10, 7], [20, 7], [30, 6], [40, 4], [50, 3], [60, 2]];
  for (const [level, prio] of table) assert.equal(syslogPriority(level), prio, `level ${level}`);
  assert.equal(withPriority('{"level":50,"msg":"x"}\n'), '<3>{"level":50,"msg":"x"}\n');
  assert.equal(withPriority('not json\n'), '<6>not json\n');
  assert.equal(prefixLines('a\nb\n', 3, true), '<3>a\n<3>b\n');
  assert.equal(prefixLines('a\nb\n', 3, false), 'a\nb\n');
});

test('stderr is the journal only when JOURNAL_STREAM names its device and inode', () => {
  const fstat = () => ({ dev: 25, ino: 4242 });
  assert.equal(stderrIsJournal('25:4242', fstat), true);
  assert.equal(stderrIsJournal('25:4243', fstat), false);
  assert.equal(stderrIsJournal(undefined, fstat), false);
  assert.equal(stderrIsJournal('garbage', fstat), false);
});

test('the logger prefixes stderr lines for the journal and keeps the daily file plain', (t) => {
  const dir = tempDir(t);
  const lines: string[] = [];
  const logger = createLogger({ redact: (s) => s, logDir: dir, level: 'trace', journal: true, stderr: { write: (l) => void lines.push(l) } });
  logger.error('e');
  logger.warn('w');
  logger.info('i');
  assert.deepEqual(lines.map((l) => l.slice(0, 3)), ['<3>', '<4>', '<6>']);
  const file = fs.readFileSync(path.join(dir, fs.readdirSync(dir)[0]), 'utf8').trim().split('\n');
  assert.equal(file.length, 3);
  for (const l of file) assert.doesNotThrow(() => JSON.parse(l));
});

test('the logger\'s level reaches both of its streams: at debug the debug lines are written, at info they are not', (t) => {
  for (const level of ['debug', 'info'] as const) {
    const dir = tempDir(t);
    const lines: string[] = [];
    const logger = createLogger({ redact: (s) => s, logDir: dir, level, stderr: { write: (l) => void lines.push(l) } });
    logger.debug({ event: 'probe_debug' }, 'd');
    logger.trace({ event: 'probe_trace' }, 't');
    logger.info({ event: 'probe_info' }, 'i');
    const file = fs.readFileSync(path.join(dir, fs.readdirSync(dir)[0]), 'utf8').trim().split('\n').map((l) => JSON.parse(l).event);
    const said = lines.map((l) => JSON.parse(l).event);
    const want = level === 'debug' ? ['probe_debug', 'probe_info'] : ['probe_info'];
    assert.deepEqual(file, want, `the daily file at ${level}`);
    assert.deepEqual(said, want, `stderr at ${level}`);
  }
});

// Runs the real CLI with stderr on a pipe; `journal` makes JOURNAL_STREAM name that very pipe, as
// systemd does for a unit whose stderr is the journal.
function run(args: string[], cwd: string, journal: 'match' | 'other' | 'unset'): Promise<{ code: number | null; stderr: string }> {
  const set = journal === 'match' ? 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); export JOURNAL_STREAM; ' : journal === 'other' ? 'export JOURNAL_STREAM=1:1; ' : '';
  const child = spawn('sh', ['-c', `${set}exec "${process.execPath}" "${BIN}" "$@"`, 'sh', ...args], { cwd, env: { PATH: process.env.PATH, HOME: cwd }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

test('with JOURNAL_STREAM naming stderr, every stderr line of the CLI carries its priority; the daily file none', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'claude:\n  timeout: forever\n');
  const r = await run(['doctor', '--config', 'nightshift.yaml'], dir, 'match');
  assert.equal(r.code, 1);
  const lines = r.stderr.trim().split('\n');
  assert.ok(lines.length >= 3, r.stderr);
  for (const l of lines) {
    const m = /^<(\d)>(\{.*\})$/.exec(l);
    assert.ok(m, `no priority prefix: ${l}`);
    assert.equal(Number(m[1]), syslogPriority(JSON.parse(m[2]).level));
  }
  assert.ok(lines.some((l) => l.startsWith('<3>')) && lines.some((l) => l.startsWith('<4>')) && lines.some((l) => l.startsWith('<6>')));
  const logs = path.join(dir, 'logs');
  for (const f of fs.readdirSync(logs)) for (const l of fs.readFileSync(path.join(logs, f), 'utf8').trim().split('\n')) assert.match(l, /^\{/);
  // A plain-text error before any logger exists is prefixed too.
  const bad = await run(['status', '--config', 'nightshift.yaml'], dir, 'match');
  assert.equal(bad.code, 78);
  for (const l of bad.stderr.trim().split('\n')) assert.match(l, /^<3>/);
});

test('without JOURNAL_STREAM, or when it names another stream, no line carries a prefix', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'claude:\n  timeout: forever\n');
  for (const mode of ['unset', 'other'] as const) {
    const r = await run(['doctor', '--config', 'nightshift.yaml'], dir, mode);
    assert.equal(r.code, 1);
    for (const l of r.stderr.trim().split('\n')) assert.match(l, /^\{/, `${mode}: ${l}`);
  }
});
