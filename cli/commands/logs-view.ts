// `nightshift logs [-f]`: today's daily log (human lines at a terminal, JSON lines elsewhere);
// `nightshift logs SESSION [-f]`: that session's transcript as a conversation, followed while
// it runs. -f follows until Ctrl-C (the daily log moves on to the next day's file at midnight).
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import Database from 'better-sqlite3';
import path from 'node:path';
import { dayOf } from '../../config/day.js';
import { humanLine } from '../../logs/human.js';
import type { Logger } from '../../logs/logger.js';
import { terminalText } from '../../logs/terminal-text.js';
import { LineSplitter } from '../../sessions/stream/line-splitter.js';
import type { Config } from '../../config/schema.js';
import { EXIT, UsageError } from '../../core/errors.js';
import { viewLine } from '../transcript-view.js';
import { withLedger } from '../with-ledger.js';
import { didYouMean } from '../../core/suggest.js';

export type LogsDeps = { out: (text: string) => void; human: boolean; color: boolean; logger: Logger; signal: AbortSignal; pollMs?: number };

// The abort listener goes with the timer: one left behind on every poll passed node's limit of 10
// (MaxListenersExceededWarning after ~6 s of -f).
export const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve) => {
  if (signal.aborted) return resolve();
  const done = () => {
    clearTimeout(t);
    signal.removeEventListener('abort', done);
    resolve();
  };
  const t = setTimeout(done, ms);
  signal.addEventListener('abort', done, { once: true });
});

// Reads what was appended to `file` since `offset`; a missing file reads as nothing yet.
// One decoder per follow: a character split across two reads is joined, not mangled.
const decoder = new StringDecoder('utf8');
function readFrom(file: string, offset: number): { text: string; offset: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { text: '', offset };
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size < offset) offset = 0; // replaced or truncated: start again
    if (size === offset) return { text: '', offset };
    const buf = Buffer.alloc(size - offset);
    fs.readSync(fd, buf, 0, buf.length, offset);
    return { text: decoder.write(buf), offset: size };
  } finally {
    fs.closeSync(fd);
  }
}

export async function logsCommand(config: Config, positionals: string[], flags: { follow?: boolean }, d: LogsDeps): Promise<number> {
  const [id] = positionals;
  const show = (line: string) => {
    if (id) for (const l of viewLine(line)) d.out(l);
    // humanLine escapes what it shows; a JSON line keeps being JSON, C1 and bidi as `\u` escapes.
    else if (line.trim()) d.out(d.human ? humanLine(line, { color: d.color }) : terminalText(line));
  };
  let file: string;
  let running = () => true;
  if (id) {
    const row = await withLedger(config, d.logger, (l) => l.get(id));
    if (!row) {
      const near = await withLedger(config, d.logger, (l) => l.recent(200).map((r) => r.id));
      throw new UsageError(`No session \`${id}\` in the ledger.${didYouMean(id, near)} See \`nightshift sessions\`.`);
    }
    if (!row.transcript) throw new UsageError(`Session \`${id}\` has no transcript`);
    file = row.transcript;
    // A session is followed until the ledger settles it.
    running = () => withLedgerSync(config, id);
  } else {
    file = path.join(config.log_dir, `${dayOf(new Date(), config.budget.timezone)}.log`);
    if (!flags.follow && !fs.existsSync(file)) {
      d.out(`no log for today yet (${file})`);
      return EXIT.OK;
    }
  }
  const splitter = new LineSplitter();
  let offset = 0;
  for (;;) {
    const r = readFrom(file, offset);
    offset = r.offset;
    if (r.text) splitter.push(r.text, show);
    if (!flags.follow || d.signal.aborted) break;
    if (id && !running()) {
      // Settled: what it wrote last, then done.
      const last = readFrom(file, offset);
      if (last.text) splitter.push(last.text, show);
      break;
    }
    if (!id) {
      // Midnight: on to the new day's file.
      const today = path.join(config.log_dir, `${dayOf(new Date(), config.budget.timezone)}.log`);
      if (today !== file) [file, offset] = [today, 0];
    }
    await sleep(d.pollMs ?? 500, d.signal);
  }
  splitter.end(show);
  return EXIT.OK;
}

// Whether the session's row still says running (a short read-only look at the ledger).
function withLedgerSync(config: Config, id: string): boolean {
  // better-sqlite3 is synchronous: opened read-only, so a follower never takes a write lock.
  const db = new Database(path.join(config.state_dir, 'ledger.db'), { readonly: true, fileMustExist: true });
  try {
    const r = db.prepare('SELECT status FROM sessions WHERE id = ?').get(id) as { status: string } | undefined;
    return r?.status === 'running';
  } finally {
    db.close();
  }
}
