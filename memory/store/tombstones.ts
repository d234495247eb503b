// The tombstones table as the store uses it: keys written for a forgotten text, and every text
// field of every write checked against them (exact keys by primary key, near keys by similarity).
import type Database from 'better-sqlite3';
import { tombstoneKeys as legacyKeys } from '../text/text.js';
import { exactKeysOf, nearMatch, NEAR_PREFIX, parseNear, tombstoneKeysOf, type NearKey } from '../text/tombstone-key.js';
import { MemoryError } from '../types.js';

export type TombstoneHit = { field: string; hash: string; at: string; reason: string; how: 'exact' | 'near' | 'within'; similarity: number };

// What a refused field says: the field, when and why its claim was forgotten, and how it matched.
export function refusalMessage(h: TombstoneHit): string {
  const id = /[0-9a-f]{12}/.exec(h.hash)?.[0] ?? h.hash.slice(0, 12);
  const how = h.how === 'near' ? `, a near copy (similarity ${h.similarity.toFixed(2)})` : h.how === 'within' ? ', found inside the text' : '';
  return `Refused: \`${h.field}\` holds a claim forgotten on ${h.at} (tombstone ${id}${how}: ${h.reason}). Forgotten claims are not stored again.`;
}

export class Tombstones {
  private near: { top: number; keys: Array<{ key: string; near: NearKey }> } = { top: -1, keys: [] };
  private readonly statements = new Map<string, Database.Statement>();
  private stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) this.statements.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  constructor(
    private readonly db: Database.Database,
    readonly similarity: number,
  ) {
    if (!(similarity > 0 && similarity <= 1)) throw new MemoryError('INVALID', `Expected memory.forget_similarity above 0 and at most 1, got ${JSON.stringify(similarity)}`);
  }

  /** Writes every key of each text (inside the caller's transaction); returns the keys. */
  add(texts: Iterable<string>, at: string, reason: string, replace = false): string[] {
    const keys = new Set<string>();
    for (const t of texts) for (const k of tombstoneKeysOf(t)) keys.add(k);
    const sql = replace
      ? 'INSERT INTO tombstones (hash, at, reason) VALUES (?, ?, ?) ON CONFLICT (hash) DO UPDATE SET reason = excluded.reason, at = excluded.at'
      : 'INSERT OR IGNORE INTO tombstones (hash, at, reason) VALUES (?, ?, ?)';
    const st = this.stmt(sql);
    for (const k of keys) st.run(k, at, reason);
    return [...keys];
  }

  /** The first tombstone one of `fields` matches, or null. Tags are checked one by one and joined. */
  match(fields: Array<[string, string | null | undefined]>): TombstoneHit | null {
    const exact = this.stmt('SELECT hash, at, reason FROM tombstones WHERE hash IN (SELECT value FROM json_each(?)) LIMIT 1');
    const near = this.nearKeys();
    for (const [field, text] of fields) {
      if (typeof text !== 'string' || !text.trim()) continue;
      const row = exact.get(JSON.stringify([...legacyKeys(text), ...exactKeysOf(text)])) as { hash: string; at: string; reason: string } | undefined;
      if (row) return { field, ...row, how: 'exact', similarity: 1 };
      const m = near.length ? nearMatch(text, near, this.similarity) : null;
      if (m) {
        const r = this.stmt('SELECT at, reason FROM tombstones WHERE hash = ?').get(m.key) as { at: string; reason: string };
        return { field, hash: m.key.split(':')[2]!, at: r.at, reason: r.reason, how: m.how, similarity: m.similarity };
      }
    }
    return null;
  }

  /** Throws MemoryError TOMBSTONED naming the field, when one matches. */
  refuse(fields: Array<[string, string | null | undefined]>): void {
    const hit = this.match(fields);
    if (hit) throw new MemoryError('TOMBSTONED', refusalMessage(hit));
  }

  // The near keys, read again only when a tombstone was added (rowids only grow).
  private nearKeys(): Array<{ key: string; near: NearKey }> {
    const top = (this.stmt('SELECT coalesce(max(rowid), 0) AS n FROM tombstones').get() as { n: number }).n;
    if (top !== this.near.top) {
      const rows = this.stmt('SELECT hash FROM tombstones WHERE hash >= ? AND hash < ?').pluck().all(NEAR_PREFIX, 'near;') as string[];
      this.near = { top, keys: rows.flatMap((key) => { const near = parseNear(key); return near ? [{ key, near }] : []; }) };
    }
    return this.near.keys;
  }
}

// The fields of an observation as the tombstones check them.
export function observationFields(x: { text: string; source: string | null; tags: string[] }): Array<[string, string | null]> {
  return [['text', x.text], ['source', x.source], ...x.tags.map((t, i): [string, string] => [`tags[${i}]`, t]), ...(x.tags.length > 1 ? [['tags', x.tags.join(' ')] as [string, string]] : [])];
}
