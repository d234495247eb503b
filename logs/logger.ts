// The one root logger: JSON lines to stderr (journald takes them as they are) and the same lines
// to `<log_dir>/YYYY-MM-DD.log`. Both are synchronous, so a short timer-launched run loses nothing
// at exit, and both pass through the secret redactor.
import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { dayOf } from '../config/day.js';
import { giveToFolderOwner } from '../core/file-access.js';
import type { Redactor } from '../core/redact.js';
import { withPriority } from './journal.js';
import { humanLine } from './human.js';
import type { LiveLine } from './live-line.js';
import { terminalText } from './terminal-text.js';

export type { Logger };

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
  const stderr = o.stderr ?? pino.destination({ dest: 2, sync: true });
  const human = o.human;
  const toStderr: Sink = o.journal
    ? { write: (line: string) => stderr.write(withPriority(line)) }
    : human
      ? { write: (line: string) => (human.live ? human.live.around(() => stderr.write(`${humanLine(line, human)}\n`)) : stderr.write(`${humanLine(line, human)}\n`)) }
      : stderr;
  // Each stream at the logger's level: pino.multistream's own default is info, which dropped every
  // debug line whatever NIGHTSHIFT_LOG_LEVEL said.
  const level = o.level ?? 'info';
  const streams: Array<{ stream: Sink; level: string }> = [{ stream: redacting(toStderr, o.redact), level }];
  if (o.logDir) streams.push({ stream: redacting(new DailyFileSink(o.logDir, o.timezone ?? 'UTC', o.now), o.redact), level });
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, pino.multistream(streams as Parameters<typeof pino.multistream>[0]));
}
