// The one root logger: JSON lines to stderr (journald takes them as they are) and the same lines
// to `<log_dir>/YYYY-MM-DD.log`. Both are synchronous, so a short timer-launched run loses nothing
// at exit, and both pass through the secret redactor.
import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { dayOf } from '../budget/day.js';
import type { Redactor } from './redact.js';

export type { Logger };

type Sink = { write(line: string): void };

function redacting(dest: Sink, redact: Redactor): Sink {
  return { write: (line: string) => dest.write(redact(line)) };
}

export type LoggerOptions = {
  redact: Redactor;
  logDir?: string | null;
  timezone?: string;
  now?: Date;
  level?: string;
  stderr?: Sink;
};

export function dailyLogFile(logDir: string, timezone: string, now: Date): string {
  return path.join(logDir, `${dayOf(now, timezone)}.log`);
}

export function createLogger(o: LoggerOptions): Logger {
  const streams: Array<{ stream: Sink }> = [{ stream: redacting(o.stderr ?? pino.destination({ dest: 2, sync: true }), o.redact) }];
  if (o.logDir) {
    fs.mkdirSync(o.logDir, { recursive: true });
    const file = dailyLogFile(o.logDir, o.timezone ?? 'UTC', o.now ?? new Date());
    streams.push({ stream: redacting(pino.destination({ dest: file, sync: true, mkdir: true }), o.redact) });
  }
  return pino({ level: o.level ?? 'info', base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, pino.multistream(streams));
}
