// The one root logger, pino: JSON lines to stderr (journald takes them as they are) and the same
// lines to `<log_dir>/YYYY-MM-DD.log`. Both are synchronous, so a short timer-launched run loses
// nothing at exit, and both pass through the secret redactor.
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { dayOf } from '../config/day.js';
import { giveToFolderOwner } from '../core/file-access.js';
import { REDACTED, SECRET_NAMES, type Redactor } from '../core/redact.js';
import { withPriority } from './journal.js';
import { humanLine } from './human.js';
import type { LiveLine } from './live-line.js';
import { terminalText } from './terminal-text.js';

export type Logger = pino.Logger;

// Synchronous, whole lines to fd 2: a short timer-launched run loses nothing at exit. A pipe
// node made non-blocking answers EAGAIN while full: wait a moment and write the rest.
function writeStderr(line: string): void {
  let buf = Buffer.from(line);
  for (let tries = 0; buf.length && tries < 1000; ) {
    try {
      const n = fs.writeSync(2, buf);
      buf = buf.subarray(n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      tries++;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

// A BigInt as its digits in a string (pino writes a bare number, which a reader's JSON.parse
// rounds past 2^53), at any depth; an object without one is passed on as it is.
function bigintsAsDigits(v: unknown, seen = new WeakSet<object>()): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (!v || typeof v !== 'object' || v instanceof Error || seen.has(v)) return v;
  seen.add(v);
  let out = v as Record<string, unknown>;
  for (const [k, x] of Object.entries(v)) {
    const y = bigintsAsDigits(x, seen);
    if (y === x) continue;
    if (out === v) out = Array.isArray(v) ? ([...v] as unknown as Record<string, unknown>) : { ...v };
    out[k] = y;
  }
  return out;
}

// A secret's field, by its name, as pino's own redaction takes it: at the top, in an `env`, and a
// request's credential headers. (No wildcard: pino's redaction copies the whole object for one,
// and a cycle in it then shows a level deeper.) The values are redacted anywhere in the line too
// (core/redact.ts): a key can turn up inside any string.
const REDACT_PATHS = [
  ...SECRET_NAMES.flatMap((n) => [n, `env.${n}`]),
  ...['authorization', 'x-api-key', 'cookie'].map((h) => `headers["${h}"]`),
];

type Sink = { write(line: string): void };

export type LoggerOptions = {
  redact: Redactor;
  logDir?: string | null;
  timezone?: string;
  now?: () => Date;
  level?: string;
  stderr?: Sink;
  // stderr is the journal: each stderr line gets its syslog priority prefix (logs/journal.ts).
  journal?: boolean;
  // stderr is a terminal (and not --json): short human lines there, around the live line if any.
  // The daily file keeps JSON either way.
  human?: { color: boolean; live?: LiveLine | null };
};

// Appends each line to the file of the day it is written on, so a daemon that runs for weeks
// still writes one file per day. Synchronous: a line is on disk before the write returns.
export class DailyFileSink implements Sink {
  private day: string | null = null;
  private fd: number | null = null;
  constructor(private readonly logDir: string, private readonly timezone: string, private readonly now: () => Date = () => new Date()) {
    const made = fs.mkdirSync(logDir, { recursive: true });
    if (made) giveToFolderOwner(made);
  }

  // A full disk must not turn a log line into a crash that leaves a session unsettled: the line
  // still reaches stderr (journald), and the failure is reported there once per day file.
  private failed: string | null = null;
  write(line: string): void {
    try {
      const day = dayOf(this.now(), this.timezone);
      if (day !== this.day || this.fd === null) {
        if (this.fd !== null) fs.closeSync(this.fd);
        this.fd = null;
        const file = path.join(this.logDir, `${day}.log`);
        this.fd = fs.openSync(file, 'a');
        giveToFolderOwner(file, this.fd);
        this.day = day;
      }
      fs.writeSync(this.fd, line);
      this.failed = null;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      if (this.failed === code) return;
      this.failed = code;
      try {
        process.stderr.write(`${JSON.stringify({ level: 40, event: 'log_file_failed', dir: this.logDir, code, msg: `cannot write the daily log file: ${code}` })}\n`);
      } catch {
        // stderr gone too: nothing left to tell
      }
    }
  }
}

export function createLogger(o: LoggerOptions): Logger {
  const stderr = o.stderr ?? { write: writeStderr };
  const human = o.human;
  const toStderr: Sink = o.journal
    ? { write: (line: string) => stderr.write(withPriority(line)) }
    : human
      ? { write: (line: string) => (human.live ? human.live.around(() => stderr.write(`${humanLine(line, human)}\n`)) : stderr.write(`${humanLine(line, human)}\n`)) }
      : stderr;
  const sinks: Sink[] = [toStderr];
  if (o.logDir) sinks.push(new DailyFileSink(o.logDir, o.timezone ?? 'UTC', o.now));
  // An unknown level is info (cli/log-level.ts warns of it); `silent` writes nothing.
  const level = o.level && (o.level === 'silent' || Object.hasOwn(pino.levels.values, o.level)) ? o.level : 'info';
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      formatters: { log: (obj) => bigintsAsDigits(obj) as Record<string, unknown> },
      // The line as pino made it, through the secret redactor, once for both sinks. pino's JSON
      // already writes C0 controls as `\u001b`; C1, bidi and the invisible format characters get the
      // same here, so `journalctl`, `tail` of the daily file and the human lines never carry a
      // session's raw escape (the JSON means the same).
      hooks: { streamWrite: (line) => terminalText(o.redact(line), { block: true }) },
    },
    { write: (line: string) => sinks.forEach((s) => s.write(line)) },
  );
}

// A logger that writes nothing, for the git helpers whose own lines nobody reads (status, doctor).
export function silentLogger(): Logger {
  return pino({ level: 'silent' }, { write: () => {} });
}
