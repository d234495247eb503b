// Host-wide locks: a lock directory (an atomic mkdir: of two takers one makes it) with an owner file beside it
// saying who holds it and since when. On one host the owner's pid and process start time are the
// truth: a live owner's lock is never taken, however old its mtime (a frozen or SIGSTOPped owner
// is still alive), and a dead owner's lock is taken at once.
import fs from 'node:fs';
import path from 'node:path';
import { isAlive, readProc } from './process-tree.js';

// What the lock says of itself: a pino logger fits (core/ imports nothing above it).
type Logger = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

export type LockOwner = { pid: number; start: string | null; since: string; purpose: string };
// `lost` aborts when the owner file no longer names us (someone broke the lock anyway).
export type Held = { release: () => Promise<void>; file: string; lost: AbortSignal };

// A lock directory with no owner file: its owner died between mkdir and writing the file.
const ORPHAN_DIR_MS = 5_000;
const WATCH_MS = 1_000;
const ownerFile = (file: string) => `${file}.owner.json`;
const lockDir = (file: string) => `${file}.lock`;

export function lockOwner(file: string): LockOwner | null {
  if (!fs.existsSync(lockDir(file))) return null;
  return readOwner(ownerFile(file));
}

function readOwner(f: string): LockOwner | null {
  try {
    return JSON.parse(fs.readFileSync(f, 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}

// Takes the lock away from a dead owner. The owner file is renamed first, so of two processes
// that both saw the dead owner only one removes the lock; if the renamed file turns out to name a
// live owner (a new holder won the race), it is put back. An owner file that names no one (empty:
// its writer died between open and write) counts as a dead owner's once older than ORPHAN_DIR_MS.
function breakDeadLock(file: string): boolean {
  if (!fs.existsSync(ownerFile(file))) {
    // No owner file at all: only a directory old enough to rule out a holder still writing it.
    // (Its age counts from when the owner file went: see touch.)
    if (!olderThan(lockDir(file), ORPHAN_DIR_MS)) return false;
    fs.rmSync(lockDir(file), { recursive: true, force: true });
    return true;
  }
  const owner = readOwner(ownerFile(file));
  if (owner ? isAlive(owner.pid, owner.start) : !olderThan(ownerFile(file), ORPHAN_DIR_MS)) return false;
  const claimed = `${ownerFile(file)}.${process.pid}`;
  try {
    // Until the directory is gone it has no owner file: it must not look like an old orphan then.
    touch(lockDir(file));
    fs.renameSync(ownerFile(file), claimed);
  } catch {
    return false;
  }
  const taken = readOwner(claimed);
  if (taken ? isAlive(taken.pid, taken.start) : !olderThan(claimed, ORPHAN_DIR_MS)) {
    fs.renameSync(claimed, ownerFile(file));
    return false;
  }
  fs.rmSync(claimed, { force: true });
  fs.rmSync(lockDir(file), { recursive: true, force: true });
  return true;
}

function olderThan(p: string, ms: number): boolean {
  try {
    return Date.now() - fs.statSync(p).mtimeMs >= ms;
  } catch {
    return false;
  }
}

// The lock directory's mtime set to now, before its owner file is removed or renamed away: the
// orphan rule (no owner file, directory older than ORPHAN_DIR_MS) then counts from that moment, not
// from when the lock was taken. Without it a taker between the owner file's removal and the
// directory's would remove the directory, make its own, and see it removed in turn: two holders.
function touch(dir: string): void {
  const now = new Date();
  try {
    fs.utimesSync(dir, now, now);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    // Not ours to touch (another user's): judged by its old age, as before.
  }
}

class Stopped extends Error {}

const wait = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new Stopped());
    const t = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(t);
      reject(new Stopped());
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });

// Tries to take the lock, waiting up to timeoutMs (0: one try). Null when someone else holds it,
// or when `signal` aborts the wait (a stop request never waits a lock out).
export async function acquireLock(file: string, o: { timeoutMs: number; purpose: string; logger?: Logger; signal?: AbortSignal }): Promise<Held | null> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const deadline = Date.now() + o.timeoutMs;
  let waiting = false;
  for (;;) {
    if (o.signal?.aborted) return null;
    if (takeDir(lockDir(file))) {
      const me = readProc(process.pid);
      const owner: LockOwner = { pid: process.pid, start: me?.start ?? null, since: new Date().toISOString(), purpose: o.purpose };
      try {
        fs.writeFileSync(ownerFile(file), JSON.stringify(owner));
      } catch (err) {
        // A full disk: the open succeeds, the write fails. An empty owner file names no one whose
        // death would free the lock, and no exit hook removes a lock never had: undo it now.
        fs.rmSync(ownerFile(file), { force: true });
        fs.rmSync(lockDir(file), { recursive: true, force: true });
        const e = err as NodeJS.ErrnoException;
        e.message = `cannot write the lock's owner file ${ownerFile(file)}: ${e.message}`;
        throw e;
      }
      return held(file, owner, o.logger);
    }
    if (breakDeadLock(file)) {
      o.logger?.warn({ event: 'lock_recovered', file }, `took over ${file} from a dead holder`);
      continue;
    }
    if (Date.now() >= deadline) return null;
    // Said once, when a wait begins: a start that sits on another's lock says whose.
    if (!waiting) {
      waiting = true;
      const holder = lockOwner(file);
      o.logger?.info({ event: 'lock_wait', file, holder: holder?.pid ?? null }, `waiting up to ${o.timeoutMs} ms for ${file}${holder ? ` (held by pid ${holder.pid}: ${holder.purpose})` : ''}`);
    }
    try {
      await wait(Math.min(250, Math.max(10, deadline - Date.now())), o.signal);
    } catch (e) {
      if (e instanceof Stopped) return null;
      throw e;
    }
  }
}

// mkdir is atomic: of two takers exactly one makes the directory. (proper-lockfile did this too;
// with graceful-fs and signal-exit its import alone was ~14 ms of every session's start.)
function takeDir(dir: string): boolean {
  try {
    fs.mkdirSync(dir);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

// One exit listener for every lock this process holds: a supervisor running several sessions holds
// a slot, a vault's turn and the git lock for each, past node's warning at 10 listeners.
const atExit = new Set<() => void>();
let hooked = false;
function onExit(release: () => void): void {
  if (!hooked) process.once('exit', releaseAll);
  hooked = true;
  atExit.add(release);
}
function releaseAll(): void {
  for (const r of [...atExit]) r();
}

function held(file: string, owner: LockOwner, logger?: Logger): Held {
  const lost = new AbortController();
  const mine = () => {
    const now = lockOwner(file);
    return !!now && now.pid === owner.pid && now.start === owner.start && now.since === owner.since;
  };
  const watch = setInterval(() => {
    if (mine()) return;
    clearInterval(watch);
    logger?.error({ event: 'lock_lost', file }, `lock ${file} was taken from us`);
    lost.abort(`lock ${file} lost`);
  }, WATCH_MS);
  watch.unref();
  const release = () => {
    clearInterval(watch);
    atExit.delete(release);
    // A lock taken from us is someone else's now: leave it be.
    if (!mine()) return;
    try {
      touch(lockDir(file));
    } catch {
      // the directory is gone: only the owner file is left to remove
    }
    fs.rmSync(ownerFile(file), { force: true });
    try {
      fs.rmdirSync(lockDir(file));
    } catch {
      // gone already: nothing of ours is left
    }
  };
  // A process that exits holding it (an error path's process.exit) leaves no lock behind.
  onExit(release);
  return {
    file,
    lost: lost.signal,
    release: async () => release(),
  };
}
