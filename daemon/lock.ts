// Host-wide locks (proper-lockfile: a lock directory whose mtime the holder keeps fresh), with an
// owner file beside it saying who holds it and since when. A lock whose owner process is dead is
// taken over at once; one whose owner vanished without a trace goes stale by mtime.
import fs from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { Logger } from '../logs/logger.js';
import { isAlive, readProc, sleep } from '../sessions/process-tree.js';

export type LockOwner = { pid: number; start: string | null; since: string; purpose: string };
export type Held = { release: () => Promise<void>; file: string };

const STALE_MS = 10_000;
const ownerFile = (file: string) => `${file}.owner.json`;
const lockDir = (file: string) => `${file}.lock`;

export function lockOwner(file: string): LockOwner | null {
  if (!fs.existsSync(lockDir(file))) return null;
  try {
    return JSON.parse(fs.readFileSync(ownerFile(file), 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}

// Takes the lock away from a dead owner. The owner file is renamed first, so of two processes
// that both saw the dead owner only one removes the lock; if the renamed file turns out to name a
// live owner (a new holder won the race), it is put back.
function breakDeadLock(file: string): boolean {
  const owner = lockOwner(file);
  if (!owner || isAlive(owner.pid, owner.start)) return false;
  const claimed = `${ownerFile(file)}.${process.pid}`;
  try {
    fs.renameSync(ownerFile(file), claimed);
  } catch {
    return false;
  }
  const taken = JSON.parse(fs.readFileSync(claimed, 'utf8')) as LockOwner;
  if (isAlive(taken.pid, taken.start)) {
    fs.renameSync(claimed, ownerFile(file));
    return false;
  }
  fs.rmSync(claimed, { force: true });
  fs.rmSync(lockDir(file), { recursive: true, force: true });
  return true;
}

// Tries to take the lock, waiting up to timeoutMs (0: one try). Null when someone else holds it.
export async function acquireLock(file: string, o: { timeoutMs: number; purpose: string; logger?: Logger }): Promise<Held | null> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    try {
      const release = await lockfile.lock(file, {
        realpath: false,
        stale: STALE_MS,
        retries: 0,
        onCompromised: (err) => o.logger?.error({ event: 'lock_compromised', file, err }, `lock ${file} compromised`),
      });
      const me = readProc(process.pid);
      const owner: LockOwner = { pid: process.pid, start: me?.start ?? null, since: new Date().toISOString(), purpose: o.purpose };
      fs.writeFileSync(ownerFile(file), JSON.stringify(owner));
      return {
        file,
        release: async () => {
          const current = lockOwner(file);
          if (current?.pid === process.pid) fs.rmSync(ownerFile(file), { force: true });
          await release().catch(() => undefined);
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      if (breakDeadLock(file)) {
        o.logger?.warn({ event: 'lock_recovered', file }, `took over ${file} from a dead holder`);
        continue;
      }
      if (Date.now() >= deadline) return null;
      await sleep(Math.min(250, Math.max(10, deadline - Date.now())));
    }
  }
}
