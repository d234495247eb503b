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
    // SQLite opens a file it may not write read-only without a word, and the first write then fails
    // as "attempt to write a readonly database" (root's ledger in the service user's state_dir):
    // refused here instead, so the message names the file, its owner and the fix.
    fs.accessSync(file, fs.constants.W_OK);
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`journal_size_limit = ${256 * 1024}`);
    o.prepare(db);
    return db;
  } catch (err) {
    db?.close();
    throw openError(file, o, err);
  }
}

// A look that writes nothing (status, sessions, next…): an existing file opened read-only; where
// there is none, an empty database in memory made by `prepare`, so no file or folder is made (a
// file root made here would shut the site's owner out of it).
export function openForLook(file: string, o: { label: string; what: string; damaged: string; prepare: (db: Database.Database) => void }): Database.Database {
  // Only a file that is not there is an empty one (a folder we cannot enter is said below).
  if (missing(file)) {
    const db = new Database(':memory:');
    o.prepare(db);
    return db;
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    // Read now, so a file we cannot use is said here. A WAL file read-only still needs its -shm:
    // made by SQLite where the folder lets us (given to the file's owner when we are root), else
    // SQLITE_READONLY_DIRECTORY, which the access advice explains.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (err) {
    db?.close();
    throw openError(file, o, err);
  }
}

// Why a file cannot be opened: an access problem (who owns it and the fix), else the cause.
function openError(file: string, o: { label: string; what: string; damaged: string }, err: unknown): Error {
  const denied = accessProblem(file, o.what);
  if (denied) return new PermissionError(denied, { cause: err });
  const code = (err as { code?: string }).code ?? '';
  // Only a file that is not a database (or a damaged one) is worth moving aside.
  const damaged = code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' ? ` ${o.damaged}` : '';
  return new InternalError(`${o.label} ${file} cannot be opened (${code || (err as Error).message}).${damaged}`, { cause: err });
}

const missing = (file: string) => {
  try {
    fs.statSync(file);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
};
