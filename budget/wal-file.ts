// One SQLite file of the budget floor (the ledger, the fires), opened the one way both need: WAL,
// a busy timeout, NORMAL sync (what must survive a power cut is written FULL by its owner), a WAL
// truncated back after each checkpoint, and an open error named by its real cause.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { InternalError, PermissionError } from '../core/errors.js';
import { accessProblem } from '../core/file-access.js';

// label: how the message names the file ("Ledger"); what: its name for the access advice;
// damaged: what to say of a file that is no database or a damaged one.
export function openWalFile(file: string, o: { label: string; what: string; damaged: string; prepare: (db: Database.Database) => void }): Database.Database {
  let db: Database.Database | undefined;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    db = new Database(file);
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`journal_size_limit = ${256 * 1024}`);
    o.prepare(db);
    return db;
  } catch (err) {
    db?.close();
    const denied = accessProblem(file, o.what);
    if (denied) throw new PermissionError(denied, { cause: err });
    const code = (err as { code?: string }).code ?? '';
    // Only a file that is not a database (or a damaged one) is worth moving aside.
    const damaged = code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' ? ` ${o.damaged}` : '';
    throw new InternalError(`${o.label} ${file} cannot be opened (${code || (err as Error).message}).${damaged}`, { cause: err });
  }
}
