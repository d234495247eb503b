// The memory database file: a check that it is ours before anything writes to it, and forward
// migrations keyed on `PRAGMA user_version`. A file that is corrupt or not ours is refused and left
// as it is.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { accessProblem } from '../../core/file-access.js';
import { CATEGORIES, EDGE_TYPES, MemoryError, SURFACES } from '../types.js';

// "NSMe": marks a SQLite file as a nightshift memory store.
export const APPLICATION_ID = 0x4e534d65;

const list = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');
const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
// The categories migration 1 shipped with: frozen, so a new store and a migrated one end alike.
const V1_CATEGORIES = ['belief', 'pattern', 'entity', 'topic', 'value', 'project', 'insight', 'thread', 'prediction', 'observation'];
// The edge types migration 1 shipped with, frozen for the same reason.
const V1_EDGE_TYPES = ['supports', 'contradicts', 'abstracts', 'relates_to', 'supersedes', 'follows'];

// Each entry moves the schema from version i to i + 1; never edit one that has shipped.
export const MIGRATIONS: string[] = [
  // 1: the store.
  `
  CREATE TABLE memories (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    category TEXT NOT NULL CHECK (category IN (${list(V1_CATEGORIES)})),
    salience REAL NOT NULL DEFAULT 0.5 CHECK (salience BETWEEN 0 AND 1),
    confidence REAL NOT NULL DEFAULT 0.5 CHECK (confidence BETWEEN 0 AND 1),
    access_count INTEGER NOT NULL DEFAULT 0,
    tags TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    faded INTEGER NOT NULL DEFAULT 0 CHECK (faded IN (0, 1)),
    superseded_by INTEGER REFERENCES memories (id),
    due TEXT,
    stability REAL,
    difficulty REAL,
    elapsed_days REAL,
    scheduled_days REAL,
    reps INTEGER,
    lapses INTEGER,
    state INTEGER,
    last_review TEXT
  );
  CREATE INDEX memories_active ON memories (faded, superseded_by);
  CREATE TABLE edges (
    id INTEGER PRIMARY KEY,
    from_id INTEGER NOT NULL REFERENCES memories (id),
    to_id INTEGER NOT NULL REFERENCES memories (id),
    type TEXT NOT NULL CHECK (type IN (${list(V1_EDGE_TYPES)})),
    weight REAL NOT NULL DEFAULT 1 CHECK (weight BETWEEN 0 AND 1),
    created_at TEXT NOT NULL,
    UNIQUE (from_id, to_id, type)
  );
  CREATE INDEX edges_to ON edges (to_id);
  CREATE TABLE observations (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    source TEXT,
    created_at TEXT NOT NULL,
    salience REAL NOT NULL,
    prediction_error REAL NOT NULL,
    decision TEXT NOT NULL CHECK (decision IN ('merge', 'link', 'novel')),
    memory_id INTEGER NOT NULL REFERENCES memories (id),
    session_id TEXT
  );
  CREATE INDEX observations_memory ON observations (memory_id);
  CREATE INDEX observations_session ON observations (session_id) WHERE session_id IS NOT NULL;
  CREATE TABLE embeddings (
    memory_id INTEGER NOT NULL REFERENCES memories (id),
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (memory_id, model)
  );
  CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    surface TEXT NOT NULL CHECK (surface IN (${list(SURFACES)})),
    session_id TEXT,
    action TEXT NOT NULL,
    target TEXT,
    before TEXT,
    after TEXT
  );
  CREATE TRIGGER audit_append_only_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  CREATE TRIGGER audit_append_only_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  CREATE TABLE tombstones (
    hash TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    reason TEXT NOT NULL
  );
  CREATE VIRTUAL TABLE memories_fts USING fts5 (text, content = 'memories', content_rowid = 'id', tokenize = 'porter unicode61');
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
  END;
  `,
  // 2: observation text becomes searchable too (evidence merged into a memory keeps its words).
  `
  CREATE VIRTUAL TABLE observations_fts USING fts5 (text, content = 'observations', content_rowid = 'id', tokenize = 'porter unicode61');
  CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts (rowid, text) VALUES (new.id, new.text);
  END;
  CREATE TRIGGER observations_fts_delete AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts (observations_fts, rowid, text) VALUES ('delete', old.id, old.text);
  END;
  INSERT INTO observations_fts (observations_fts) VALUES ('rebuild');
  `,
  // 3: the learning layer: FSRS reviews, threads, predictions, contradiction candidates, dreams.
  `
  CREATE INDEX memories_due ON memories (due);
  CREATE TABLE reviews (
    id INTEGER PRIMARY KEY,
    memory_id INTEGER NOT NULL REFERENCES memories (id),
    at TEXT NOT NULL,
    grade TEXT NOT NULL CHECK (grade IN ('again', 'hard', 'good', 'easy')),
    reason TEXT NOT NULL,
    session_id TEXT,
    retrievability REAL NOT NULL,
    stability_before REAL,
    stability_after REAL NOT NULL
  );
  CREATE INDEX reviews_memory ON reviews (memory_id);
  CREATE TABLE threads (
    memory_id INTEGER PRIMARY KEY REFERENCES memories (id),
    status TEXT NOT NULL CHECK (status IN ('open', 'resolved')),
    solo INTEGER NOT NULL DEFAULT 0 CHECK (solo IN (0, 1)),
    opened_at TEXT NOT NULL,
    resolved_at TEXT,
    resolution TEXT
  );
  CREATE INDEX threads_status ON threads (status);
  CREATE TABLE predictions (
    memory_id INTEGER PRIMARY KEY REFERENCES memories (id),
    confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    due TEXT,
    outcome TEXT CHECK (outcome IN ('correct', 'partly', 'wrong')),
    surprise REAL CHECK (surprise BETWEEN 0 AND 1),
    resolved_at TEXT,
    note TEXT
  );
  CREATE INDEX predictions_resolved ON predictions (resolved_at);
  CREATE TABLE contradiction_candidates (
    id INTEGER PRIMARY KEY,
    a INTEGER NOT NULL REFERENCES memories (id),
    b INTEGER NOT NULL REFERENCES memories (id),
    method TEXT NOT NULL CHECK (method IN ('heuristic', 'gemini', 'explicit')),
    score REAL NOT NULL,
    reason TEXT,
    status TEXT NOT NULL DEFAULT 'candidate' CHECK (status IN ('candidate', 'confirmed', 'dismissed')),
    created_at TEXT NOT NULL,
    UNIQUE (a, b)
  );
  CREATE INDEX contradiction_candidates_b ON contradiction_candidates (b);
  CREATE TABLE dreams (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    last_observation_id INTEGER NOT NULL,
    metrics TEXT NOT NULL
  );
  `,
  // 4: derived memories (a dream's abstractions) are reached through their members, not by their
  // own words: they stay out of the memory text index, so they never shift BM25 or crowd out evidence.
  `
  ALTER TABLE memories ADD COLUMN derived INTEGER NOT NULL DEFAULT 0 CHECK (derived IN (0, 1));
  DROP TRIGGER memories_fts_insert;
  DROP TRIGGER memories_fts_delete;
  DROP TRIGGER memories_fts_update;
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories WHEN new.derived = 0 BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories WHEN old.derived = 0 BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories WHEN old.derived = 0 BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
  END;
  `,
  // 5: ids are never reused. Without AUTOINCREMENT SQLite hands a deleted top id out again, so a
  // forgotten memory's id (in the audit log) or an observation id (a dream's watermark) would come
  // to name another claim. Deletes raise a high-water mark that new ids start above.
  `
  CREATE TABLE id_high (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TRIGGER memories_id_high AFTER DELETE ON memories BEGIN
    INSERT INTO id_high (name, value) VALUES ('memories', old.id) ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value);
  END;
  CREATE TRIGGER observations_id_high AFTER DELETE ON observations BEGIN
    INSERT INTO id_high (name, value) VALUES ('observations', old.id) ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value);
  END;
  `,
  // 6: whose word a memory is (memory/claims.ts). What an agent stated is its claim (0) until used
  // in a later session that ended ok or confirmed by the operator; only confirmed beliefs and values
  // are the state's Identity. Existing beliefs and values no operator stated (audit) and no other
  // session used become claims again.
  `
  ALTER TABLE memories ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 1 CHECK (confirmed IN (0, 1));
  UPDATE memories SET confirmed = 0
   WHERE category IN ('belief', 'value')
     AND NOT EXISTS (SELECT 1 FROM audit a WHERE a.target = 'memory:' || memories.id AND a.surface IN ('cli', 'import') AND a.action IN ('observe', 'believe'))
     AND NOT EXISTS (SELECT 1 FROM reviews r WHERE r.memory_id = memories.id AND r.reason = 'used' AND r.session_id IS NOT NULL
       AND r.session_id NOT IN (SELECT o.session_id FROM observations o WHERE o.memory_id = memories.id AND o.session_id IS NOT NULL));
  `,
  // 7: the category `anneal` (a pass of the self-annealing loop). SQLite cannot alter a CHECK, and
  // rebuilding a table every other table references is a long way round: the constraint's text is
  // widened in place (sqlite.org/lang_altertable.html, "other kinds of table schema changes"); every
  // row already satisfies the wider list. Runs in unsafe mode (see migrate).
  `
  PRAGMA writable_schema = ON;
  UPDATE sqlite_schema SET sql = replace(sql, ${sqlString(`IN (${list(V1_CATEGORIES)})`)}, ${sqlString(`IN (${list(CATEGORIES)})`)})
   WHERE type = 'table' AND name = 'memories';
  PRAGMA writable_schema = OFF;
  `,
  // 8: who said it (memory/text/speaker.ts): each observation's speaker and a memory's first one
  // (existing rows null), the speakers known to the store, and the edge type `shares` (two memories
  // of different sessions holding the same rare words), widened in place as in 7. Unsafe mode.
  `
  ALTER TABLE memories ADD COLUMN speaker TEXT;
  ALTER TABLE observations ADD COLUMN speaker TEXT;
  CREATE TABLE speakers (name TEXT PRIMARY KEY COLLATE NOCASE, memories INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
  PRAGMA writable_schema = ON;
  UPDATE sqlite_schema SET sql = replace(sql, ${sqlString(`IN (${list(V1_EDGE_TYPES)})`)}, ${sqlString(`IN (${list(EDGE_TYPES)})`)})
   WHERE type = 'table' AND name = 'edges';
  PRAGMA writable_schema = OFF;
  `,
  // 9: when it held and whose it is (memory/store/scope.ts). valid_from: since when what a memory
  // says holds, from its first observation's time (an import's conversation date); valid_to: until
  // the memory that superseded it began. scope: the agent whose it is, null shared; every memory
  // written before is shared, as every session saw it.
  `
  ALTER TABLE memories ADD COLUMN valid_from TEXT;
  ALTER TABLE memories ADD COLUMN valid_to TEXT;
  ALTER TABLE memories ADD COLUMN scope TEXT;
  UPDATE memories SET valid_from = coalesce((SELECT min(o.created_at) FROM observations o WHERE o.memory_id = memories.id), created_at);
  UPDATE memories SET valid_to = (SELECT max(n.valid_from, memories.valid_from) FROM memories n WHERE n.id = memories.superseded_by) WHERE superseded_by IS NOT NULL;
  CREATE INDEX memories_scope ON memories (scope) WHERE scope IS NOT NULL;
  `,
  // 10: the `supersedes` edges by their target. A query asks of every candidate whether a newer
  // memory marks it possibly outdated (memory/store/search.ts OUTDATED); through edges_to that read
  // every edge into it (at 10k memories, most of them `shares`), here it is one probe of a small index.
  `
  CREATE INDEX edges_superseding ON edges (to_id) WHERE type = 'supersedes';
  `,
];
// Migrations that edit the schema's own text need SQLite's defensive mode off for their run.
const UNSAFE_MIGRATIONS = new Set([6, 7]);

