// The one owner of the SQLite file: the connection, prepared statements, transactions, the clock,
// the audit row, and the few row writes every concern shares (a memory with its card, an edge, a
// vector). The concern files beside it (observe, search, cards, beliefs, ...) are functions over
// this core; memory/store.ts composes them into the MemoryStore the rest of nightshift uses.
import type Database from 'better-sqlite3';
import { DEFAULTS } from '../../config/defaults.js';
import { checkThresholds, type GateThresholds } from '../recall/gate.js';
import type { RankWeights } from '../recall/rank.js';
import { initialCard } from '../learning/fsrs.js';
import { ftsQuery } from '../text/text.js';
import { MemoryError, type Actor, type Category, type EdgeType, type Embedder } from '../types.js';
import type { MemoryRow } from './checks.js';
import { DEFAULT_LEARNING, DEFAULT_THRESHOLDS, DEFAULT_WEIGHTS, type LearningSettings, type Logger, type StoreOptions } from './options.js';
import { nextId, openDatabase } from './schema.js';
import { checkAgent, seenSql, standingProblem, type StandingChange } from './scope.js';
import { Tombstones } from './tombstones.js';
import { VectorIndex, fromBlob, toBlob } from './vectors.js';

export class StoreCore {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly rawStatements = new Map<string, Database.Statement>();
  readonly vectors: VectorIndex | null;
  readonly thresholds: GateThresholds;
  readonly weights: RankWeights;
  readonly now: () => Date;
  readonly logger: Logger | null;
  readonly embedder: Embedder | null;
  readonly learning: LearningSettings;
  readonly expandQuery: ((query: string) => Promise<string>) | null;
  readonly tombstones: Tombstones;
  private readonly transactionMode: 'immediate' | 'deferred';
  readonly crossScopeStanding: boolean;
  readonly knowledgeUpdates: boolean;
  // Whose view this is (memory/store/scope.ts): an agent reads its own and the shared memories and
  // writes its own; null, the operator, reads all and writes shared.
  readonly agent: string | null = null;
  // Observation count and per-term document frequency, cached (memory/store/search.ts); one set of
  // counts for every view of the connection (`as`).
  private readonly counts = { docs: -1, lastEmbedded: 0 };
  readonly dfCache = new Map<string, { df: number; docs: number }>();
  get docs(): number {
    return this.counts.docs;
  }
  set docs(n: number) {
    this.counts.docs = n;
  }
  // Where `reembed` left off.
  get lastEmbedded(): number {
    return this.counts.lastEmbedded;
  }
  set lastEmbedded(n: number) {
    this.counts.lastEmbedded = n;
  }

  private constructor(readonly db: Database.Database, readonly file: string, opts: StoreOptions) {
    this.agent = checkAgent(opts.agent ?? null);
    this.embedder = opts.embedder ?? null;
    this.thresholds = { ...DEFAULT_THRESHOLDS, ...opts.thresholds };
    const bad = checkThresholds(this.thresholds);
    if (bad) throw new MemoryError('INVALID', bad);
    this.weights = { ...DEFAULT_WEIGHTS, ...opts.weights, edges: { ...DEFAULT_WEIGHTS.edges, ...opts.weights?.edges } };
    this.now = opts.now ?? (() => new Date());
    this.logger = opts.logger ?? null;
    this.learning = { ...DEFAULT_LEARNING, ...opts.learning };
    this.expandQuery = opts.expandQuery ?? null;
    this.transactionMode = opts.transactionMode ?? 'immediate';
    this.crossScopeStanding = opts.crossScopeStanding ?? false;
    this.knowledgeUpdates = opts.knowledgeUpdates ?? true;
    this.tombstones = new Tombstones(db, opts.forgetSimilarity ?? DEFAULTS.memory.forget_similarity);
    this.vectors = this.embedder ? new VectorIndex(this.embedder.model, this.embedder.dim) : null;
  }

