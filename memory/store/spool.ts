// A durable spool beside the store, outside its lock: what could not be stored now (the store was
// locked or unavailable) is kept here, one JSONL file per batch, until a later start stores it.
// A batch is written whole or not at all (temporary file, fsync, rename, fsync of the folder), and
// named by time and sequence, so batches are read back oldest first.
import fs from 'node:fs';
import path from 'node:path';

export const spoolDir = (stateDir: string) => path.join(stateDir, 'memory-spool');

export type SpoolBatch<T> = { file: string; records: T[] };

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

let seq = 0;

// Writes one batch durably; returns its file.
export function spoolWrite<T>(dir: string, records: T[], at: Date, tag: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = `${String(at.getTime()).padStart(15, '0')}-${String(process.pid).padStart(7, '0')}-${String(seq++).padStart(6, '0')}-${tag.replace(/[^\w.-]/g, '_')}.jsonl`;
  const tmp = path.join(dir, `.${name}.tmp`);
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const file = path.join(dir, name);
  fs.renameSync(tmp, file);
  fsyncDir(dir);
  return file;
}

// The batches waiting, oldest first; a batch that cannot be parsed is named in `unreadable` and left.
export function spoolList<T>(dir: string): { batches: Array<SpoolBatch<T>>; unreadable: string[] } {
  const unreadable: string[] = [];
  const batches: Array<SpoolBatch<T>> = [];
  if (!fs.existsSync(dir)) return { batches, unreadable };
  for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl') && !n.startsWith('.')).sort()) {
    const file = path.join(dir, name);
    try {
      const records = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);
      batches.push({ file, records });
    } catch {
      unreadable.push(file);
    }
  }
  return { batches, unreadable };
}

// A batch wholly stored: gone, durably.
export function spoolRemove(file: string): void {
  fs.rmSync(file, { force: true });
  fsyncDir(path.dirname(file));
}
