// Threads (open questions or work that spans sessions) and anneal passes: memories of their own,
// never merged into an older one.
import { isOperator } from '../learning/claims.js';
import { MemoryError, type Actor, type ThreadRecord } from '../types.js';
import { checkActor, checkId, checkText } from './checks.js';
import type { StoreCore } from './core.js';
import { createSpecial } from './observe.js';

/** Opens a thread: an open question or piece of work that spans sessions; `solo` ones an unattended session may pick up. */
export async function openThread(s: StoreCore, input: { text: string; solo?: boolean; source?: string | null }, actor: Actor): Promise<ThreadRecord> {
  const { id } = await createSpecial(s, { text: input?.text, source: input?.source ?? null, category: 'thread' }, actor, (memoryId) => {
    s.stmt("INSERT INTO threads (memory_id, status, solo, opened_at) VALUES (?, 'open', ?, ?)").run(memoryId, input.solo ? 1 : 0, s.iso());
    s.audit(actor, 'thread_open', `memory:${memoryId}`, null, { solo: !!input.solo });
  });
  return thread(s, id);
}

/** Resolves an open thread, with what settled it; a session only a solo one it sees. */
export function resolveThread(s: StoreCore, id: number, resolution: string | null, actor: Actor): ThreadRecord {
  checkActor(actor);
  checkId(id);
  checkText({ resolution });
  s.write(() => {
    s.tombstones.refuse([['resolution', resolution]]);
    const t = thread(s, id);
    if (t.status === 'resolved') throw new MemoryError('INVALID', `Thread ${id} was already resolved on ${t.resolved_at}`);
    // A thread that needs the operator is closed by the operator, never by an agent.
    if (!t.solo && !isOperator(actor)) throw new MemoryError('INVALID', `Thread ${id} is the operator's (not solo): only the operator closes it (nightshift memory threads resolve ${id})`);
    // A solo thread is its writer's grant to whichever session takes it (the operator's --solo
    // work for every agent): closing it for all is its purpose, so the standing rule does not
    // apply. Unattended states show solo threads only: kept open, every agent would redo it.
    s.stmt("UPDATE threads SET status = 'resolved', resolved_at = ?, resolution = ? WHERE memory_id = ?").run(s.iso(), resolution ?? null, id);
    s.audit(actor, 'thread_resolve', `memory:${id}`, { status: 'open' }, { status: 'resolved', resolution });
  })();
  return thread(s, id);
}

function thread(s: StoreCore, id: number): ThreadRecord {
  const r = s.stmt(`SELECT m.id, m.text, t.status, t.solo, t.opened_at, t.resolved_at, t.resolution FROM threads t JOIN memories m ON m.id = t.memory_id WHERE t.memory_id = ? AND ${s.seen('m')}`).get(id) as
    | (Omit<ThreadRecord, 'solo'> & { solo: number })
    | undefined;
  if (!r) throw new MemoryError('NOT_FOUND', `Memory ${id} is not a thread (open one with threads action "open")`);
  return { ...r, solo: !!r.solo };
}

/** Threads, newest first: `open` true/false filters by status, `solo` by the solo flag. */
export function threads(s: StoreCore, filter: { open?: boolean; solo?: boolean; limit?: number } = {}): ThreadRecord[] {
  const where: string[] = [s.seen('m')];
  if (filter.open !== undefined) where.push(filter.open ? "t.status = 'open'" : "t.status = 'resolved'");
  if (filter.solo !== undefined) where.push(filter.solo ? 't.solo = 1' : 't.solo = 0');
  const rows = s.stmt(
    `SELECT m.id, m.text, t.status, t.solo, t.opened_at, t.resolved_at, t.resolution FROM threads t JOIN memories m ON m.id = t.memory_id
     WHERE ${where.join(' AND ')} ORDER BY t.opened_at DESC, m.id DESC LIMIT ?`,
  ).all(filter.limit ?? 100) as Array<Omit<ThreadRecord, 'solo'> & { solo: number }>;
  return rows.map((r) => ({ ...r, solo: !!r.solo }));
}

/**
 * One pass of the self-annealing loop (category `anneal`): a memory of its own, never merged into
 * an earlier pass, since the same failure coming back is the very thing the log is kept to show.
 */
export async function recordAnneal(s: StoreCore, input: { text: string; source?: string | null; created_at?: string | null; tags?: string[] }, actor: Actor): Promise<{ id: number }> {
  return createSpecial(s, { text: input?.text, source: input?.source ?? null, created_at: input?.created_at ?? null, tags: input?.tags, salience: 0.7, category: 'anneal' }, actor, (id) => {
    s.audit(actor, 'anneal', `memory:${id}`, null, { tags: input?.tags ?? [] });
  });
}
