// The memory store, the one owner of its SQLite file: observe through the prediction-error gate,
// query through lexical and vector arms with spreading activation, and one audit row per mutation.
import type Database from 'better-sqlite3';
import { DEFAULTS } from '../daemon/config/defaults.js';
import { checkThresholds, gateDecision, predictionError, type GateThresholds } from './gate.js';
import { fuseRanks, rankCandidates, spreadActivation, type Adjacency, type Candidate, type RankWeights } from './rank.js';
import { nextId, SCHEMA_VERSION, openDatabase } from './schema.js';
import { contentTerms, dice, ftsQuery, tokens } from './text.js';
import { fieldsProblem } from './text-hygiene.js';
import { observationFields, Tombstones } from './tombstones.js';
import { redactAudit } from './forget-redact.js';
import { heuristicVerdict } from './contradiction.js';
import { confirmedAfterBelieve, confirmedAtCreation, confirmsByUse, isOperator } from './claims.js';
import { GRADES, initialCard, retrievability as retrievabilityAt, review as reviewCard, type CardRow, type GradeReason } from './fsrs.js';
import { WANDER_DEFAULTS, seededRng, walk, type Rng, type WanderGraph } from './wander.js';
import { VectorIndex, fromBlob, toBlob } from './vectors.js';
import {
  CATEGORIES,
  EDGE_TYPES,
  MemoryError,
  SURFACES,
  type Actor,
  type Category,
  type EdgeType,
  type Embedder,
  type GateDecision,
  type MemoryRecord,
  type MemoryStats,
  type ObserveInput,
  type ObserveResult,
  type QueryOptions,
  type QueryResult,
  type BeliefRecord,
  type ContradictionCandidate,
  type GradeName,
  type OverdueRecord,
  type PredictionOutcome,
  type ReviewResult,
  type SessionUse,
  type SurpriseRecord,
  type ThreadRecord,
  type WanderItem,
} from './types.js';

// pino-compatible; the store never writes to stdout.
export type Logger = { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void; debug?(obj: object, msg?: string): void };

export type StoreOptions = {
  embedder?: Embedder | null;
  thresholds?: Partial<GateThresholds>;
  weights?: Partial<RankWeights>;
  now?: () => Date;
  logger?: Logger | null;
  learning?: Partial<LearningSettings>;
  // HyDE (memory/hyde.ts, with Gemini): the query plus a guessed answer passage, for the vector
  // arm only; the lexical arm keeps the words the caller asked.
  expandQuery?: ((query: string) => Promise<string>) | null;
  // Test-only: `deferred` shows, as a negative control, the lost writes IMMEDIATE prevents.
  transactionMode?: 'immediate' | 'deferred';
  // Config `memory.forget_similarity`: a text this close to a forgotten one is refused.
  forgetSimilarity?: number;
};

// The learning layer's knobs (config `memory.learning`): wander's jump rate, and what dream fades.
export type LearningSettings = { wander_jump: number; fade_retrievability: number; fade_salience: number };
// R < 0.5 under FSRS-6's flat power curve: a memory never used since its creation (S = 2.3 days) reaches it after ~7 months.
export const DEFAULT_LEARNING: LearningSettings = { wander_jump: 0.4, fade_retrievability: 0.5, fade_salience: 0.3 };

// An import line (the same shape `exportAll` writes).
export type ExportLine = { text: string; source?: string | null; created_at?: string; tags?: string[]; category?: Category };

type MemoryRow = {
  id: number;
  text: string;
  category: Category;
  salience: number;
  confidence: number;
  access_count: number;
  tags: string;
  created_at: string;
  updated_at: string;
  faded: number;
  superseded_by: number | null;
};

type Clean = { text: string; source: string | null; created_at: string | null; salience: number; tags: string[]; category: Category };

const LEXICAL_DEPTH = 200; // rows each arm contributes to the fusion
const GATE_CANDIDATES = 8;
const GATE_TERMS = 4;
const GATE_SCORE_BUDGET = 400; // rows BM25 may score per gate decision
const GATE_RECENT = 32;
const MAX_TEXT = 20_000;
const IMPORT_BATCH = 500;
const DAY_MS = 86_400_000;
// An abstraction's edges to its members: light, so a hit on one member does not lift all its
// siblings through the abstraction (LoCoMo dev after a dream, recall@10: 0.8 cost 1.5 points, 0.2
// cost 0.4 at @20, 0.05 costs nothing).
const ABSTRACT_EDGE_WEIGHT = 0.05;

export const DEFAULT_THRESHOLDS: GateThresholds = { ...DEFAULTS.memory.gate };
export const DEFAULT_WEIGHTS: RankWeights = { ...DEFAULTS.memory.recall, edges: { ...DEFAULTS.memory.recall.edges } };

const ids = (xs: Iterable<number>) => JSON.stringify([...xs]);

export class MemoryStore {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly vectors: VectorIndex | null;
  readonly thresholds: GateThresholds;
  readonly weights: RankWeights;
  private readonly now: () => Date;
  private readonly logger: Logger | null;
  private readonly embedder: Embedder | null;
  readonly learning: LearningSettings;
  private readonly transactionMode: 'immediate' | 'deferred';
  private readonly tombstones: Tombstones;

  private constructor(private readonly db: Database.Database, readonly file: string, opts: StoreOptions) {
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
    this.tombstones = new Tombstones(db, opts.forgetSimilarity ?? DEFAULTS.memory.forget_similarity);
    this.backfillCards();
    this.vectors = this.embedder ? new VectorIndex(this.embedder.model, this.embedder.dim) : null;
    if (this.vectors) {
      for (const r of this.stmt('SELECT memory_id, vector FROM embeddings WHERE model = ? AND dim = ?').iterate(this.vectors.model, this.vectors.dim) as Iterable<{ memory_id: number; vector: Buffer }>) {
        this.vectors.set(r.memory_id, fromBlob(r.vector));
      }
    }
  }