// The next id of a table, above every id it ever handed out (see migration 5).
export const nextId = (table: 'memories' | 'observations') =>
  `(SELECT max(coalesce((SELECT max(id) FROM ${table}), 0), coalesce((SELECT value FROM id_high WHERE name = '${table}'), 0)) + 1)`;

export const SCHEMA_VERSION = MIGRATIONS.length;

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

// Refuses a file that is not a SQLite database, or is one that is not ours, without writing to
// it. Returns false when there is nothing there yet (a missing or empty file).
export function checkFile(file: string): boolean {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    return false;
  }
  if (size === 0) return false;
  const head = Buffer.alloc(100);
  const fd = withAccess(file, () => fs.openSync(file, 'r'));
  try {
    fs.readSync(fd, head, 0, 100, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (size < 100 || !head.subarray(0, 16).equals(SQLITE_MAGIC)) {
    throw new MemoryError('CORRUPT', `Memory database ${file} is not a SQLite database (corrupt or another kind of file); it was left as it is. Move it aside to start a new store.`);
  }
  let appId: number;
  let tables: number;
  let version: number;
  let db: Database.Database | undefined;
  try {
    // Read-only through SQLite, so a header still in the WAL is seen too.
    db = new Database(file, { readonly: true, fileMustExist: true });
    appId = db.pragma('application_id', { simple: true }) as number;
    version = db.pragma('user_version', { simple: true }) as number;
    tables = (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
  } catch (err) {
    refuseDenied(file);
    throw new MemoryError('CORRUPT', `Memory database ${file} cannot be read (${(err as { code?: string }).code ?? (err as Error).message}); it was left as it is. Move it aside to start a new store.`);
  } finally {
    db?.close();
  }
  // Refused here, read-only, before any pragma that would write (WAL mode changes the header).
  if (appId === APPLICATION_ID && version > SCHEMA_VERSION) {
    throw new MemoryError('INVALID', `Memory database ${file} has schema version ${version}, newer than this nightshift knows (${SCHEMA_VERSION}); it was left as it is. Upgrade nightshift.`);
  }
  if (appId === APPLICATION_ID) return true;
  if (appId === 0 && tables === 0) return false;
  throw new MemoryError('FOREIGN', `Memory database ${file} is a SQLite file that is not a nightshift memory store (application id ${appId}); it was left as it is. Point memory.db elsewhere.`);
}

// A failure that the file's or its folder's permissions explain is told as such (who we run as,
// the owner, the chown/chmod), never as a corrupt file.
function refuseDenied(file: string): void {
  const denied = accessProblem(file, 'memory database');
  if (denied) throw new MemoryError('PERMISSION', denied);
}

function withAccess<T>(file: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    refuseDenied(file);
    throw err;
  }
}

// Opens (creating when absent) and migrates to `upTo` (default: the latest). Refuses a newer schema.
export function openDatabase(file: string, upTo = SCHEMA_VERSION): Database.Database {
  checkFile(file);
  const db = withAccess(file, () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return new Database(file);
  });
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db, file, upTo);
  } catch (err) {
    db.close();
    refuseDenied(file);
    throw err;
  }
  return db;
}

