// Forgetting: a claim refused from now on (tombstone), a memory faded and tombstoned (forget), or
// memories deleted for good with their text out of the file (deleteForever).
import { MemoryError, type Actor } from '../types.js';
import { checkActor, checkId, checkText, publicRow } from './checks.js';
import type { StoreCore } from './core.js';
import { redactAudit } from './forget-redact.js';

/** Refuses the claim from now on: observing text that normalises the same throws TOMBSTONED. */
export function tombstone(s: StoreCore, text: string, reason: string, actor: Actor): { hash: string } {
  checkActor(actor);
  if (typeof text !== 'string' || !text.trim()) throw new MemoryError('INVALID', 'Expected the claim to tombstone as a non-empty string');
  checkText({ text, reason });
  let hash = '';
  s.write(() => {
    const keys = s.tombstones.add([text], s.iso(), reason || 'forgotten', true);
    hash = keys[0]!;
    s.audit(actor, 'tombstone', `tombstone:${hash}`, null, { hashes: keys, reason });
  })();
  return { hash };
}

/** Fades a memory and tombstones its text and its evidence, so none of it is observed again. */
export function forget(s: StoreCore, id: number, reason: string, actor: Actor): void {
  checkActor(actor);
  s.write(() => {
    const before = s.row(id);
    const texts = new Set([before.text, ...(s.stmt('SELECT text FROM observations WHERE memory_id = ?').pluck().all(id) as string[])]);
    const hashes = s.tombstones.add(texts, s.iso(), reason || `memory ${id} forgotten`);
    s.stmt('UPDATE memories SET faded = 1, updated_at = ? WHERE id = ?').run(s.iso(), id);
    s.audit(actor, 'forget', `memory:${id}`, publicRow(before), { faded: true, tombstones: hashes, reason });
  })();
}

/**
 * Deletes memories for good (a human approved it: `nightshift memory forget --approve`),
 * tombstoning their claims first. The text leaves the file too: deleted with secure_delete (freed
 * cells and pages zeroed), the text indices merged without it, audit rows about them redacted,
 * and the WAL checkpointed into the file and truncated (`checkpointed` false when a reader held
 * it back; the next checkpoint finishes the job). Returns the ids and the tombstone keys.
 */
export function deleteForever(s: StoreCore, memoryIds: number[], reason: string, actor: Actor): { deleted: number[]; tombstones: string[]; audit_redacted: number; checkpointed: boolean } {
  checkActor(actor);
  memoryIds.forEach(checkId);
  const secure = s.db.pragma('secure_delete', { simple: true }) as number;
  s.db.pragma('secure_delete = ON');
  let out: { deleted: number[]; tombstones: string[]; audit_redacted: number };
  try {
    out = s.write(() => {
      // Abstractions a dream derived from them quote their text: they go too.
      memoryIds = [...new Set([...memoryIds, ...derivedFrom(s, memoryIds)])];
      const texts = new Set<string>();
      for (const id of memoryIds) {
        const m = s.row(id);
        texts.add(m.text);
        for (const t of s.stmt('SELECT text FROM observations WHERE memory_id = ?').pluck().all(id) as string[]) texts.add(t);
        // A prediction's note and a thread's resolution may restate the claim: their rows go below.
      }
      const hashes = s.tombstones.add(texts, s.iso(), reason);
      for (const id of memoryIds) {
        s.stmt('UPDATE memories SET superseded_by = NULL WHERE superseded_by = ?').run(id);
        for (const sql of [
          'DELETE FROM reviews WHERE memory_id = @id',
          'DELETE FROM threads WHERE memory_id = @id',
          'DELETE FROM predictions WHERE memory_id = @id',
          'DELETE FROM contradiction_candidates WHERE a = @id OR b = @id',
          'DELETE FROM embeddings WHERE memory_id = @id',
          'DELETE FROM edges WHERE from_id = @id OR to_id = @id',
          'DELETE FROM observations WHERE memory_id = @id',
          'DELETE FROM memories WHERE id = @id',
        ]) s.stmt(sql).run({ id });
        s.vectors?.delete(id);
      }
      // A speaker no memory is left of is no longer known.
      s.stmt('DELETE FROM speakers WHERE name NOT IN (SELECT speaker FROM memories WHERE speaker IS NOT NULL)').run();
      // FTS5 keeps a deleted row's terms in its segments until they merge: merge them now.
      s.db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('optimize'); INSERT INTO observations_fts (observations_fts) VALUES ('optimize');");
      const auditRedacted = redactAudit(s.db, memoryIds, [...texts]);
      s.forgetCounts();
      // The audit row names ids and tombstone keys only: the text is gone for good.
      s.audit(actor, 'delete', `memories:${memoryIds.join(',')}`, null, { deleted: memoryIds, tombstones: hashes, reason, audit_redacted: auditRedacted });
      return { deleted: [...memoryIds], tombstones: hashes, audit_redacted: auditRedacted };
    })();
  } finally {
    s.db.pragma(`secure_delete = ${secure}`);
  }
  // Until a checkpoint the WAL holds the pages as they were before the delete.
  const [cp] = s.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
  return { ...out, checkpointed: !!cp && cp.busy === 0 };
}

/** True when `text` would be refused as a forgotten claim (for redacting copies outside the store). */
export function isForgotten(s: StoreCore, text: string): boolean {
  return s.tombstones.match([['text', text]]) !== null;
}

/** Derived memories (a dream's abstractions) that abstract any of `ids`: a forget takes them along. */
export function derivedFrom(s: StoreCore, memoryIds: number[]): number[] {
  if (!memoryIds.length) return [];
  return s.stmt(
    `SELECT DISTINCT e.from_id FROM edges e JOIN memories m ON m.id = e.from_id
     WHERE e.type = 'abstracts' AND m.derived = 1 AND e.to_id IN (SELECT value FROM json_each(?))`,
  ).pluck().all(JSON.stringify(memoryIds)) as number[];
}
