// What lets sessions run side by side on one host, and no more of them than sessions.max_concurrent:
// a slot each (a host-wide lock held for the session's whole life), a start lock the supervisors
// take in turn from their first write to the charge (what earlier starts left owing, the choice,
// the pull, the charge), and a vault's turn (sessions sharing a vault take turns). Every one is a
// lock whose owner file names a pid and its start time: what is running is counted from the
// processes themselves, never from a counter a crash could leave wrong.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { acquireLock, lockOwner, type Held, type LockOwner } from '../../core/lock.js';
import { isAlive } from '../../core/process-tree.js';
import type { Logger } from '../../logs/logger.js';

// Slot 1 is the run lock of a one-at-a-time site (`run`, as `nightshift lock` and status know it).
export const slotFile = (stateDir: string, i: number) => path.join(stateDir, i === 1 ? 'run' : `run-${i}`);
export const startFile = (stateDir: string) => path.join(stateDir, 'start');
export const vaultTurnFile = (stateDir: string, vault: string) => path.join(stateDir, 'vaults', createHash('sha256').update(path.resolve(vault)).digest('hex').slice(0, 16));

// How long a supervisor waits for another to finish starting its session (a pull under the git
// lock included) before it gives up this time.
export const START_WAIT_MS = 150_000;

// The first free slot, taken; null when all `n` are held by live supervisors.
export async function takeSlot(stateDir: string, n: number, o: { logger: Logger; signal?: AbortSignal }): Promise<{ held: Held; slot: number } | null> {
  for (let i = 1; i <= n; i++) {
    const held = await acquireLock(slotFile(stateDir, i), { timeoutMs: 0, purpose: 'session', logger: o.logger, signal: o.signal });
    if (held) return { held, slot: i };
  }
  return null;
}

// Who holds the slots now (live owners only).
export function slotOwners(stateDir: string, n: number): LockOwner[] {
  const out: LockOwner[] = [];
  for (let i = 1; i <= n; i++) {
    const o = lockOwner(slotFile(stateDir, i));
    if (o && isAlive(o.pid, o.start)) out.push(o);
  }
  return out;
}

// Pure: why no slot was free, in the operator's words.
export function atCapacity(n: number, owners: Array<Pick<LockOwner, 'pid' | 'since'>>): string {
  if (n === 1) return `locked: another supervisor is running${owners[0] ? ` (pid ${owners[0].pid} since ${owners[0].since})` : ''}`;
  return `at capacity: ${n} sessions running, sessions.max_concurrent ${n}${owners.length ? ` (pids ${owners.map((o) => o.pid).join(', ')})` : ''}`;
}
