// The logger writes the lines pino wrote before it (journald's priorities, the human lines, the
// daily file and every reader of it parse them): pino itself is the oracle here, line for line.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { createLogger, silentLogger, type Logger } from '../../logs/logger.js';
import { tempDir } from '../helpers.js';

// Time and pid vary by the moment and the process, a stack by the line that called: each to one stand-in.
const norm = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"').replace(/"pid":\d+/, '"pid":1').replace(/logger\.test\.js:\d+:\d+/g, 'L');

function capture(make: (write: (l: string) => void) => Logger) {
  const lines: string[] = [];
  return { lines, log: make((l) => lines.push(l)) };
}

// The same calls on both: what nightshift logs (events, errors with causes and codes, child
// bindings, a message alone, fields alone, nested data, undefined fields).
function script(log: Logger) {
  log.info({ event: 'tick_start', trigger: 'hand' }, 'tick');
  log.warn('only a message');
  log.error({ event: 'x', n: 1.5, list: [1, 'a', null], nested: { a: { b: true } }, gone: undefined }, 'with "quotes" and \u001b and ü');
  const cause = Object.assign(new Error('inner'), { code: 'EACCES' });
  log.error({ event: 'internal_error', err: new Error('outer', { cause }) }, 'outer');
  log.error({ event: 'coded', err: Object.assign(new Error('disk'), { code: 'ENOSPC', path: '/srv/x', inner: new TypeError('nested') }) }, 'disk');
  log.error({ event: 'many', err: new AggregateError([new Error('a'), new RangeError('b')], 'both') }, 'aggregate');
  log.error(new Error('an error alone'));
  log.info({ event: 'no_msg' });
  log.debug({ event: 'hidden' }, 'dropped at info');
  const child = log.child({ sessionId: 'S1', agent: 'writer' });
  child.info({ event: 'in_session' }, 'child line');
  child.child({ component: 'mcp' }).warn({ event: 'deeper' }, 'grandchild');
}

test('every line is the one pino wrote for the same call', () => {
  const ours = capture((write) => createLogger({ redact: (t) => t, stderr: { write } }));
  const theirs = capture((write) => pino({ level: 'info', base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, { write }) as unknown as Logger);
  script(ours.log);
  script(theirs.log);
  assert.equal(ours.lines.length, 10);
  assert.deepEqual(ours.lines.map(norm), theirs.lines.map(norm));
  for (const l of ours.lines) JSON.parse(l);
});

test('each level lets through what pino let through, silent nothing', () => {
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']) {
    const ours = capture((write) => createLogger({ redact: (t) => t, stderr: { write }, level }));
    const theirs = capture((write) => pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, { write }) as unknown as Logger);
    for (const log of [ours.log, theirs.log]) for (const n of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) log[n]({ event: n }, n);
    assert.deepEqual(ours.lines.map(norm), theirs.lines.map(norm), level);
    assert.equal(ours.log.level, level);
  }
});

test('the level lets debug through when asked, and a cycle or a BigInt never throws', () => {
  const { lines, log } = capture((write) => createLogger({ redact: (t) => t, stderr: { write }, level: 'debug' }));
  log.debug({ event: 'shown' }, 'debug');
  log.trace({ event: 'hidden' }, 'trace');
  const loop: Record<string, unknown> = { a: 1 };
  loop.self = loop;
  log.info({ event: 'cyclic', loop, big: 10n }, 'odd data');
  assert.deepEqual(lines.map((l) => JSON.parse(l).event), ['shown', 'cyclic']);
  assert.deepEqual(JSON.parse(lines[1]).loop, { a: 1, self: '[Circular]' });
  assert.equal(JSON.parse(lines[1]).big, '10');
});

test('both sinks get each line through the redactor; the daily file keeps JSON; silent writes nothing', (t) => {
  const dir = tempDir(t);
  const lines: string[] = [];
  const log = createLogger({ redact: (s) => s.replaceAll('sk-test-secret', '[redacted]'), stderr: { write: (l) => lines.push(l) }, logDir: path.join(dir, 'logs'), timezone: 'UTC', now: () => new Date('2026-12-02T10:00:00Z') });
  log.warn({ event: 'leak', key: 'sk-test-secret' }, 'key sk-test-secret');
  const file = fs.readFileSync(path.join(dir, 'logs', '2026-12-02.log'), 'utf8');
  for (const text of [lines.join(''), file]) {
    assert.doesNotMatch(text, /sk-test-secret/);
    assert.equal(JSON.parse(text).msg, 'key [redacted]');
  }
  // Control: without the redactor the key is there.
  const bare: string[] = [];
  createLogger({ redact: (s) => s, stderr: { write: (l) => bare.push(l) } }).warn({ key: 'sk-test-secret' }, 'x');
  assert.match(bare[0], /sk-test-secret/);
  const silent = silentLogger();
  silent.error({ event: 'nothing' }, 'nothing');
  silent.child({ a: 1 }).fatal('nothing');
  assert.equal(silent.level, 'silent');
});

// Fields named for a secret are pino's to redact, even when the value is in no redactor's list
// (a key from somewhere other than the environment); the values themselves are redacted anywhere.
test("a field named for a secret is censored by pino's redaction, whatever its value", () => {
  const { lines, log } = capture((write) => createLogger({ redact: (t) => t, stderr: { write } }));
  const fields = { env: { ANTHROPIC_API_KEY: 'sk-not-in-env-1' }, headers: { authorization: 'Bearer tok-not-in-env-2', accept: 'json' }, DISCORD_WEBHOOK_URL: 'https://hook.example/not-in-env-3' };
  log.warn(fields, 'request');
  const line = JSON.parse(lines[0]);
  assert.deepEqual([line.env.ANTHROPIC_API_KEY, line.headers.authorization, line.DISCORD_WEBHOOK_URL, line.headers.accept], ['[redacted]', '[redacted]', '[redacted]', 'json']);
  assert.equal(fields.env.ANTHROPIC_API_KEY, 'sk-not-in-env-1', 'the caller\'s object is left as it was');
  // Control: pino without the redaction writes them.
  const theirs = capture((write) => pino({ base: { pid: process.pid } }, { write }) as unknown as Logger);
  theirs.log.warn(fields, 'request');
  assert.match(theirs.lines[0], /sk-not-in-env-1.*tok-not-in-env-2.*not-in-env-3/);
});