// Runs the migrations above the file's version, each with its version bump, in one transaction.
// The version is read first without a write lock: a store that is current (nearly every open)
// writes nothing, so a writer holding the store does not keep a server or a capture from opening it.
export function migrate(db: Database.Database, file: string, upTo = SCHEMA_VERSION): void {
  const newer = (v: number) => new MemoryError('INVALID', `Memory database ${file} has schema version ${v}, newer than this nightshift knows (${SCHEMA_VERSION}); upgrade nightshift.`);
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) throw newer(current);
  if (current >= upTo) return;
  db.transaction(() => {
    // Again under the lock: another process may have migrated meanwhile.
    const from = db.pragma('user_version', { simple: true }) as number;
    if (from > SCHEMA_VERSION) throw newer(from);
    if (from === 0) db.pragma(`application_id = ${APPLICATION_ID}`);
    for (let v = from; v < upTo; v++) {
      if (UNSAFE_MIGRATIONS.has(v)) {
        db.unsafeMode(true);
        try {
          db.exec(MIGRATIONS[v]);
          // The edited schema is read again by every connection (this one included).
          db.pragma(`schema_version = ${(db.pragma('schema_version', { simple: true }) as number) + 1}`);
        } finally {
          db.unsafeMode(false);
        }
      } else db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
}
