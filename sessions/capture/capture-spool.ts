// What a session left behind, into the store or, when the store is locked or unavailable, into the
// spool (memory/spool.ts); and the spool stored by a later start, oldest first, each record once.
// Once: a record already in the store (an observation of its text by its session) is skipped, so a
// crash between storing a batch and removing it stores nothing twice.
import { spoolList, spoolRemove, spoolWrite } from '../../memory/store/spool.js';
import type { MemoryStore } from '../../memory/store.js';
import { MemoryError } from '../../memory/types.js';
import type { LeftRecord } from './types.js';

type Apply = (store: MemoryStore, r: LeftRecord) => Promise<'stored' | 'resolved' | 'none'>;
export type Tally = { stored: number; resolved: number; refused: number };

const message = (err: unknown) => (err as Error)?.message ?? String(err);

// Stores `records` in order; from the first failure of the store itself on, the rest is spooled.
export async function storeOrSpool(
  records: LeftRecord[],
  o: { open: () => Promise<MemoryStore>; apply: Apply; dir: string; now: () => Date },
): Promise<Tally & { spooled: number; file: string | null; cause: string | null }> {
  const t = { stored: 0, resolved: 0, refused: 0, spooled: 0, file: null as string | null, cause: null as string | null };
  const spool = (rest: LeftRecord[], err: unknown) => {
    if (!rest.length) return;
    t.file = spoolWrite(o.dir, rest, o.now(), rest[0].session);
    t.spooled = rest.length;
    t.cause = message(err);
  };
  let store: MemoryStore;
  try {
    store = await o.open();
  } catch (err) {
    spool(records, err);
    return t;
  }
  try {
    for (let k = 0; k < records.length; k++) {
      try {
        count(t, await o.apply(store, records[k]));
      } catch (err) {
        if (err instanceof MemoryError) t.refused++;
        else {
          spool(records.slice(k), err);
          break;
        }
      }
    }
  } finally {
    store.close();
  }
  return t;
}

function count(t: Tally, r: 'stored' | 'resolved' | 'none'): void {
  if (r === 'stored') t.stored++;
  else if (r === 'resolved') t.resolved++;
}

export type DrainReport = Tally & { batches: number; skipped: number; left: number; unreadable: string[]; error: string | null };

// Stores what the spool holds, oldest batch first; a batch is removed once all of it is in. Stops at
// the first failure of the store (what is left waits for the next start). Never throws.
export async function drainSpool(o: { open: () => Promise<MemoryStore>; apply: Apply; dir: string }): Promise<DrainReport> {
  const r: DrainReport = { stored: 0, resolved: 0, refused: 0, batches: 0, skipped: 0, left: 0, unreadable: [], error: null };
  let list: ReturnType<typeof spoolList<LeftRecord>>;
  try {
    list = spoolList<LeftRecord>(o.dir);
  } catch (err) {
    r.error = message(err);
    return r;
  }
  r.unreadable = list.unreadable;
  if (!list.batches.length) return r;
  let store: MemoryStore;
  try {
    store = await o.open();
  } catch (err) {
    r.error = message(err);
    r.left = list.batches.length;
    return r;
  }
  try {
    for (const [b, batch] of list.batches.entries()) {
      for (const rec of batch.records) {
        if (rec.kind === 'store' && store.hasObservation(rec.session, rec.item.text)) {
          r.skipped++;
          continue;
        }
        try {
          count(r, await o.apply(store, rec));
        } catch (err) {
          if (!(err instanceof MemoryError)) {
            r.error = message(err);
            r.left = list.batches.length - b;
            return r;
          }
          r.refused++;
        }
      }
      spoolRemove(batch.file);
      r.batches++;
    }
  } catch (err) {
    r.error = message(err);
  } finally {
    store.close();
  }
  return r;
}
