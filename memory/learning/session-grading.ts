// The supervisor's call after each session: read the transcript, grade what the session did with
// memory. It never fails the session: every problem is logged and the session goes on as it ended.
import fs from 'node:fs';
import { memoryDbPath } from '../store/db-path.js';
import { usageFromTranscript } from './grading.js';
import { MemoryStore } from '../store.js';
import { viewOf } from '../store/scope.js';

type Log = { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };

export type GradedSession = { graded: Array<{ id: number; grade: string }>; recalled: number; surfaced: number; used: number } | null;

/** Grades the memories a finished session recalled, was shown and used; null (logged) when it could not. */
export async function gradeSessionMemory(
  config: { state_dir: string; memory?: { db?: string | null; scope?: 'agent' | 'shared' } },
  session: { id: string; outcome: string; transcript: string | null },
  logger: Log,
  now: () => Date = () => new Date(),
  // The memories session-state injected into the prompt: ignored ones are graded Hard.
  injected: Array<{ id: number; text: string }> = [],
  // The session's agent: only what its view holds is graded.
  agent: string | null = null,
): Promise<GradedSession> {
  try {
    const file = memoryDbPath(config);
    if (!session.transcript || !fs.existsSync(session.transcript) || !fs.existsSync(file)) return null;
    const use = usageFromTranscript(fs.readFileSync(session.transcript, 'utf8').split('\n'), injected);
    if (!use.recalledIds.length && !use.surfacedIds.length && !use.injectedIds.length) return { graded: [], recalled: 0, surfaced: 0, used: 0 };
    const store = MemoryStore.open(file, { now, agent: viewOf(config, agent) });
    try {
      const graded = store.gradeSession({ sessionId: session.id, outcome: session.outcome, ...use });
      const r = { graded, recalled: use.recalledIds.length, surfaced: use.surfacedIds.length, used: use.usedIds.length };
      logger.info({ event: 'memory_graded', sessionId: session.id, ...r }, `memory: graded ${graded.length} ${graded.length === 1 ? 'memory' : 'memories'} from session ${session.id}`);
      return r;
    } finally {
      store.close();
    }
  } catch (err) {
    logger.warn({ event: 'memory_grading_failed', sessionId: session.id, err }, `memory: could not grade session ${session.id}: ${(err as Error)?.message ?? String(err)}`);
    return null;
  }
}
