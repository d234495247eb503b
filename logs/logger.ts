// The one root logger: JSON lines to stderr (journald takes them as they are) and the same lines
// to `<log_dir>/YYYY-MM-DD.log`. Both are synchronous, so a short timer-launched run loses nothing
// at exit, and both pass through the secret redactor.
import fs from 'node:fs';
import path from 'node:path';
import { dayOf } from '../config/day.js';
import { giveToFolderOwner } from '../core/file-access.js';
import type { Redactor } from '../core/redact.js';
import { withPriority } from './journal.js';
import { humanLine } from './human.js';
import type { LiveLine } from './live-line.js';
import { terminalText } from './terminal-text.js';

// The levels and their numbers as journald, the human lines and every reader of the daily file
// know them (`{"level":30,"time":…,"pid":…,…,"msg":…}`, the shape pino wrote).
const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
type LevelName = keyof typeof LEVELS;

type LogFn = { (obj: object, msg?: string): void; (msg: string): void };
export type Logger = { [K in LevelName]: LogFn } & { readonly level: string; child(bindings: Record<string, unknown>): Logger };

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

// An Error as pino's serializer gave it: its type, its message and stack each followed by its
// causes', then its own fields (an error among them serialized the same way).
const errorLike = (v: unknown): v is Error => !!v && typeof (v as Error).message === 'string';
const causeOf = (e: Error): Error | undefined => {
  const c = typeof e.cause === 'function' ? (e.cause as () => unknown)() : e.cause;
  return errorLike(c) ? c : undefined;
};
function withCauses(e: Error, seen: Set<Error>, part: 'message' | 'stack', skip = false): string {
  const own = part === 'stack' ? e.stack || '' : skip ? '' : e.message || '';
  if (seen.has(e)) return own + (part === 'stack' ? '\ncauses have become circular...' : ': ...');
  const cause = causeOf(e);
  if (!cause) return own;
  seen.add(e);
  if (part === 'stack') return `${own}\ncaused by: ${withCauses(cause, seen, part)}`;
  const vErrorStyle = typeof e.cause === 'function';
  return own + (vErrorStyle ? '' : ': ') + withCauses(cause, seen, part, vErrorStyle);
}
function errFields(e: Error, inside = new Set<Error>()): Record<string, unknown> {
  inside.add(e);
  const out: Record<string, unknown> = {
    type: typeof e.constructor === 'function' ? e.constructor.name : e.name,
    message: withCauses(e, new Set(), 'message'),
    stack: withCauses(e, new Set(), 'stack'),
  };
  const errors = (e as { errors?: unknown }).errors;
  if (Array.isArray(errors)) out.aggregateErrors = errors.map((x) => (errorLike(x) ? errFields(x, inside) : x));
  for (const k in e) {
    if (out[k] !== undefined) continue;
    const v = (e as unknown as Record<string, unknown>)[k];
    if (!errorLike(v)) out[k] = v;
    else if (k !== 'cause' && !inside.has(v)) out[k] = errFields(v, inside);
  }
  inside.delete(e);
  return out;
}

// JSON that never throws: a cycle is `"[Circular]"`, a BigInt its digits.
function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(v, (_k, x) => {
      if (typeof x === 'bigint') return x.toString();
      if (typeof x === 'object' && x !== null) {
        if (seen.has(x)) return '[Circular]';
        seen.add(x);
      }
      return x;
    });
  }
}

// The fields of an object as `,"k":v` (undefined left out, as JSON.stringify does), `err` serialized.
function fieldsOf(obj: Record<string, unknown>): string {
  let out = '';
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out += `,${JSON.stringify(k)}:${safeJson(k === 'err' && errorLike(v) ? errFields(v) : v)}`;
  }
  return out;
}

function makeLogger(min: number, level: string, head: string, write: (line: string) => void, bound = ''): Logger {
  const fn = (n: number): LogFn =>
    n < min
      ? () => {}
      : (a: object | string, msg?: string) => {
          let fields = bound;
          let text = msg;
          if (typeof a === 'string') text = a;
          else if (a instanceof Error) fields += fieldsOf({ err: a }), (text ??= a.message);
          else if (a && typeof a === 'object') fields += fieldsOf(a as Record<string, unknown>);
          write(`${head.replace('%L', String(n)).replace('%T', new Date().toISOString())}${fields}${text === undefined ? '' : `,"msg":${JSON.stringify(String(text))}`}}\n`);
        };
  const logger = {
    level,
    child: (bindings: Record<string, unknown>) => makeLogger(min, level, head, write, bound + fieldsOf(bindings)),
  } as Logger;
  for (const [name, n] of Object.entries(LEVELS)) logger[name as LevelName] = fn(n);
  return logger;
}

type Sink = { write(line: string): void };

// pino's JSON already writes C0 controls as `\u001b`; C1, bidi and the invisible format characters
// get the same treatment here, so `journalctl`, `tail` of the daily file and the human lines never
// carry a session's raw escape (the JSON means the same).
function redacting(dest: Sink, redact: Redactor): Sink {
  return { write: (line: string) => dest.write(terminalText(redact(line), { block: true })) };
}

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
  const sinks: Sink[] = [redacting(toStderr, o.redact)];
  if (o.logDir) sinks.push(redacting(new DailyFileSink(o.logDir, o.timezone ?? 'UTC', o.now), o.redact));
  // `silent` (NIGHTSHIFT_LOG_LEVEL may say it) writes nothing, as pino's did.
  const level = o.level === 'silent' || (o.level && Object.hasOwn(LEVELS, o.level)) ? o.level : 'info';
  return makeLogger(level === 'silent' ? Infinity : LEVELS[level as LevelName], level, `{"level":%L,"time":"%T","pid":${process.pid}`, (line) => {
    for (const s of sinks) s.write(line);
  });
}

// A logger that writes nothing, for the git helpers whose own lines nobody reads (status, doctor).
export function silentLogger(): Logger {
  return makeLogger(Infinity, 'silent', '', () => {});
}
