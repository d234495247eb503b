// The memory's dream pressure (observations since the last dream, and when that was), read two
// ways: by the open store, and on its own, read-only, by a tick with nothing due, which then
// loads none of the store. A file at another schema version, or one that cannot be read that
// way, answers null: the caller opens the whole store, which migrates it or says what is wrong.
import Database from 'better-sqlite3';
import type { Pressure } from '../dream/pressure.js';
import { SCHEMA_VERSION } from './schema.js';

type Prepare = (sql: string) => Database.Statement;

export const LAST_DREAM_SQL = 'SELECT id, started_at, duration_ms, last_observation_id FROM dreams ORDER BY id DESC LIMIT 1';

export function pressureOf(prepare: Prepare): Required<Pressure> {
  const last = prepare(LAST_DREAM_SQL).get() as { started_at: string; last_observation_id: number } | undefined;
  const r = prepare('SELECT count(*) AS n, min(created_at) AS first FROM observations WHERE id > ?').get(last?.last_observation_id ?? 0) as { n: number; first: string | null };
  return { observations_since: r.n, last_dream_at: last?.started_at ?? null, first_since_at: r.first };
}

export function readDreamPressure(file: string): Required<Pressure> | null {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return null;
  }
  try {
    if (db.pragma('user_version', { simple: true }) !== SCHEMA_VERSION) return null;
    return pressureOf((sql) => db.prepare(sql));
  } catch {
    return null;
  } finally {
    db.close();
  }
}