  /** Opens (or creates) the file. Throws MemoryError CORRUPT or FOREIGN, naming the file, for a file that is not ours; it is never overwritten. */
  static open(file: string, opts: StoreOptions, init: (core: StoreCore) => void): StoreCore {
    const db = openDatabase(file);
    try {
      const core = new StoreCore(db, file, opts);
      init(core);
      core.loadVectors();
      return core;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  // The same connection, statements, index and counts, seen as `agent` sees them (null: the operator).
  as(agent: string | null): StoreCore {
    const view = Object.create(this) as StoreCore;
    Object.defineProperty(view, 'agent', { value: checkAgent(agent), enumerable: true });
    return view;
  }

  // SQL that holds for the rows of `alias` this view may see: its agent's and the shared ones.
  seen(alias = 'memories'): string {
    return seenSql(this.agent, alias);
  }

  // Why this view may not make `change` to what every reader of `touched` sees (scope.ts), or
  // null; the test-only option `crossScopeStanding` lifts the rule, as a negative control.
  standingProblem(change: StandingChange, touched: Array<{ id: number; scope: string | null }>): { code: 'PERMISSION'; message: string } | null {
    return this.crossScopeStanding ? null : standingProblem(this.agent, change, touched);
  }

  // The same, thrown: MemoryError PERMISSION, before anything is written.
  mayChange(change: StandingChange, ...touched: Array<{ id: number; scope: string | null }>): void {
    const problem = this.standingProblem(change, touched);
    if (problem) throw new MemoryError(problem.code, problem.message);
  }

  private loadVectors(): void {
    if (!this.vectors) return;
    for (const r of this.stmt('SELECT memory_id, vector FROM embeddings WHERE model = ? AND dim = ?').iterate(this.vectors.model, this.vectors.dim) as Iterable<{ memory_id: number; vector: Buffer }>) {
      this.vectors.set(r.memory_id, fromBlob(r.vector));
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  // Every write takes the write lock as it begins (BEGIN IMMEDIATE), so the busy timeout applies:
  // in WAL mode a deferred transaction that has read cannot wait for another writer and fails at once.
  write<T>(fn: () => T): () => T {
    const t = this.db.transaction(fn);
    return () => t[this.transactionMode]();
  }

  // Reads that must see one state of the store, in one read transaction (BEGIN DEFERRED): a
  // query's reads (seven or more) took a WAL read lock each, and a write between two of them could
  // be seen by one and not the other. Inside a caller's transaction, that one.
  read<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    this.stmt('BEGIN DEFERRED').run();
    try {
      return fn();
    } finally {
      if (this.db.inTransaction) this.stmt('COMMIT').run();
    }
  }

  stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) this.statements.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  // The same, each row an array of its columns (better-sqlite3's raw mode), for a query's hot reads:
  // made into objects by better-sqlite3 a row cost ~0.4 µs more than the caller's own object literal
  // (~140 candidate rows a query at 10k memories). A statement of its own: raw mode is the statement's.
  rawStmt(sql: string): Database.Statement {
    let st = this.rawStatements.get(sql);
    if (!st) this.rawStatements.set(sql, (st = this.db.prepare(sql).raw(true)));
    return st;
  }

  iso(): string {
    return this.now().toISOString();
  }

  audit(actor: Actor, action: string, target: string | null, before: unknown, after: unknown): void {
    this.stmt('INSERT INTO audit (at, surface, session_id, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
      this.iso(),
      actor.surface,
      actor.sessionId ?? null,
      action,
      target,
      before === null || before === undefined ? null : JSON.stringify(before),
      after === null || after === undefined ? null : JSON.stringify(after),
    );
  }

  row(id: number): MemoryRow {
    // Another agent's private memory is not there for this view.
    const r = this.stmt(`SELECT id, text, category, salience, confidence, access_count, tags, created_at, updated_at, faded, superseded_by, valid_from, valid_to, scope FROM memories WHERE id = ? AND ${this.seen()}`).get(id) as MemoryRow | undefined;
    if (!r) throw new MemoryError('NOT_FOUND', `No memory with id ${id}`);
    return r;
  }

  upsertEdge(from: number, to: number, type: EdgeType, weight: number): void {
    this.stmt(
      `INSERT INTO edges (from_id, to_id, type, weight, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (from_id, to_id, type) DO UPDATE SET weight = max(weight, excluded.weight)`,
    ).run(from, to, type, weight, this.iso());
  }

  // A new memory row with its first FSRS card (observing is its first learning; no grade recorded).
  // `validFrom`: when what it says began to hold (default `at`); `scope`: its agent, null shared.
  insertMemory(text: string, category: Category, salience: number, tags: string[], at: string, confidence = 0.5, derived = false, confirmed = true, o: { validFrom?: string | null; scope?: string | null } = {}): number {
    const c = initialCard(at);
    return Number(
      this.stmt(
        `INSERT INTO memories (id, text, category, salience, confidence, tags, created_at, updated_at, due, stability, difficulty, elapsed_days, scheduled_days, reps, lapses, state, last_review, derived, confirmed, valid_from, scope)
         VALUES (${nextId('memories')}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(text, category, salience, confidence, JSON.stringify(tags), at, at, c.due, c.stability, c.difficulty, c.elapsed_days, c.scheduled_days, c.reps, c.lapses, c.state, c.last_review, derived ? 1 : 0, confirmed ? 1 : 0, o.validFrom ?? at, o.scope ?? null).lastInsertRowid,
    );
  }

  // A memory's vector, in the table and in the index (nothing without an embedder or a vector).
  putVector(id: number, vec: Float32Array | null | undefined): void {
    if (!vec || !this.vectors) return;
    this.stmt('INSERT OR REPLACE INTO embeddings (memory_id, model, dim, vector) VALUES (?, ?, ?, ?)').run(id, this.vectors.model, this.vectors.dim, toBlob(vec));
    this.vectors.set(id, vec);
  }

  // `kind` lets a model that tells queries from documents (Gemini task types) do so; others ignore it.
  async embed(texts: string[], kind: 'document' | 'query' = 'document'): Promise<Array<Float32Array | null>> {
    if (!this.embedder || !texts.length) return texts.map(() => null);
    try {
      const vs = await (this.embedder.embed as (t: string[], k?: 'document' | 'query') => Promise<Float32Array[]>).call(this.embedder, texts, kind);
      if (vs.length !== texts.length || vs.some((v) => v.length !== this.embedder!.dim)) {
        throw new Error(`Expected ${texts.length} vectors of ${this.embedder.dim} dimensions from ${this.embedder.model}`);
      }
      return vs;
    } catch (err) {
      // Lexical recall still works; the vectors are filled in later by `reembed`.
      this.logger?.warn({ err, model: this.embedder.model, texts: texts.length }, 'memory: embedding failed, continuing without vectors');
      return texts.map(() => null);
    }
  }

  // Counting a term costs as much as it is common, and a count a few rows stale changes no decision.
  docCount(): number {
    if (this.docs < 0) this.docs = (this.stmt('SELECT count(*) AS n FROM observations').get() as { n: number }).n;
    return this.docs;
  }

  df(term: string): number {
    const docs = this.docCount();
    const c = this.dfCache.get(term);
    if (c && docs <= c.docs * 1.1 + 20) return c.df;
    const df = (this.stmt('SELECT count(*) AS n FROM observations_fts WHERE observations_fts MATCH ?').get(ftsQuery([term])) as { n: number }).n;
    if (this.dfCache.size > 50_000) this.dfCache.clear();
    this.dfCache.set(term, { df, docs });
    return df;
  }

  // After rows leave the text indices: the cached counts are recounted on next use.
  forgetCounts(): void {
    this.docs = -1;
    this.dfCache.clear();
  }
}