  /** Opens (or creates) the store at `file`. Throws MemoryError CORRUPT or FOREIGN, naming the file, for a file that is not ours; it is never overwritten. */
  static open(file: string, opts: StoreOptions = {}): MemoryStore {
    const db = openDatabase(file);
    try {
      return new MemoryStore(db, file, opts);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  // Every write takes the write lock as it begins (BEGIN IMMEDIATE), so the busy timeout applies:
  // in WAL mode a deferred transaction that has read cannot wait for another writer and fails at once.
  private write<T>(fn: () => T): () => T {
    const t = this.db.transaction(fn);
    return () => t[this.transactionMode]();
  }

  private stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) this.statements.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  private iso(): string {
    return this.now().toISOString();
  }

  private audit(actor: Actor, action: string, target: string | null, before: unknown, after: unknown): void {
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

  // ---- observe ------------------------------------------------------------------------------

  /** Records one observation through the gate. Throws MemoryError TOMBSTONED (saying why) or INVALID. */
  async observe(input: ObserveInput, actor: Actor): Promise<ObserveResult> {
    return this.gated(input, actor, (clean, vec) => {
      const prev = actor.sessionId
        ? ((this.stmt('SELECT memory_id FROM observations WHERE session_id = ? ORDER BY id DESC LIMIT 1').get(actor.sessionId) as { memory_id: number } | undefined)?.memory_id ?? null)
        : null;
      return this.observeOne(clean, actor, vec, prev);
    });
  }

  // One input checked, refused if tombstoned, embedded, then `write` in a transaction that checks
  // the tombstones again (a forget may have landed while the embedder was awaited).
  private async gated<T>(input: ObserveInput, actor: Actor, write: (clean: Clean, vec: Float32Array | null) => T): Promise<T> {
    checkActor(actor);
    const clean = validate(input);
    this.tombstones.refuse(observationFields(clean));
    const [vec] = await this.embed([clean.text]);
    return this.write(() => {
      this.tombstones.refuse(observationFields(clean));
      return write(clean, vec ?? null);
    })();
  }

  /**
   * Imports many observations through the same gate, one transaction per batch; the answer is in
   * input order, an ObserveResult or the MemoryError that refused that line (tombstoned, invalid).
   * A line right after one with the same explicit `created_at` is linked to it as `follows`.
   */
  async observeMany(
    inputs: Iterable<ObserveInput> | AsyncIterable<ObserveInput>,
    actor: Actor,
    onProgress?: (done: number) => void,
  ): Promise<Array<ObserveResult | MemoryError>> {
    checkActor(actor);
    const out: Array<ObserveResult | MemoryError> = [];
    let batch: Array<{ index: number; clean: Clean }> = [];
    const flush = async () => {
      const vecs = await this.embed(batch.map((b) => b.clean.text));
      this.write(() => {
        batch.forEach(({ index, clean }, k) => {
          try {
            this.tombstones.refuse(observationFields(clean));
            out[index] = this.observeOne(clean, actor, vecs[k], clean.created_at === null ? null : this.previousAt(clean.created_at, actor));
          } catch (err) {
            if (!(err instanceof MemoryError)) throw err;
            out[index] = err;
          }
        });
      })();
      batch = [];
      onProgress?.(out.length);
    };
    let index = 0;
    for await (const input of inputs) {
      try {
        batch.push({ index, clean: validate(input) });
      } catch (err) {
        if (!(err instanceof MemoryError)) throw err;
        out[index] = err;
      }
      index++;
      if (batch.length >= IMPORT_BATCH) await flush();
    }
    if (batch.length) await flush();
    else onProgress?.(out.length);
    return out;
  }

  // The memory of the last observation stored, when it has this exact time and the same session:
  // the previous turn of the same conversation.
  private previousAt(createdAt: string, actor: Actor): number | null {
    const r = this.stmt('SELECT memory_id, created_at, session_id FROM observations ORDER BY id DESC LIMIT 1').get() as
      | { memory_id: number; created_at: string; session_id: string | null }
      | undefined;
    return r && r.created_at === createdAt && r.session_id === (actor.sessionId ?? null) ? r.memory_id : null;
  }

  // Inside a transaction: gate, write the memory, the observation, the edges and one audit row.
  private observeOne(clean: Clean, actor: Actor, vec: Float32Array | null, follows: number | null, opts: { noMerge?: boolean } = {}): ObserveResult {
    const at = clean.created_at ?? this.iso();
    const neighbours: Array<{ id: number; text: string; lexical: number }> = [];
    const near = this.nearest(clean.text, vec, neighbours);
    const similarity = near?.similarity ?? 0;
    let decision: GateDecision = near ? gateDecision(similarity, this.thresholds) : 'novel';
    // A vector alone can relate two texts, not make them one claim: sentence encoders rate many
    // different remarks above 0.9, so a merge also needs the words to agree.
    if (decision === 'merge' && near!.lexical < this.thresholds.link) decision = 'link';
    // Predictions and threads are events of their own: never folded into an older memory.
    if (decision === 'merge' && opts.noMerge) decision = 'link';
    let memoryId: number;
    let before: MemoryRow | null = null;
    let graded: GradeName | null = null;
    if (decision === 'merge') {
      memoryId = near!.id;
      before = this.row(memoryId);
      const tags = JSON.stringify([...new Set([...JSON.parse(before.tags), ...clean.tags])]);
      // Seen again: salience climbs toward 1, and the memory is as recent as its newest evidence.
      const salience = Math.min(1, Math.max(before.salience, clean.salience) + 0.1 * (1 - before.salience));
      this.stmt('UPDATE memories SET salience = ?, access_count = access_count + 1, tags = ?, updated_at = max(updated_at, ?) WHERE id = ?').run(salience, tags, at, memoryId);
      // Confirmed by new evidence: an Easy review (docs/memory.md).
      this.applyGrade(memoryId, 'easy', 'confirmed', actor, new Date(at));
      graded = 'easy';
    } else {
      memoryId = this.insertMemory(clean.text, clean.category, clean.salience, clean.tags, at, 0.5, false, confirmedAtCreation(actor));
      if (vec && this.vectors) {
        this.stmt('INSERT OR REPLACE INTO embeddings (memory_id, model, dim, vector) VALUES (?, ?, ?, ?)').run(memoryId, this.vectors.model, this.vectors.dim, toBlob(vec));
        this.vectors.set(memoryId, vec);
      }
      if (decision === 'link') this.upsertEdge(memoryId, near!.id, 'relates_to', round(similarity));
    }
    const pe = round(predictionError(similarity));
    const observationId = Number(
      this.stmt(`INSERT INTO observations (id, text, source, created_at, salience, prediction_error, decision, memory_id, session_id) VALUES (${nextId('observations')}, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        clean.text,
        clean.source,
        at,
        clean.salience,
        pe,
        decision,
        memoryId,
        actor.sessionId ?? null,
      ).lastInsertRowid,
    );
    if (this.docs >= 0) this.docs++;
    if (follows !== null && follows !== memoryId) this.upsertEdge(follows, memoryId, 'follows', 1);
    const result: ObserveResult = { observation_id: observationId, memory_id: memoryId, decision, prediction_error: pe, linked_to: decision === 'link' ? near!.id : null };
    // A new claim that says the opposite of a close memory is recorded as a candidate, never applied.
    const candidates = decision === 'merge' ? [] : this.heuristicCandidates(memoryId, clean.text, neighbours);
    this.audit(actor, 'observe', `memory:${memoryId}`, before && publicRow(before), {
      ...result, source: clean.source, follows, ...(graded ? { graded } : {}), ...(candidates.length ? { contradiction_candidates: candidates } : {}),
    });
    return result;
  }

  // The closest active memory: Dice over words among the BM25 candidates, and cosine (same model)
  // when there is a vector; the better of the two. `lexical` is the words' agreement with it.
  private nearest(text: string, vec: Float32Array | null, neighbours?: Array<{ id: number; text: string; lexical: number }>): { id: number; similarity: number; lexical: number } | null {
    let best: { id: number; similarity: number; lexical: number } | null = null;
    const consider = (id: number, similarity: number, lexical: number) => {
      if (!best || similarity > best.similarity || (similarity === best.similarity && id < best.id)) best = { id, similarity, lexical };
    };
    const words = tokens(text);
    const content = contentTerms(text);
    const lexical = new Map<number, number>();
    for (const r of this.gateCandidates(content.length ? content : [...new Set(words)].slice(0, 48))) {
      const d = dice(words, tokens(r.text));
      lexical.set(r.id, d);
      consider(r.id, d, d);
      neighbours?.push({ id: r.id, text: r.text, lexical: d });
    }
    if (vec && this.vectors?.size) {
      for (const hit of this.vectors.top(vec, 3)) {
        const r = this.stmt('SELECT text, faded, superseded_by FROM memories WHERE id = ?').get(hit.id) as { text: string; faded: number; superseded_by: number | null } | undefined;
        if (r && !r.faded && r.superseded_by === null) consider(hit.id, Math.max(0, hit.score), lexical.get(hit.id) ?? dice(words, tokens(r.text)));
      }
    }
    return best;
  }

  // Memories that could be near-duplicates: a near-duplicate shares the rarest words, so those
  // are searched, by BM25 while they are rare enough to score cheaply; when even the rarest word
  // is common, the newest memories holding it (FTS5 walks rowids without scoring).
  private gateCandidates(terms: string[]): Array<{ id: number; text: string }> {
    if (!terms.length) return [];
    const ranked = this.selective(terms, GATE_TERMS, 1).map((t) => ({ t, df: this.df(t) }));
    const pick: string[] = [];
    let cost = 0;
    for (const x of ranked) {
      if (pick.length && cost + x.df > GATE_SCORE_BUDGET) break;
      pick.push(x.t);
      cost += x.df;
    }
    const active = 'm.faded = 0 AND m.superseded_by IS NULL';
    if (cost <= GATE_SCORE_BUDGET) {
      return this.stmt(
        `SELECT m.id, m.text FROM memories_fts f JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ? AND ${active} ORDER BY f.rank LIMIT ${GATE_CANDIDATES}`,
      ).all(ftsQuery(pick)) as Array<{ id: number; text: string }>;
    }
    return this.stmt(
      `SELECT m.id, m.text FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT ${GATE_RECENT}) f
       JOIN memories m ON m.id = f.rowid WHERE ${active}`,
    ).all(ftsQuery(pick)) as Array<{ id: number; text: string }>;
  }

  // Observation count and per-term document frequency, cached: counting a term costs as much as
  // it is common, and a count a few rows stale changes no decision.
  private docs = -1;
  private readonly dfCache = new Map<string, { df: number; docs: number }>();
  private docCount(): number {
    if (this.docs < 0) this.docs = (this.stmt('SELECT count(*) AS n FROM observations').get() as { n: number }).n;
    return this.docs;
  }
  private df(term: string): number {
    const docs = this.docCount();
    const c = this.dfCache.get(term);
    if (c && docs <= c.docs * 1.1 + 20) return c.df;
    const df = (this.stmt('SELECT count(*) AS n FROM observations_fts WHERE observations_fts MATCH ?').get(ftsQuery([term])) as { n: number }).n;
    if (this.dfCache.size > 50_000) this.dfCache.clear();
    this.dfCache.set(term, { df, docs });
    return df;
  }

  // Terms worth matching: those in more than `common` of all observations say little and cost a
  // scan of most of the index, so they go when rarer ones remain; the `max` rarest are kept.
  private selective(terms: string[], max: number, common: number): string[] {
    if (terms.length <= 1) return terms;
    const docs = Math.max(1, this.docCount());
    const withDf = terms.map((t) => ({ t, df: this.df(t) }));
    const rare = withDf.filter((x) => x.df / docs <= common);
    return (rare.length ? rare : withDf).sort((a, b) => a.df - b.df).slice(0, max).map((x) => x.t);
  }

  // `kind` lets a model that tells queries from documents (Gemini task types) do so; others ignore it.
  private async embed(texts: string[], kind: 'document' | 'query' = 'document'): Promise<Array<Float32Array | null>> {
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

  private upsertEdge(from: number, to: number, type: EdgeType, weight: number): void {
    this.stmt(
      `INSERT INTO edges (from_id, to_id, type, weight, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (from_id, to_id, type) DO UPDATE SET weight = max(weight, excluded.weight)`,
    ).run(from, to, type, weight, this.iso());
  }

  // ---- query --------------------------------------------------------------------------------

  /** Ranked memories for `text`: lexical and vector arms fused by rank, then spreading activation, recency and salience. */
  async query(text: string, opts: QueryOptions = {}): Promise<QueryResult[]> {
    if (typeof text !== 'string') throw new MemoryError('INVALID', `Expected the query to be a string, got ${typeof text}`);
    const limit = opts.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new MemoryError('INVALID', `Expected limit to be a whole number from 1 to 1000, got ${limit}`);
    const vectorText = this.vectors?.size && text.trim() && this.expandQuery ? await this.expandQuery(text) : text;
    const [qvec] = this.vectors?.size && text.trim() ? await this.embed([vectorText], 'query') : [null];
    return this.rank(text, qvec, { ...opts, limit });
  }

  private rank(text: string, qvec: Float32Array | null, opts: QueryOptions & { limit: number }): QueryResult[] {
    const w = this.weights;
    const q = ftsQuery(this.selective(contentTerms(text), 48, w.common));
    // One lexical list: each memory by the better BM25 of its own text and of its evidence.
    const lexical = new Map<number, number>();
    if (q) {
      const best = (id: number, score: number) => lexical.set(id, Math.max(lexical.get(id) ?? -Infinity, score));
      for (const r of this.stmt(`SELECT rowid AS id, -rank AS s FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ${LEXICAL_DEPTH}`).all(q) as Array<{ id: number; s: number }>) best(r.id, r.s);
      for (const r of this.stmt(
        `SELECT o.memory_id AS id, -f.rank AS s FROM observations_fts f JOIN observations o ON o.id = f.rowid
         WHERE observations_fts MATCH ? ORDER BY f.rank LIMIT ${LEXICAL_DEPTH}`,
      ).all(q) as Array<{ id: number; s: number }>) best(r.id, r.s);
    }
    const lexList = [...lexical].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([id]) => id);
    const vector = new Map<number, number>();
    const vecList: number[] = [];
    if (qvec && this.vectors) {
      for (const h of this.vectors.top(qvec, LEXICAL_DEPTH)) {
        vecList.push(h.id);
        vector.set(h.id, h.score);
      }
    }
    const fused = fuseRanks(
      [
        { weight: w.lexical, ids: lexList },
        { weight: w.vector, ids: vecList },
      ],
      w.rrf_k,
    );
    if (!fused.size) return [];
    const top = Math.max(...fused.values());
    const seeds = new Map([...fused].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, w.seeds).map(([id, s]) => [id, s / top] as [number, number]));
    const activation = w.activation && w.hops > 0 ? spreadActivation(seeds, this.adjacency(seeds.keys(), w.hops), w) : new Map<number, number>();

    const candidateIds = new Set([...fused.keys(), ...activation.keys()]);
    const rows = this.stmt(
      `SELECT id, salience, updated_at, faded, superseded_by FROM memories WHERE id IN (SELECT value FROM json_each(?))`,
    ).all(ids(candidateIds)) as Array<{ id: number; salience: number; updated_at: string; faded: number; superseded_by: number | null }>;
    const nowMs = this.now().getTime();
    const cands: Candidate[] = [];
    for (const r of rows) {
      if (!opts.include_faded && (r.faded || r.superseded_by !== null)) continue;
      cands.push({
        id: r.id,
        lexical: lexical.get(r.id) ?? 0,
        vector: vector.get(r.id) ?? 0,
        fused: fused.get(r.id) ?? 0,
        activation: activation.get(r.id) ?? 0,
        ageDays: (nowMs - Date.parse(r.updated_at)) / DAY_MS,
        salience: r.salience,
      });
    }
    const ranked = rankCandidates(cands, w).slice(0, opts.limit);
    const sources = this.sourcesOf(ranked.map((r) => r.id));
    const byId = new Map(
      (this.stmt('SELECT id, text, category, faded, superseded_by FROM memories WHERE id IN (SELECT value FROM json_each(?))').all(ids(ranked.map((r) => r.id))) as Array<
        Pick<MemoryRow, 'id' | 'text' | 'category' | 'faded' | 'superseded_by'>
      >).map((r) => [r.id, r]),
    );
    return ranked.map((r) => {
      const m = byId.get(r.id)!;
      const out: QueryResult = { id: r.id, text: m.text, category: m.category, score: round(r.score, 6), sources: sources.get(r.id) ?? [], faded: !!m.faded, superseded: m.superseded_by !== null };
      if (opts.explain) out.explain = Object.fromEntries(Object.entries(r.parts).map(([k, v]) => [k, round(v, 6)])) as QueryResult['explain'];
      return out;
    });
  }

  // The edges around `start`, out to `hops` hops, both directions.
  private adjacency(start: Iterable<number>, hops: number): Adjacency {
    const adj: Adjacency = new Map();
    let frontier = [...start];
    const loaded = new Set<number>();
    for (let h = 0; h < hops && frontier.length; h++) {
      for (const id of frontier) loaded.add(id);
      const rows = this.stmt(
        `SELECT from_id, to_id, type, weight FROM edges WHERE from_id IN (SELECT value FROM json_each(?))
         UNION ALL SELECT from_id, to_id, type, weight FROM edges WHERE to_id IN (SELECT value FROM json_each(?))`,
      ).all(ids(frontier), ids(frontier)) as Array<{ from_id: number; to_id: number; type: EdgeType; weight: number }>;
      const next = new Set<number>();
      const seen = new Set<string>();
      for (const e of rows) {
        const key = `${e.from_id}>${e.to_id}>${e.type}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const add = (a: number, b: number) => {
          if (!adj.has(a)) adj.set(a, []);
          if (!adj.get(a)!.some((x) => x.to === b && x.type === e.type)) adj.get(a)!.push({ to: b, weight: e.weight, type: e.type });
          if (!loaded.has(b)) next.add(b);
        };
        add(e.from_id, e.to_id);
        add(e.to_id, e.from_id);
      }
      frontier = [...next];
    }
    return adj;
  }

  private sourcesOf(memoryIds: number[]): Map<number, string[]> {
    const out = new Map<number, string[]>();
    if (!memoryIds.length) return out;
    const rows = this.stmt(
      `SELECT memory_id, source FROM observations WHERE memory_id IN (SELECT value FROM json_each(?)) AND source IS NOT NULL ORDER BY created_at, id`,
    ).all(ids(memoryIds)) as Array<{ memory_id: number; source: string }>;
    for (const r of rows) {
      const list = out.get(r.memory_id) ?? [];
      if (!list.includes(r.source)) list.push(r.source);
      out.set(r.memory_id, list);
    }
    return out;
  }

  // ---- read ---------------------------------------------------------------------------------

  private row(id: number): MemoryRow {
    const r = this.stmt('SELECT id, text, category, salience, confidence, access_count, tags, created_at, updated_at, faded, superseded_by FROM memories WHERE id = ?').get(id) as MemoryRow | undefined;
    if (!r) throw new MemoryError('NOT_FOUND', `No memory with id ${id}`);
    return r;
  }

  /** One memory with its sources and edges. Throws MemoryError NOT_FOUND. */
  recall(id: number): MemoryRecord {
    if (!Number.isInteger(id)) throw new MemoryError('INVALID', `Expected a memory id (a whole number), got ${JSON.stringify(id)}`);
    const r = this.row(id);
    const edges = (this.stmt(
      `SELECT type, to_id AS other, weight, 'out' AS direction FROM edges WHERE from_id = ?
       UNION ALL SELECT type, from_id AS other, weight, 'in' AS direction FROM edges WHERE to_id = ? ORDER BY 2`,
    ).all(id, id) as Array<{ type: EdgeType; other: number; weight: number; direction: 'out' | 'in' }>).map((e) => ({ type: e.type, to: e.other, weight: e.weight, direction: e.direction }));
    const card = this.card(id);
    return { ...publicRow(r), sources: this.sourcesOf([id]).get(id) ?? [], edges, retrievability: round(retrievabilityAt(card, this.now(), card.created_at)), due: card.due };
  }

  stats(): MemoryStats {
    const one = (sql: string, ...args: unknown[]) => (this.stmt(sql).get(...args) as { n: number }).n;
    const by = this.stmt('SELECT category, count(*) AS n FROM memories GROUP BY category').all() as Array<{ category: Category; n: number }>;
    return {
      memories: one('SELECT count(*) AS n FROM memories'),
      observations: one('SELECT count(*) AS n FROM observations'),
      edges: one('SELECT count(*) AS n FROM edges'),
      faded: one('SELECT count(*) AS n FROM memories WHERE faded = 1'),
      superseded: one('SELECT count(*) AS n FROM memories WHERE superseded_by IS NOT NULL'),
      tombstones: one('SELECT count(*) AS n FROM tombstones'),
      by_category: Object.fromEntries(by.map((r) => [r.category, r.n])),
      embedding_model: this.embedder?.model ?? null,
      embedded: this.vectors ? this.vectors.size : 0,
      schema_version: this.db.pragma('user_version', { simple: true }) as number,
      file: this.file,
      ...this.learningStats(),
    };
  }

  private learningStats(): Pick<MemoryStats, 'retrievability' | 'overdue' | 'reviews' | 'threads_open' | 'predictions_open' | 'contradiction_candidates'> {
    const one = (sql: string, ...args: unknown[]) => (this.stmt(sql).get(...args) as { n: number }).n;
    const at = this.now();
    let sum = 0;
    let n = 0;
    let low = 0;
    for (const r of this.stmt('SELECT stability, last_review, created_at FROM memories WHERE faded = 0 AND superseded_by IS NULL').iterate() as Iterable<{ stability: number; last_review: string | null; created_at: string }>) {
      const x = retrievabilityAt(r, at, r.created_at);
      sum += x;
      n++;
      if (x < 0.5) low++;
    }
    return {
      retrievability: { mean: n ? round(sum / n) : 0, below_half: low },
      overdue: one('SELECT count(*) AS n FROM memories WHERE due <= ? AND faded = 0 AND superseded_by IS NULL', at.toISOString()),
      reviews: one('SELECT count(*) AS n FROM reviews'),
      threads_open: one("SELECT count(*) AS n FROM threads WHERE status = 'open'"),
      predictions_open: one('SELECT count(*) AS n FROM predictions WHERE resolved_at IS NULL'),
      contradiction_candidates: one("SELECT count(*) AS n FROM contradiction_candidates WHERE status = 'candidate'"),
    };
  }

  /** Import lines for every observation (oldest first), so `observeMany` can rebuild the store elsewhere. */
  *exportAll(): Iterable<ExportLine> {
    const rows = this.stmt(
      `SELECT o.text, o.source, o.created_at, m.tags, m.category FROM observations o JOIN memories m ON m.id = o.memory_id ORDER BY o.id`,
    ).iterate() as Iterable<{ text: string; source: string | null; created_at: string; tags: string; category: Category }>;
    for (const r of rows) {
      const line: ExportLine = { text: r.text, created_at: r.created_at, category: r.category };
      if (r.source !== null) line.source = r.source;
      const tags = JSON.parse(r.tags) as string[];
      if (tags.length) line.tags = tags;
      yield line;
    }
  }

  // ---- other mutations ----------------------------------------------------------------------

  /** A typed, weighted edge between two memories (weight 0..1; an existing edge takes the new weight). */
  link(from: number, to: number, type: EdgeType, weight: number, actor: Actor): { from: number; to: number; type: EdgeType; weight: number } {
    checkActor(actor);
    if (!EDGE_TYPES.includes(type)) throw new MemoryError('INVALID', `Expected an edge type (${EDGE_TYPES.join(', ')}), got ${JSON.stringify(type)}`);
    if (typeof weight !== 'number' || !(weight >= 0 && weight <= 1)) throw new MemoryError('INVALID', `Expected weight between 0 and 1, got ${JSON.stringify(weight)}`);
    if (from === to) throw new MemoryError('INVALID', `Expected two different memories, got ${from} twice`);
    return this.write(() => {
      this.row(from);
      this.row(to);
      const before = this.stmt('SELECT weight FROM edges WHERE from_id = ? AND to_id = ? AND type = ?').get(from, to, type) as { weight: number } | undefined;
      this.stmt(
        `INSERT INTO edges (from_id, to_id, type, weight, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (from_id, to_id, type) DO UPDATE SET weight = excluded.weight`,
      ).run(from, to, type, weight, this.iso());
      const edge = { from, to, type, weight };
      this.audit(actor, 'link', `memory:${from}`, before ? { ...edge, weight: before.weight } : null, edge);
      return edge;
    })();
  }

  /** Refuses the claim from now on: observing text that normalises the same throws TOMBSTONED. */
  tombstone(text: string, reason: string, actor: Actor): { hash: string } {
    checkActor(actor);
    if (typeof text !== 'string' || !text.trim()) throw new MemoryError('INVALID', 'Expected the claim to tombstone as a non-empty string');
    checkText({ text, reason });
    let hash = '';
    this.write(() => {
      const keys = this.tombstones.add([text], this.iso(), reason || 'forgotten', true);
      hash = keys[0]!;
      this.audit(actor, 'tombstone', `tombstone:${hash}`, null, { hashes: keys, reason });
    })();
    return { hash };
  }

  /** Fades a memory and tombstones its text and its evidence, so none of it is observed again. */
  forget(id: number, reason: string, actor: Actor): void {
    checkActor(actor);
    this.write(() => {
      const before = this.row(id);
      const texts = new Set([before.text, ...(this.stmt('SELECT text FROM observations WHERE memory_id = ?').pluck().all(id) as string[])]);
      const hashes = this.tombstones.add(texts, this.iso(), reason || `memory ${id} forgotten`);
      this.stmt('UPDATE memories SET faded = 1, updated_at = ? WHERE id = ?').run(this.iso(), id);
      this.audit(actor, 'forget', `memory:${id}`, publicRow(before), { faded: true, tombstones: hashes, reason });
    })();
  }

  /** Fades (or with `faded = false` revives) a memory: searchable only with include_faded, never injected. */
  fade(id: number, actor: Actor, faded = true): void {
    checkActor(actor);
    this.write(() => {
      const before = this.row(id);
      this.stmt('UPDATE memories SET faded = ? WHERE id = ?').run(faded ? 1 : 0, id);
      this.audit(actor, faded ? 'fade' : 'revive', `memory:${id}`, { faded: !!before.faded }, { faded });
    })();
  }

  /** `newer` replaces `older`: older gets superseded_by and a `supersedes` edge points at it. */
  supersede(older: number, newer: number, actor: Actor): void {
    checkActor(actor);
    if (older === newer) throw new MemoryError('INVALID', `Expected two different memories, got ${older} twice`);
    this.write(() => {
      const before = this.row(older);
      this.row(newer);
      this.stmt('UPDATE memories SET superseded_by = ? WHERE id = ?').run(newer, older);
      this.upsertEdge(newer, older, 'supersedes', 1);
      const graded = this.applyGrade(older, 'again', 'superseded', actor, this.now());
      this.audit(actor, 'supersede', `memory:${older}`, { superseded_by: before.superseded_by }, { superseded_by: newer, graded: graded.grade });
    })();
  }

  /** Embeds memories that have no vector of the current model yet (after a model change, or a failed call); returns how many. */
  async reembed(batch = 64): Promise<number> {
    if (!this.embedder || !this.vectors) return 0;
    let done = 0;
    for (;;) {
      const rows = this.stmt(
        'SELECT id, text FROM memories WHERE id NOT IN (SELECT memory_id FROM embeddings WHERE model = ?) AND id > ? ORDER BY id LIMIT ?',
      ).all(this.vectors.model, done ? this.lastEmbedded : 0, batch) as Array<{ id: number; text: string }>;
      if (!rows.length) return done;
      const vecs = await this.embed(rows.map((r) => r.text));
      if (vecs.some((v) => !v)) return done;
      this.write(() => {
        rows.forEach((r, i) => {
          this.stmt('INSERT OR REPLACE INTO embeddings (memory_id, model, dim, vector) VALUES (?, ?, ?, ?)').run(r.id, this.vectors!.model, this.vectors!.dim, toBlob(vecs[i]!));
          this.vectors!.set(r.id, vecs[i]!);
        });
      })();
      this.lastEmbedded = rows[rows.length - 1].id;
      done += rows.length;
    }
  }
  private lastEmbedded = 0;
  private readonly expandQuery: ((query: string) => Promise<string>) | null;

  // ---- learning: FSRS cards and grades -------------------------------------------------------

  // A new memory row with its first FSRS card (observing is its first learning; no grade recorded).
  private insertMemory(text: string, category: Category, salience: number, tags: string[], at: string, confidence = 0.5, derived = false, confirmed = true): number {
    const c = initialCard(at);
    return Number(
      this.stmt(
        `INSERT INTO memories (id, text, category, salience, confidence, tags, created_at, updated_at, due, stability, difficulty, elapsed_days, scheduled_days, reps, lapses, state, last_review, derived, confirmed)
         VALUES (${nextId('memories')}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(text, category, salience, confidence, JSON.stringify(tags), at, at, c.due, c.stability, c.difficulty, c.elapsed_days, c.scheduled_days, c.reps, c.lapses, c.state, c.last_review, derived ? 1 : 0, confirmed ? 1 : 0).lastInsertRowid,
    );
  }

  // Memories from before the learning layer get the card they would have had from creation.
  private backfillCards(): void {
    const rows = this.stmt('SELECT id, created_at FROM memories WHERE stability IS NULL').all() as Array<{ id: number; created_at: string }>;
    if (!rows.length) return;
    const set = this.stmt('UPDATE memories SET due = ?, stability = ?, difficulty = ?, elapsed_days = ?, scheduled_days = ?, reps = ?, lapses = ?, state = ?, last_review = ? WHERE id = ?');
    this.write(() => {
      for (const r of rows) {
        const c = initialCard(r.created_at);
        set.run(c.due, c.stability, c.difficulty, c.elapsed_days, c.scheduled_days, c.reps, c.lapses, c.state, c.last_review, r.id);
      }
    })();
  }

  private card(id: number): CardRow & { created_at: string } {
    const r = this.stmt('SELECT due, stability, difficulty, elapsed_days, scheduled_days, reps, lapses, state, last_review, created_at FROM memories WHERE id = ?').get(id) as
      | (CardRow & { created_at: string })
      | undefined;
    if (!r) throw new MemoryError('NOT_FOUND', `No memory with id ${id}`);
    return r.stability === null ? { ...initialCard(r.created_at), created_at: r.created_at } : r;
  }

  /** Retrievability (FSRS-6, 0..1) of one memory at `at` (default now). */
  retrievability(id: number, at: Date = this.now()): number {
    const c = this.card(id);
    return round(retrievabilityAt(c, at, c.created_at));
  }

  // Inside a transaction: one grade on one memory's card, one review row; an audit row unless the caller writes its own.
  private applyGrade(id: number, grade: GradeName, reason: GradeReason, actor: Actor, at: Date, audit = false): ReviewResult {
    const before = this.card(id);
    // Grades arrive in time order, but an import may carry older times: never review into the past.
    const last = before.last_review ? Date.parse(before.last_review) : 0;
    const when = at.getTime() < last ? new Date(last) : at;
    const r = retrievabilityAt(before, when, before.created_at);
    const after = reviewCard(before, grade, when);
    this.stmt('UPDATE memories SET due = ?, stability = ?, difficulty = ?, elapsed_days = ?, scheduled_days = ?, reps = ?, lapses = ?, state = ?, last_review = ? WHERE id = ?').run(
      after.due, after.stability, after.difficulty, after.elapsed_days, after.scheduled_days, after.reps, after.lapses, after.state, after.last_review, id,
    );
    this.stmt('INSERT INTO reviews (memory_id, at, grade, reason, session_id, retrievability, stability_before, stability_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      id, when.toISOString(), grade, reason, actor.sessionId ?? null, round(r), before.stability, after.stability,
    );
    const result: ReviewResult = { id, grade, retrievability: round(r), stability: round(after.stability), due: after.due };
    if (audit) this.audit(actor, 'review', `memory:${id}`, { stability: before.stability, due: before.due }, { ...result, reason });
    return result;
  }

  /** Grades a memory by hand (the `review` tool): FSRS moves its stability and due date. */
  review(id: number, grade: GradeName, actor: Actor): ReviewResult {
    checkActor(actor);
    checkId(id);
    if (!GRADES.includes(grade)) throw new MemoryError('INVALID', `Expected grade to be one of ${GRADES.join(', ')}, got ${JSON.stringify(grade)}`);
    return this.write(() => this.applyGrade(id, grade, 'manual', actor, this.now(), true))();
  }

  /**
   * Grades what a session did with memory (docs/memory.md): used after a recall in a session that
   * ended ok is Good; surfaced by wander or injected and not used is Hard; recalled and not used is
   * not graded. A session that did not end ok grades nothing. Grading a session twice changes nothing.
   */
  gradeSession(use: SessionUse): Array<{ id: number; grade: GradeName }> {
    if (!use || typeof use.sessionId !== 'string' || !use.sessionId) throw new MemoryError('INVALID', 'Expected a session id to grade');
    if (use.outcome !== 'ok') return [];
    const actor: Actor = { surface: 'session', sessionId: use.sessionId };
    return this.write(() => {
      const done = (this.stmt("SELECT count(*) AS n FROM reviews WHERE session_id = ? AND reason IN ('used', 'ignored')").get(use.sessionId) as { n: number }).n;
      if (done) return [];
      const used = new Set(use.usedIds);
      const seen = new Set([...use.recalledIds, ...(use.surfacedIds ?? []), ...(use.injectedIds ?? [])]);
      const shown = new Set([...(use.surfacedIds ?? []), ...(use.injectedIds ?? [])]);
      const out: Array<{ id: number; grade: GradeName }> = [];
      const exists = this.stmt('SELECT 1 FROM memories WHERE id = ?').pluck();
      for (const id of [...new Set([...seen, ...used])].sort((a, b) => a - b)) {
        if (!Number.isInteger(id) || !exists.get(id)) continue;
        const grade: GradeName | null = used.has(id) && seen.has(id) ? 'good' : shown.has(id) ? 'hard' : null;
        if (!grade) continue;
        this.applyGrade(id, grade, grade === 'good' ? 'used' : 'ignored', actor, this.now(), true);
        if (grade === 'good') this.stmt('UPDATE memories SET access_count = access_count + 1 WHERE id = ?').run(id);
        if (grade === 'good') this.confirmByUse(id, actor);
        out.push({ id, grade });
      }
      return out;
    })();
  }

  /** Overdue memories (FSRS due time passed), most overdue first: what session-state may bring back. */
  overdue(at: Date = this.now(), n = 10): OverdueRecord[] {
    const rows = this.stmt(
      `SELECT id, text, category, salience, due, stability, last_review, created_at FROM memories
       WHERE due <= ? AND faded = 0 AND superseded_by IS NULL ORDER BY due, id LIMIT ?`,
    ).all(at.toISOString(), n) as Array<{ id: number; text: string; category: Category; salience: number; due: string; stability: number; last_review: string | null; created_at: string }>;
    return rows.map((r) => ({ id: r.id, text: r.text, category: r.category, salience: r.salience, retrievability: round(retrievabilityAt(r, at, r.created_at)), due: r.due }));
  }

  // ---- learning: beliefs, contradictions, predictions, threads --------------------------------

  /** A belief with a confidence (default 0.7): observed through the gate, its memory's category becomes `belief`. */
  async believe(input: { text: string; confidence?: number; source?: string | null; tags?: string[] }, actor: Actor): Promise<{ id: number; decision: GateDecision }> {
    const confidence = input?.confidence ?? 0.7;
    checkFraction(confidence, 'confidence');
    let r: { memory_id: number; decision: GateDecision } = await this.observe({ text: input?.text, source: input?.source ?? null, tags: input?.tags, category: 'belief' }, actor);
    // Merged into a thread or a prediction: those keep what they are; the belief is its own memory.
    if (r.decision === 'merge' && ['thread', 'prediction'].includes(this.row(r.memory_id).category)) {
      const own = await this.createSpecial({ text: input.text, source: input?.source ?? null, tags: input?.tags, category: 'belief' }, actor, () => undefined);
      r = { memory_id: own.id, decision: 'novel' };
    }
    this.write(() => {
      const before = { ...this.row(r.memory_id), confirmed: this.confirmedOf(r.memory_id) };
      const confirmed = confirmedAfterBelieve(before, actor) ? 1 : 0;
      this.stmt("UPDATE memories SET category = 'belief', confidence = ?, confirmed = ? WHERE id = ?").run(confidence, confirmed, r.memory_id);
      this.audit(actor, 'believe', `memory:${r.memory_id}`, { category: before.category, confidence: before.confidence, confirmed: before.confirmed }, { category: 'belief', confidence, confirmed });
    })();
    return { id: r.memory_id, decision: r.decision };
  }

  private confirmedOf(id: number): boolean {
    return !!(this.stmt('SELECT confirmed FROM memories WHERE id = ?').get(id) as { confirmed: number } | undefined)?.confirmed;
  }

  // Inside a transaction: a claim used in a session that ended ok, other than one that stated it, is confirmed.
  private confirmByUse(id: number, actor: Actor): void {
    if (this.confirmedOf(id)) return;
    const statedBy = this.stmt('SELECT DISTINCT session_id FROM observations WHERE memory_id = ?').pluck().all(id) as Array<string | null>;
    if (!confirmsByUse(actor.sessionId ?? '', statedBy)) return;
    this.stmt('UPDATE memories SET confirmed = 1 WHERE id = ?').run(id);
    this.audit(actor, 'confirm', `memory:${id}`, { confirmed: 0 }, { confirmed: 1, by: 'use' });
  }

  /** The operator confirms a memory: a belief or value an agent stated becomes part of Identity. */
  confirm(id: number, actor: Actor): { id: number; confirmed: boolean } {
    checkActor(actor);
    checkId(id);
    if (!isOperator(actor)) throw new MemoryError('INVALID', `Expected the operator (cli) to confirm memory ${id}, got surface ${actor.surface}: an agent cannot confirm a claim`);
    this.write(() => {
      this.row(id);
      if (this.confirmedOf(id)) return;
      this.stmt('UPDATE memories SET confirmed = 1 WHERE id = ?').run(id);
      this.audit(actor, 'confirm', `memory:${id}`, { confirmed: 0 }, { confirmed: 1, by: 'operator' });
    })();
    return { id, confirmed: true };
  }

  /** The most confident active beliefs (for session-state). */
  topBeliefs(n = 10): BeliefRecord[] {
    const at = this.now();
    const rows = this.stmt(
      `SELECT id, text, confidence, salience, stability, last_review, created_at FROM memories
       WHERE category = 'belief' AND faded = 0 AND superseded_by IS NULL ORDER BY confidence DESC, salience DESC, id LIMIT ?`,
    ).all(n) as Array<{ id: number; text: string; confidence: number; salience: number; stability: number; last_review: string | null; created_at: string }>;
    return rows.map((r) => ({ id: r.id, text: r.text, confidence: r.confidence, salience: r.salience, retrievability: round(retrievabilityAt(r, at, r.created_at)) }));
  }

  /**
   * `otherId` contradicts `id`: a `contradicts` edge from other to id, id's confidence lowered by a
   * third, an Again review on id, and the pair recorded as a confirmed contradiction.
   */
  contradict(id: number, otherId: number, note: string | null, actor: Actor): { id: number; other_id: number; confidence: number } {
    checkActor(actor);
    checkId(id);
    checkId(otherId);
    if (id === otherId) throw new MemoryError('INVALID', `Expected two different memories, got ${id} twice`);
    checkText({ note });
    return this.write(() => {
      this.tombstones.refuse([['note', note]]);
      const before = this.row(id);
      this.row(otherId);
      const confidence = round(Math.max(0.05, before.confidence * (2 / 3)));
      this.stmt('UPDATE memories SET confidence = ?, updated_at = ? WHERE id = ?').run(confidence, this.iso(), id);
      this.upsertEdge(otherId, id, 'contradicts', 1);
      const [a, b] = id < otherId ? [id, otherId] : [otherId, id];
      this.stmt(
        `INSERT INTO contradiction_candidates (a, b, method, score, reason, status, created_at) VALUES (?, ?, 'explicit', 1, ?, 'confirmed', ?)
         ON CONFLICT (a, b) DO UPDATE SET status = 'confirmed', method = 'explicit', score = 1, reason = coalesce(excluded.reason, reason)`,
      ).run(a, b, note ?? null, this.iso());
      this.applyGrade(id, 'again', 'contradicted', actor, this.now());
      this.audit(actor, 'contradict', `memory:${id}`, { confidence: before.confidence }, { other_id: otherId, confidence, note });
      return { id, other_id: otherId, confidence };
    })();
  }

  // Inside a transaction: candidates from the offline heuristic against the close memories the gate saw.
  private heuristicCandidates(id: number, text: string, neighbours: Array<{ id: number; text: string; lexical: number }>): number[] {
    const out: number[] = [];
    for (const n of neighbours) {
      if (n.id === id || n.lexical < 0.2) continue;
      const v = heuristicVerdict(text, n.text);
      if (v.contradicts && this.recordCandidate(id, n.id, 'heuristic', v.score, v.reason)) out.push(n.id);
    }
    return out;
  }

  /** Records a contradiction candidate (never applied); false when the pair is already known. */
  // `actor`: who found it, for the audit row (observe audits its own candidates in its own row).
  recordCandidate(x: number, y: number, method: 'heuristic' | 'gemini', score: number, reason: string, actor?: Actor): boolean {
    checkText({ reason });
    const [a, b] = x < y ? [x, y] : [y, x];
    // A derived reason (Gemini's words) that quotes a forgotten claim is withheld, not stored.
    if (this.tombstones.match([['reason', reason]])) reason = '(withheld: it quotes a forgotten claim)';
    return this.write(() => {
      const r = this.stmt(
        `INSERT INTO contradiction_candidates (a, b, method, score, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (a, b) DO UPDATE SET method = excluded.method, score = excluded.score, reason = excluded.reason
         WHERE status = 'candidate' AND excluded.method = 'gemini'`,
      ).run(a, b, method, score, reason, this.iso());
      if (r.changes > 0 && actor) this.audit(actor, 'candidate', `memories:${a},${b}`, null, { method, score, reason });
      return r.changes > 0;
    })();
  }

  /** Drops a candidate that a later check found compatible (only while it is still a candidate). */
  dismissCandidate(x: number, y: number, actor?: Actor): boolean {
    const [a, b] = x < y ? [x, y] : [y, x];
    return this.write(() => {
      const done = this.stmt("UPDATE contradiction_candidates SET status = 'dismissed' WHERE a = ? AND b = ? AND status = 'candidate'").run(a, b).changes > 0;
      if (done && actor) this.audit(actor, 'dismiss_candidate', `memories:${a},${b}`, { status: 'candidate' }, { status: 'dismissed' });
      return done;
    })();
  }

  /** Contradiction candidates, newest first. */
  contradictionCandidates(status: ContradictionCandidate['status'] | null = 'candidate', limit = 100): ContradictionCandidate[] {
    return (status
      ? this.stmt('SELECT * FROM contradiction_candidates WHERE status = ? ORDER BY id DESC LIMIT ?').all(status, limit)
      : this.stmt('SELECT * FROM contradiction_candidates ORDER BY id DESC LIMIT ?').all(limit)) as ContradictionCandidate[];
  }

  /** A prediction with the confidence that it comes true (default 0.5) and an optional due time; linked to the close memories it is about. */
  async predict(input: { text: string; confidence?: number; due?: string | null; source?: string | null }, actor: Actor): Promise<{ id: number }> {
    const confidence = input?.confidence ?? 0.5;
    checkFraction(confidence, 'confidence');
    let due: string | null = null;
    if (input?.due !== undefined && input.due !== null) {
      const ms = Date.parse(input.due);
      if (Number.isNaN(ms)) throw new MemoryError('INVALID', `Expected \`due\` to be an ISO-8601 time, got ${JSON.stringify(input.due)}`);
      due = new Date(ms).toISOString();
    }
    return this.createSpecial({ text: input?.text, source: input?.source ?? null, category: 'prediction' }, actor, (id) => {
      this.stmt('UPDATE memories SET confidence = ? WHERE id = ?').run(confidence, id);
      this.stmt('INSERT INTO predictions (memory_id, confidence, due) VALUES (?, ?, ?)').run(id, confidence, due);
      this.audit(actor, 'predict', `memory:${id}`, null, { confidence, due });
    });
  }

  /**
   * Resolves a prediction. Surprise is how wrong it was: |actual - confidence| with correct = 1,
   * partly = 0.5, wrong = 0. The prediction and every memory it touches (its edges) gain salience
   * in proportion: s + surprise * (1 - s) / 2.
   */
  resolvePrediction(id: number, outcome: PredictionOutcome, note: string | null, actor: Actor): { id: number; surprise: number; touched: number[] } {
    checkActor(actor);
    checkId(id);
    const actual = { correct: 1, partly: 0.5, wrong: 0 }[outcome];
    if (actual === undefined) throw new MemoryError('INVALID', `Expected outcome to be one of correct, partly, wrong, got ${JSON.stringify(outcome)}`);
    checkText({ note });
    return this.write(() => {
      this.tombstones.refuse([['note', note]]);
      const p = this.stmt('SELECT confidence, outcome, resolved_at FROM predictions WHERE memory_id = ?').get(id) as { confidence: number; outcome: string | null; resolved_at: string | null } | undefined;
      if (!p) throw new MemoryError('NOT_FOUND', `Memory ${id} is not a prediction (make one with \`predict\`)`);
      if (p.resolved_at) throw new MemoryError('INVALID', `Prediction ${id} was already resolved (${p.outcome}) on ${p.resolved_at}`);
      const surprise = round(Math.abs(actual - p.confidence));
      this.stmt('UPDATE predictions SET outcome = ?, surprise = ?, resolved_at = ?, note = ? WHERE memory_id = ?').run(outcome, surprise, this.iso(), note ?? null, id);
      const touched = [id, ...(this.stmt('SELECT to_id FROM edges WHERE from_id = ? UNION SELECT from_id FROM edges WHERE to_id = ?').pluck().all(id, id) as number[])];
      const raise = this.stmt('UPDATE memories SET salience = min(1, salience + ? * (1 - salience) / 2) WHERE id = ?');
      for (const t of touched) raise.run(surprise, t);
      this.audit(actor, 'resolve', `memory:${id}`, { confidence: p.confidence }, { outcome, surprise, note, touched });
      return { id, surprise, touched };
    })();
  }

  /** Predictions resolved since `iso`, most surprising first (for session-state). */
  surprisesSince(iso: string, n = 10): SurpriseRecord[] {
    return this.stmt(
      `SELECT m.id, m.text, p.confidence, p.outcome, p.surprise, p.resolved_at, p.note FROM predictions p JOIN memories m ON m.id = p.memory_id
       WHERE p.resolved_at >= ? ORDER BY p.surprise DESC, p.resolved_at DESC LIMIT ?`,
    ).all(iso, n) as SurpriseRecord[];
  }

  /** Opens a thread: an open question or piece of work that spans sessions; `solo` ones an unattended session may pick up. */
  async openThread(input: { text: string; solo?: boolean; source?: string | null }, actor: Actor): Promise<ThreadRecord> {
    const { id } = await this.createSpecial({ text: input?.text, source: input?.source ?? null, category: 'thread' }, actor, (memoryId) => {
      this.stmt("INSERT INTO threads (memory_id, status, solo, opened_at) VALUES (?, 'open', ?, ?)").run(memoryId, input.solo ? 1 : 0, this.iso());
      this.audit(actor, 'thread_open', `memory:${memoryId}`, null, { solo: !!input.solo });
    });
    return this.thread(id);
  }

  /** Resolves an open thread, with what settled it. */
  resolveThread(id: number, resolution: string | null, actor: Actor): ThreadRecord {
    checkActor(actor);
    checkId(id);
    checkText({ resolution });
    this.write(() => {
      this.tombstones.refuse([['resolution', resolution]]);
      const t = this.thread(id);
      if (t.status === 'resolved') throw new MemoryError('INVALID', `Thread ${id} was already resolved on ${t.resolved_at}`);
      // A thread that needs the operator is closed by the operator, never by an agent.
      if (!t.solo && !isOperator(actor)) throw new MemoryError('INVALID', `Thread ${id} is the operator's (not solo): only the operator closes it (nightshift memory threads resolve ${id})`);
      this.stmt("UPDATE threads SET status = 'resolved', resolved_at = ?, resolution = ? WHERE memory_id = ?").run(this.iso(), resolution ?? null, id);
      this.audit(actor, 'thread_resolve', `memory:${id}`, { status: 'open' }, { status: 'resolved', resolution });
    })();
    return this.thread(id);
  }

  private thread(id: number): ThreadRecord {
    const r = this.stmt('SELECT m.id, m.text, t.status, t.solo, t.opened_at, t.resolved_at, t.resolution FROM threads t JOIN memories m ON m.id = t.memory_id WHERE t.memory_id = ?').get(id) as
      | (Omit<ThreadRecord, 'solo'> & { solo: number })
      | undefined;
    if (!r) throw new MemoryError('NOT_FOUND', `Memory ${id} is not a thread (open one with threads action "open")`);
    return { ...r, solo: !!r.solo };
  }

  /** Threads, newest first: `open` true/false filters by status, `solo` by the solo flag. */
  threads(filter: { open?: boolean; solo?: boolean; limit?: number } = {}): ThreadRecord[] {
    const where: string[] = [];
    if (filter.open !== undefined) where.push(filter.open ? "t.status = 'open'" : "t.status = 'resolved'");
    if (filter.solo !== undefined) where.push(filter.solo ? 't.solo = 1' : 't.solo = 0');
    const rows = this.stmt(
      `SELECT m.id, m.text, t.status, t.solo, t.opened_at, t.resolved_at, t.resolution FROM threads t JOIN memories m ON m.id = t.memory_id
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY t.opened_at DESC, m.id DESC LIMIT ?`,
    ).all(filter.limit ?? 100) as Array<Omit<ThreadRecord, 'solo'> & { solo: number }>;
    return rows.map((r) => ({ ...r, solo: !!r.solo }));
  }

  /**
   * One pass of the self-annealing loop (category `anneal`): a memory of its own, never merged into
   * an earlier pass, since the same failure coming back is the very thing the log is kept to show.
   */
  async recordAnneal(input: { text: string; source?: string | null; created_at?: string | null; tags?: string[] }, actor: Actor): Promise<{ id: number }> {
    return this.createSpecial({ text: input?.text, source: input?.source ?? null, created_at: input?.created_at ?? null, tags: input?.tags, salience: 0.7, category: 'anneal' }, actor, (id) => {
      this.audit(actor, 'anneal', `memory:${id}`, null, { tags: input?.tags ?? [] });
    });
  }

  // A memory of its own (never merged into an older one), made through the gate so it is linked and
  // searchable like any other, then `extra` inside the same transaction.
  private async createSpecial(input: ObserveInput, actor: Actor, extra: (id: number) => void): Promise<{ id: number }> {
    return this.gated(input, actor, (clean, vec) => {
      const r = this.observeOne(clean, actor, vec, null, { noMerge: true });
      extra(r.memory_id);
      return { id: r.memory_id };
    });
  }

  // ---- learning: wander ------------------------------------------------------------------------

  /** A seeded random walk over edges (memory/wander.ts); the same seed on the same store gives the same path. */
  wander(opts: { steps?: number; seed?: number; jumpRate?: number; rng?: Rng } = {}): { seed: number; path: WanderItem[] } {
    const steps = opts.steps ?? WANDER_DEFAULTS.steps;
    if (!Number.isInteger(steps) || steps < 1 || steps > 100) throw new MemoryError('INVALID', `Expected steps to be a whole number from 1 to 100, got ${JSON.stringify(steps)}`);
    const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31);
    if (!Number.isInteger(seed) || seed < 0) throw new MemoryError('INVALID', `Expected seed to be a whole number of 0 or more, got ${JSON.stringify(seed)}`);
    const jumpRate = opts.jumpRate ?? this.learning.wander_jump;
    const at = this.now();
    const active = 'faded = 0 AND superseded_by IS NULL';
    const count = (this.stmt(`SELECT count(*) AS n FROM memories WHERE ${active}`).get() as { n: number }).n;
    const overdue = this.stmt(`SELECT id FROM memories WHERE due <= ? AND ${active} ORDER BY id LIMIT 10000`).pluck().all(at.toISOString()) as number[];
    const rCache = new Map<number, number>();
    const r = (id: number) => {
      let v = rCache.get(id);
      if (v === undefined) rCache.set(id, (v = this.retrievability(id, at)));
      return v;
    };
    const graph: WanderGraph = {
      count,
      at: (i) => this.stmt(`SELECT id FROM memories WHERE ${active} ORDER BY id LIMIT 1 OFFSET ?`).pluck().get(i) as number,
      retrievability: r,
      neighbours: (id) =>
        this.stmt(
          `SELECT e.other AS "to", max(e.weight) AS weight FROM (
             SELECT to_id AS other, weight FROM edges WHERE from_id = ? UNION ALL SELECT from_id AS other, weight FROM edges WHERE to_id = ?
           ) e JOIN memories m ON m.id = e.other WHERE m.faded = 0 AND m.superseded_by IS NULL GROUP BY e.other ORDER BY e.other`,
        ).all(id, id) as Array<{ to: number; weight: number }>,
      overdue,
    };
    const path = walk(graph, { steps, jumpRate, rng: opts.rng ?? seededRng(seed) });
    const rows = new Map(
      (this.stmt('SELECT id, text, category FROM memories WHERE id IN (SELECT value FROM json_each(?))').all(ids(path.map((p) => p.id))) as Array<{ id: number; text: string; category: Category }>).map((x) => [x.id, x]),
    );
    return { seed, path: path.map((p) => ({ id: p.id, text: rows.get(p.id)!.text, category: rows.get(p.id)!.category, retrievability: r(p.id), via: p.via })) };
  }

  // ---- learning: forget for good ---------------------------------------------------------------

  /**
   * Deletes memories for good (a human approved it: `nightshift memory forget --approve`),
   * tombstoning their claims first. The text leaves the file too: deleted with secure_delete (freed
   * cells and pages zeroed), the text indices merged without it, audit rows about them redacted,
   * and the WAL checkpointed into the file and truncated (`checkpointed` false when a reader held
   * it back; the next checkpoint finishes the job). Returns the ids and the tombstone keys.
   */
  deleteForever(memoryIds: number[], reason: string, actor: Actor): { deleted: number[]; tombstones: string[]; audit_redacted: number; checkpointed: boolean } {
    checkActor(actor);
    memoryIds.forEach(checkId);
    const secure = this.db.pragma('secure_delete', { simple: true }) as number;
    this.db.pragma('secure_delete = ON');
    let out: { deleted: number[]; tombstones: string[]; audit_redacted: number };
    try {
      out = this.write(() => {
        // Abstractions a dream derived from them quote their text: they go too.
        memoryIds = [...new Set([...memoryIds, ...this.derivedFrom(memoryIds)])];
        const texts = new Set<string>();
        for (const id of memoryIds) {
          const m = this.row(id);
          texts.add(m.text);
          for (const t of this.stmt('SELECT text FROM observations WHERE memory_id = ?').pluck().all(id) as string[]) texts.add(t);
          // A prediction's note and a thread's resolution may restate the claim: their rows go below.
        }
        const hashes = this.tombstones.add(texts, this.iso(), reason);
        for (const id of memoryIds) {
          this.stmt('UPDATE memories SET superseded_by = NULL WHERE superseded_by = ?').run(id);
          for (const sql of [
            'DELETE FROM reviews WHERE memory_id = @id',
            'DELETE FROM threads WHERE memory_id = @id',
            'DELETE FROM predictions WHERE memory_id = @id',
            'DELETE FROM contradiction_candidates WHERE a = @id OR b = @id',
            'DELETE FROM embeddings WHERE memory_id = @id',
            'DELETE FROM edges WHERE from_id = @id OR to_id = @id',
            'DELETE FROM observations WHERE memory_id = @id',
            'DELETE FROM memories WHERE id = @id',
          ]) this.stmt(sql).run({ id });
          this.vectors?.delete(id);
        }
        // FTS5 keeps a deleted row's terms in its segments until they merge: merge them now.
        this.db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('optimize'); INSERT INTO observations_fts (observations_fts) VALUES ('optimize');");
        const auditRedacted = redactAudit(this.db, memoryIds, [...texts]);
        this.docs = -1;
        this.dfCache.clear();
        // The audit row names ids and tombstone keys only: the text is gone for good.
        this.audit(actor, 'delete', `memories:${memoryIds.join(',')}`, null, { deleted: memoryIds, tombstones: hashes, reason, audit_redacted: auditRedacted });
        return { deleted: [...memoryIds], tombstones: hashes, audit_redacted: auditRedacted };
      })();
    } finally {
      this.db.pragma(`secure_delete = ${secure}`);
    }
    // Until a checkpoint the WAL holds the pages as they were before the delete.
    const [cp] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    return { ...out, checkpointed: !!cp && cp.busy === 0 };
  }

  /** True when `text` would be refused as a forgotten claim (for redacting copies outside the store). */
  isForgotten(text: string): boolean {
    return this.tombstones.match([['text', text]]) !== null;
  }

  /** Derived memories (a dream's abstractions) that abstract any of `ids`: a forget takes them along. */
  derivedFrom(ids: number[]): number[] {
    if (!ids.length) return [];
    return this.stmt(
      `SELECT DISTINCT e.from_id FROM edges e JOIN memories m ON m.id = e.from_id
       WHERE e.type = 'abstracts' AND m.derived = 1 AND e.to_id IN (SELECT value FROM json_each(?))`,
    ).pluck().all(JSON.stringify(ids)) as number[];
  }

  // ---- dream: the primitives memory/dream.ts runs ---------------------------------------------

  /** The last dream, or null before the first. */
  lastDream(): { id: number; started_at: string; duration_ms: number; last_observation_id: number } | null {
    return (this.stmt('SELECT id, started_at, duration_ms, last_observation_id FROM dreams ORDER BY id DESC LIMIT 1').get() as
      | { id: number; started_at: string; duration_ms: number; last_observation_id: number }
      | undefined) ?? null;
  }

  /** Memory pressure for the supervisor: observations since the last dream, and when that was. */
  dreamPressure(): { observations_since: number; last_dream_at: string | null; first_since_at: string | null } {
    const last = this.lastDream();
    const r = this.stmt('SELECT count(*) AS n, min(created_at) AS first FROM observations WHERE id > ?').get(last?.last_observation_id ?? 0) as { n: number; first: string | null };
    return { observations_since: r.n, last_dream_at: last?.started_at ?? null, first_since_at: r.first };
  }

  /** The newest observation id (a dream remembers where it stopped). */
  lastObservationId(): number {
    return (this.stmt('SELECT coalesce(max(id), 0) AS n FROM observations').get() as { n: number }).n;
  }

  /** Active memories that observations after `sinceObservationId` went to, newest first, at most `limit`. */
  recentMemories(sinceObservationId: number, limit: number): Array<{ id: number; text: string; salience: number; category: Category }> {
    return this.stmt(
      `SELECT m.id, m.text, m.salience, m.category FROM memories m WHERE m.faded = 0 AND m.superseded_by IS NULL
       AND m.id IN (SELECT memory_id FROM observations WHERE id > ?) ORDER BY m.id DESC LIMIT ?`,
    ).all(sinceObservationId, limit) as Array<{ id: number; text: string; salience: number; category: Category }>;
  }

  /** Active memories close in words to `text` (Dice over the gate's candidates), best first; `except` left out. */
  similar(text: string, opts: { limit?: number; min?: number; except?: number } = {}): Array<{ id: number; text: string; lexical: number }> {
    const words = tokens(text);
    const content = contentTerms(text);
    const out: Array<{ id: number; text: string; lexical: number }> = [];
    for (const r of this.gateCandidates(content.length ? content : [...new Set(words)].slice(0, 48))) {
      if (r.id === opts.except) continue;
      const d = dice(words, tokens(r.text));
      if (d >= (opts.min ?? 0)) out.push({ id: r.id, text: r.text, lexical: round(d) });
    }
    return out.sort((a, b) => b.lexical - a.lexical || a.id - b.id).slice(0, opts.limit ?? GATE_CANDIDATES);
  }

  /** Edges whose two ends are both in `memoryIds` (of the given types). */
  edgesAmong(memoryIds: number[], types: EdgeType[]): Array<{ from: number; to: number; type: EdgeType }> {
    if (!memoryIds.length) return [];
    return this.stmt(
      `SELECT from_id AS "from", to_id AS "to", type FROM edges WHERE from_id IN (SELECT value FROM json_each(@ids))
       AND to_id IN (SELECT value FROM json_each(@ids)) AND type IN (SELECT value FROM json_each(@types))`,
    ).all({ ids: ids(memoryIds), types: JSON.stringify(types) }) as Array<{ from: number; to: number; type: EdgeType }>;
  }

  /** True when an abstraction already covers at least half of `memberIds`. */
  hasAbstraction(memberIds: number[]): boolean {
    if (!memberIds.length) return false;
    const r = this.stmt(
      `SELECT from_id, count(*) AS n FROM edges WHERE type = 'abstracts' AND to_id IN (SELECT value FROM json_each(?)) GROUP BY from_id ORDER BY n DESC LIMIT 1`,
    ).get(ids(memberIds)) as { n: number } | undefined;
    return !!r && r.n * 2 >= memberIds.length;
  }

  /** A new `insight` memory that abstracts `memberIds` (an `abstracts` edge to each); not through the gate: it is derived, not observed. */
  async addAbstraction(text: string, memberIds: number[], actor: Actor): Promise<number> {
    checkActor(actor);
    if (typeof text !== 'string' || !text.trim()) throw new MemoryError('INVALID', 'Expected the abstraction as a non-empty string');
    checkText({ text });
    this.tombstones.refuse([['text', text]]);
    const [vec] = await this.embed([text]);
    return this.write(() => {
      this.tombstones.refuse([['text', text]]);
      const members = memberIds.map((m) => this.row(m));
      const salience = round(members.reduce((s, m) => s + m.salience, 0) / Math.max(1, members.length));
      const id = this.insertMemory(text.trim(), 'insight', salience, [], this.iso(), 0.5, true, confirmedAtCreation(actor));
      if (vec && this.vectors) {
        this.stmt('INSERT OR REPLACE INTO embeddings (memory_id, model, dim, vector) VALUES (?, ?, ?, ?)').run(id, this.vectors.model, this.vectors.dim, toBlob(vec));
        this.vectors.set(id, vec);
      }
      for (const m of memberIds) this.upsertEdge(id, m, 'abstracts', ABSTRACT_EDGE_WEIGHT);
      this.audit(actor, 'abstract', `memory:${id}`, null, { members: memberIds });
      return id;
    })();
  }

  /**
   * Fades active memories low on both retrievability and salience (never deletes; faded memories
   * stay searchable with include_faded, labelled). Open threads and unresolved predictions stay.
   */
  fadeWeak(limits: { retrievability: number; salience: number }, actor: Actor): number[] {
    checkActor(actor);
    const at = this.now();
    const rows = this.stmt(
      `SELECT id, stability, last_review, created_at FROM memories WHERE faded = 0 AND superseded_by IS NULL AND salience < ?
       AND id NOT IN (SELECT memory_id FROM threads WHERE status = 'open') AND id NOT IN (SELECT memory_id FROM predictions WHERE resolved_at IS NULL)`,
    ).all(limits.salience) as Array<{ id: number; stability: number; last_review: string | null; created_at: string }>;
    const weak = rows.filter((r) => retrievabilityAt(r, at, r.created_at) < limits.retrievability).map((r) => r.id);
    if (!weak.length) return [];
    this.write(() => {
      const set = this.stmt('UPDATE memories SET faded = 1 WHERE id = ?');
      for (const id of weak) set.run(id);
      this.audit(actor, 'fade', `memories:${weak.length}`, null, { faded: weak, rule: limits });
    })();
    return weak;
  }

  /** Rebuilds the search indices (FTS5 optimize, planner statistics) and embeds memories with no vector of the current model. */
  async reindex(): Promise<{ reembedded: number }> {
    this.db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('optimize'); INSERT INTO observations_fts (observations_fts) VALUES ('optimize');");
    this.db.pragma('optimize');
    this.dfCache.clear();
    this.docs = -1;
    return { reembedded: await this.reembed() };
  }

  /** Writes a dream's metrics row. */
  recordDream(startedAt: string, durationMs: number, lastObservationId: number, metrics: unknown, actor: Actor): number {
    checkActor(actor);
    return this.write(() => {
      const id = Number(this.stmt('INSERT INTO dreams (started_at, duration_ms, last_observation_id, metrics) VALUES (?, ?, ?, ?)').run(startedAt, durationMs, lastObservationId, JSON.stringify(metrics)).lastInsertRowid);
      this.audit(actor, 'dream', `dream:${id}`, null, { duration_ms: durationMs, last_observation_id: lastObservationId });
      return id;
    })();
  }

  /** Backfills cards and counts what FSRS says now: overdue and mean retrievability of active memories. */
  scheduleReport(): { overdue: number; retrievability_mean: number; below_half: number; predictions_due: number } {
    this.backfillCards();
    const s = this.learningStats();
    const due = (this.stmt('SELECT count(*) AS n FROM predictions WHERE resolved_at IS NULL AND due IS NOT NULL AND due <= ?').get(this.iso()) as { n: number }).n;
    return { overdue: s.overdue, retrievability_mean: s.retrievability.mean, below_half: s.retrievability.below_half, predictions_due: due };
  }

  /** The audit rows, oldest first (for `stats`-style reports and tests). */
  auditLog(limit = 1000): Array<{ id: number; at: string; surface: string; session_id: string | null; action: string; target: string | null; before: unknown; after: unknown }> {
    return (this.stmt('SELECT * FROM audit ORDER BY id LIMIT ?').all(limit) as Array<Record<string, unknown>>).map((r) => ({
      ...(r as { id: number; at: string; surface: string; session_id: string | null; action: string; target: string | null }),
      before: r.before === null ? null : JSON.parse(r.before as string),
      after: r.after === null ? null : JSON.parse(r.after as string),
    }));
  }

  /** True when session `sessionId` already has an observation of `text` (as the store keeps it): a spooled item stored before a crash is not stored again. */
  hasObservation(sessionId: string, text: string): boolean {
    return !!this.stmt('SELECT 1 FROM observations WHERE session_id = ? AND text = ? LIMIT 1').get(sessionId, String(text).normalize('NFKC').trim());
  }

  static readonly schemaVersion = SCHEMA_VERSION;
}

function publicRow(r: MemoryRow): Omit<MemoryRecord, 'sources' | 'edges' | 'retrievability' | 'due'> {
  return { ...r, tags: JSON.parse(r.tags) as string[], faded: !!r.faded };
}

function round(x: number, d = 4): number {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

function checkId(id: number): void {
  if (!Number.isInteger(id) || id < 1) throw new MemoryError('INVALID', `Expected a memory id (a whole number above 0), got ${JSON.stringify(id)}`);
}

function checkFraction(x: unknown, name: string): void {
  if (typeof x !== 'number' || !(x >= 0 && x <= 1)) throw new MemoryError('INVALID', `Expected \`${name}\` between 0 and 1, got ${JSON.stringify(x)}`);
}

function checkActor(actor: Actor): void {
  if (!actor || !SURFACES.includes(actor.surface)) throw new MemoryError('INVALID', `Expected an actor surface (${SURFACES.join(', ')}), got ${JSON.stringify(actor?.surface)}`);
}

// Refuses control characters and lone surrogates in any text field (memory/text-hygiene.ts).
function checkText(fields: Record<string, unknown>): void {
  const problem = fieldsProblem(fields);
  if (problem) throw new MemoryError('INVALID', problem.message);
}

// Checks and normalises one input; throws MemoryError INVALID with a message naming the field.
function validate(input: ObserveInput): Clean {
  if (!input || typeof input !== 'object') throw new MemoryError('INVALID', `Expected an observation object, got ${JSON.stringify(input)}`);
  const { text, source, created_at, salience, tags, category } = input;
  if (typeof text !== 'string' || !text.trim()) throw new MemoryError('INVALID', `Expected \`text\` to be a non-empty string, got ${JSON.stringify(text)}`);
  if (text.length > MAX_TEXT) throw new MemoryError('INVALID', `Expected \`text\` of at most ${MAX_TEXT} characters, got ${text.length}`);
  if (source !== undefined && source !== null && typeof source !== 'string') throw new MemoryError('INVALID', `Expected \`source\` to be a string, got ${JSON.stringify(source)}`);
  let at: string | null = null;
  if (created_at !== undefined && created_at !== null) {
    const ms = typeof created_at === 'string' ? Date.parse(created_at) : NaN;
    if (Number.isNaN(ms)) throw new MemoryError('INVALID', `Expected \`created_at\` to be an ISO-8601 time, got ${JSON.stringify(created_at)}`);
    at = new Date(ms).toISOString();
  }
  if (salience !== undefined && (typeof salience !== 'number' || !(salience >= 0 && salience <= 1))) {
    throw new MemoryError('INVALID', `Expected \`salience\` between 0 and 1, got ${JSON.stringify(salience)}`);
  }
  if (tags !== undefined && (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string'))) throw new MemoryError('INVALID', `Expected \`tags\` to be a list of strings, got ${JSON.stringify(tags)}`);
  if (category !== undefined && !CATEGORIES.includes(category)) throw new MemoryError('INVALID', `Expected \`category\` to be one of ${CATEGORIES.join(', ')}, got ${JSON.stringify(category)}`);
  checkText({ text, source, tags });
  // NFKC: what SQLite stores is what is hashed and indexed (full-width letters would never match a query).
  return { text: text.normalize('NFKC').trim(), source: source ?? null, created_at: at, salience: salience ?? 0.5, tags: tags ?? [], category: category ?? 'observation' };
}
