// Host-wide locks: proper-lockfile's lock directory (an atomic mkdir: of two takers one makes it)
// with an owner file beside it saying who holds it and since when. On one host the owner's pid and
// process start time are the truth: a live owner's lock is never taken, however old its mtime (a
// frozen or SIGSTOPped owner is still alive), and a dead owner's lock is taken at once.
import fs from 'node:fs';
import path from 'node:path';
import { isAlive, readProc } from './process-tree.js';

// What the lock says of itself: a pino logger fits (core/ imports nothing above it).
type Logger = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

export type LockOwner = { pid: number; start: string | null; since: string; purpose: string };
// `lost` aborts when the owner file no longer names us (someone broke the lock anyway).
export type Held = { release: () => Promise<void>; file: string; lost: AbortSignal };

// proper-lockfile takes a lock whose mtime is older than `stale` and refreshes its own every
// `update` (at most stale / 2). Liveness is ours to judge, so its staleness lies beyond any session:
// twice the longest the watchdog lets one run (claude.timeout, capped at node's timer range), so
// its refresh (a timer of at most that range) comes at most once in the longest session.
const MAX_TIMER_MS = 2 ** 31 - 1;
const STALE_MS = 2 * MAX_TIMER_MS;
const UPDATE_MS = MAX_TIMER_MS;
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
  // Loaded here, not at start: `status` and `doctor` only read who holds a lock.
  const { default: lockfile } = await import('proper-lockfile');
  const deadline = Date.now() + o.timeoutMs;
  let waiting = false;
  for (;;) {
    if (o.signal?.aborted) return null;
    const lock = await take(lockfile, file, o.logger);
    if (lock) {
      const me = readProc(process.pid);
      const owner: LockOwner = { pid: process.pid, start: me?.start ?? null, since: new Date().toISOString(), purpose: o.purpose };
      try {
        fs.writeFileSync(ownerFile(file), JSON.stringify(owner));
      } catch (err) {
        // A full disk: the open succeeds, the write fails. An empty owner file names no one whose
        // death would free the lock: undo it now.
        fs.rmSync(ownerFile(file), { force: true });
        lock.mine = () => true;
        await lock.release();
        const e = err as NodeJS.ErrnoException;
        e.message = `cannot write the lock's owner file ${ownerFile(file)}: ${e.message}`;
        throw e;
      }
      return held(file, owner, lock, o.logger);
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

type Lockfile = typeof import('proper-lockfile');
// One lock proper-lockfile holds for us. `mine` says whether the owner file still names us;
// `state` is decided once, at the first removal: ours to remove, or someone else's to leave be.
type Taken = { mine: () => boolean; state: 'held' | 'remove' | 'leave'; dropped: boolean; onLost: (err: Error) => void; release: () => Promise<void> };

// The locks this process holds, by lock directory: proper-lockfile's one exit hook (signal-exit:
// on process.exit, and on a fatal signal no handler of ours takes) removes each through `lockFs`.
const taken = new Map<string, Taken>();

// Whether the directory may go, our owner file removed first. A lock taken from us stays: else
// proper-lockfile's release, or its exit hook, would remove the new owner's directory.
function mayRemove(dir: string): boolean {
  const t = taken.get(dir);
  if (!t) return true; // not one of ours: a lock proper-lockfile judged stale
  if (t.state === 'held') {
    t.state = t.mine() ? 'remove' : 'leave';
    if (t.state === 'remove') {
      try {
        touch(dir);
      } catch {
        // the directory is gone: only the owner file is left to remove
      }
      fs.rmSync(ownerFile(dir.slice(0, -'.lock'.length)), { force: true });
    }
  }
  return t.state === 'remove';
}

// The fs proper-lockfile works through: node's own, called synchronously (as the lock was taken
// before: no trip through libuv's thread pool for the mkdir and its mtime probe, which a loaded
// host makes slow), with removal guarded by mayRemove. Its default, graceful-fs, only adds retries
// of opens that the lock never makes.
type Done<T = void> = (err: NodeJS.ErrnoException | null, value?: T) => void;
function now<T>(op: () => T, cb: Done<T>): void {
  let value: T;
  try {
    value = op();
  } catch (err) {
    return cb(err as NodeJS.ErrnoException);
  }
  cb(null, value);
}
const lockFs = {
  mkdir: (dir: string, cb: Done) => now(() => void fs.mkdirSync(dir), cb),
  stat: (p: string, cb: Done<fs.Stats>) => now(() => fs.statSync(p), cb),
  utimes: (p: string, atime: Date, mtime: Date, cb: Done) => now(() => fs.utimesSync(p, atime, mtime), cb),
  realpath: (p: string, cb: Done<string>) => now(() => fs.realpathSync(p), cb),
  // A process that exits right after a release leaves no directory.
  rmdir: (dir: string, cb: Done) => now(() => void (mayRemove(dir) && rmdirQuiet(dir)), cb),
  rmdirSync(dir: string) {
    if (mayRemove(dir)) rmdirQuiet(dir);
  },
};

// One try at proper-lockfile's mkdir: the lock, or null when someone holds it.
async function take(lockfile: Lockfile, file: string, logger?: Logger): Promise<Taken | null> {
  const dir = lockDir(file);
  const t: Taken = { mine: () => false, state: 'held', dropped: false, onLost: () => {}, release: async () => {} };
  let unlock: () => Promise<void>;
  try {
    unlock = await lockfile.lock(file, {
      realpath: false,
      stale: STALE_MS,
      update: UPDATE_MS,
      retries: 0,
      fs: lockFs,
      // Its refresh found the directory's mtime not as it left it (a breaker that lost its race
      // touches the directory first) or the directory gone, and it let go of the lock. The owner
      // file says whether it is still ours.
      onCompromised: (err) => {
        t.dropped = true;
        if (!t.mine()) return t.onLost(err);
        logger?.warn({ event: 'lock_compromised', file, err }, `proper-lockfile let go of ${file}, whose owner file still names us: kept`);
        process.once('exit', () => {
          if (mayRemove(dir)) rmdirQuiet(dir);
        });
      },
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') return null;
    throw err;
  }
  taken.set(dir, t);
  t.release = async () => {
    try {
      if (!t.dropped) await unlock();
      else if (mayRemove(dir)) rmdirQuiet(dir);
    } finally {
      taken.delete(dir);
    }
  };
  return t;
}

function rmdirQuiet(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // gone already: nothing of ours is left
  }
}

function held(file: string, owner: LockOwner, lock: Taken, logger?: Logger): Held {
  const lost = new AbortController();
  const mine = () => {
    const now = lockOwner(file);
    return !!now && now.pid === owner.pid && now.start === owner.start && now.since === owner.since;
  };
  lock.mine = mine;
  const loseIt = () => {
    clearInterval(watch);
    if (lost.signal.aborted) return;
    logger?.error({ event: 'lock_lost', file }, `lock ${file} was taken from us`);
    lost.abort(`lock ${file} lost`);
  };
  lock.onLost = loseIt;
  const watch = setInterval(() => {
    if (!mine()) loseIt();
  }, WATCH_MS);
  watch.unref();
  return {
    file,
    lost: lost.signal,
    // A lock taken from us is someone else's now: release leaves it be (mayRemove). Once only.
    release: async () => {
      clearInterval(watch);
      const r = lock.release;
      lock.release = async () => {};
      await r();
    },
  };
}
