// The memory store, the one owner of its SQLite file: observe through the prediction-error gate,
// query through lexical and vector arms with spreading activation, and one audit row per mutation.
import type Database from 'better-sqlite3';
import { DEFAULTS } from '../daemon/defaults.js';
import { checkThresholds, gateDecision, predictionError, type GateThresholds } from './gate.js';
import { fuseRanks, rankCandidates, spreadActivation, type Adjacency, type Candidate, type RankWeights } from './rank.js';
import { SCHEMA_VERSION, openDatabase } from './schema.js';
import { contentTerms, dice, ftsQuery, textHash, tokens } from './text.js';
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
} from './types.js';

// pino-compatible; the store never writes to stdout.
export type Logger = { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void; debug?(obj: object, msg?: string): void };

export type StoreOptions = {
  embedder?: Embedder | null;
  thresholds?: Partial<GateThresholds>;
  weights?: Partial<RankWeights>;
  now?: () => Date;
  logger?: Logger | null;
};

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

  private constructor(private readonly db: Database.Database, readonly file: string, opts: StoreOptions) {
    this.embedder = opts.embedder ?? null;
    this.thresholds = { ...DEFAULT_THRESHOLDS, ...opts.thresholds };
    const bad = checkThresholds(this.thresholds);
    if (bad) throw new MemoryError('INVALID', bad);
    this.weights = { ...DEFAULT_WEIGHTS, ...opts.weights, edges: { ...DEFAULT_WEIGHTS.edges, ...opts.weights?.edges } };
    this.now = opts.now ?? (() => new Date());
    this.logger = opts.logger ?? null;
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
    checkActor(actor);
    const clean = validate(input);
    this.refuseTombstoned(clean.text);
    const [vec] = await this.embed([clean.text]);
    return this.db.transaction(() => {
      const prev = actor.sessionId
        ? ((this.stmt('SELECT memory_id FROM observations WHERE session_id = ? ORDER BY id DESC LIMIT 1').get(actor.sessionId) as { memory_id: number } | undefined)?.memory_id ?? null)
        : null;
      return this.observeOne(clean, actor, vec, prev);
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
      this.db.transaction(() => {
        batch.forEach(({ index, clean }, k) => {
          try {
            this.refuseTombstoned(clean.text);
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
  private observeOne(clean: Clean, actor: Actor, vec: Float32Array | null, follows: number | null): ObserveResult {
    const at = clean.created_at ?? this.iso();
    const near = this.nearest(clean.text, vec);
    const similarity = near?.similarity ?? 0;
    let decision: GateDecision = near ? gateDecision(similarity, this.thresholds) : 'novel';
    // A vector alone can relate two texts, not make them one claim: sentence encoders rate many
    // different remarks above 0.9, so a merge also needs the words to agree.
    if (decision === 'merge' && near!.lexical < this.thresholds.link) decision = 'link';
    let memoryId: number;
    let before: MemoryRow | null = null;
    if (decision === 'merge') {
      memoryId = near!.id;
      before = this.row(memoryId);
      const tags = JSON.stringify([...new Set([...JSON.parse(before.tags), ...clean.tags])]);
      // Seen again: salience climbs toward 1, and the memory is as recent as its newest evidence.
      const salience = Math.min(1, Math.max(before.salience, clean.salience) + 0.1 * (1 - before.salience));
      this.stmt('UPDATE memories SET salience = ?, access_count = access_count + 1, tags = ?, updated_at = max(updated_at, ?) WHERE id = ?').run(salience, tags, at, memoryId);
    } else {
      memoryId = Number(
        this.stmt('INSERT INTO memories (text, category, salience, tags, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(
          clean.text,
          clean.category,
          clean.salience,
          JSON.stringify(clean.tags),
          at,
          at,
        ).lastInsertRowid,
      );
      if (vec && this.vectors) {
        this.stmt('INSERT OR REPLACE INTO embeddings (memory_id, model, dim, vector) VALUES (?, ?, ?, ?)').run(memoryId, this.vectors.model, this.vectors.dim, toBlob(vec));
        this.vectors.set(memoryId, vec);
      }
      if (decision === 'link') this.upsertEdge(memoryId, near!.id, 'relates_to', round(similarity));
    }
    const pe = round(predictionError(similarity));
    const observationId = Number(
      this.stmt('INSERT INTO observations (text, source, created_at, salience, prediction_error, decision, memory_id, session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
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
    this.audit(actor, 'observe', `memory:${memoryId}`, before && publicRow(before), { ...result, source: clean.source, follows });
    return result;
  }

  // The closest active memory: Dice over words among the BM25 candidates, and cosine (same model)
  // when there is a vector; the better of the two. `lexical` is the words' agreement with it.
  private nearest(text: string, vec: Float32Array | null): { id: number; similarity: number; lexical: number } | null {
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

  private refuseTombstoned(text: string): void {
    const hash = textHash(text);
    const t = this.stmt('SELECT hash, at, reason FROM tombstones WHERE hash = ?').get(hash) as { hash: string; at: string; reason: string } | undefined;
    if (t) {
      throw new MemoryError('TOMBSTONED', `Refused: this claim was forgotten on ${t.at} (tombstone ${t.hash.slice(0, 12)}: ${t.reason}). Forgotten claims are not observed again.`);
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
    const [qvec] = this.vectors?.size && text.trim() ? await this.embed([text], 'query') : [null];
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
    return { ...publicRow(r), sources: this.sourcesOf([id]).get(id) ?? [], edges };
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
    return this.db.transaction(() => {
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
    const hash = textHash(text);
    this.db.transaction(() => {
      this.stmt('INSERT INTO tombstones (hash, at, reason) VALUES (?, ?, ?) ON CONFLICT (hash) DO UPDATE SET reason = excluded.reason, at = excluded.at').run(hash, this.iso(), reason || 'forgotten');
      this.audit(actor, 'tombstone', `tombstone:${hash}`, null, { hash, reason });
    })();
    return { hash };
  }

  /** Fades a memory and tombstones its text and its evidence, so none of it is observed again. */
  forget(id: number, reason: string, actor: Actor): void {
    checkActor(actor);
    this.db.transaction(() => {
      const before = this.row(id);
      const texts = new Set([before.text, ...(this.stmt('SELECT text FROM observations WHERE memory_id = ?').pluck().all(id) as string[])]);
      const hashes = [...new Set([...texts].map(textHash))];
      for (const h of hashes) this.stmt('INSERT OR IGNORE INTO tombstones (hash, at, reason) VALUES (?, ?, ?)').run(h, this.iso(), reason || `memory ${id} forgotten`);
      this.stmt('UPDATE memories SET faded = 1, updated_at = ? WHERE id = ?').run(this.iso(), id);
      this.audit(actor, 'forget', `memory:${id}`, publicRow(before), { faded: true, tombstones: hashes, reason });
    })();
  }

  /** Fades (or with `faded = false` revives) a memory: searchable only with include_faded, never injected. */
  fade(id: number, actor: Actor, faded = true): void {
    checkActor(actor);
    this.db.transaction(() => {
      const before = this.row(id);
      this.stmt('UPDATE memories SET faded = ? WHERE id = ?').run(faded ? 1 : 0, id);
      this.audit(actor, faded ? 'fade' : 'revive', `memory:${id}`, { faded: !!before.faded }, { faded });
    })();
  }

  /** `newer` replaces `older`: older gets superseded_by and a `supersedes` edge points at it. */
  supersede(older: number, newer: number, actor: Actor): void {
    checkActor(actor);
    if (older === newer) throw new MemoryError('INVALID', `Expected two different memories, got ${older} twice`);
    this.db.transaction(() => {
      const before = this.row(older);
      this.row(newer);
      this.stmt('UPDATE memories SET superseded_by = ? WHERE id = ?').run(newer, older);
      this.upsertEdge(newer, older, 'supersedes', 1);
      this.audit(actor, 'supersede', `memory:${older}`, { superseded_by: before.superseded_by }, { superseded_by: newer });
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
      this.db.transaction(() => {
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

  /** The audit rows, oldest first (for `stats`-style reports and tests). */
  auditLog(limit = 1000): Array<{ id: number; at: string; surface: string; session_id: string | null; action: string; target: string | null; before: unknown; after: unknown }> {
    return (this.stmt('SELECT * FROM audit ORDER BY id LIMIT ?').all(limit) as Array<Record<string, unknown>>).map((r) => ({
      ...(r as { id: number; at: string; surface: string; session_id: string | null; action: string; target: string | null }),
      before: r.before === null ? null : JSON.parse(r.before as string),
      after: r.after === null ? null : JSON.parse(r.after as string),
    }));
  }

  static readonly schemaVersion = SCHEMA_VERSION;
}

function publicRow(r: MemoryRow): Omit<MemoryRecord, 'sources' | 'edges'> {
  return { ...r, tags: JSON.parse(r.tags) as string[], faded: !!r.faded };
}

function round(x: number, d = 4): number {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

function checkActor(actor: Actor): void {
  if (!actor || !SURFACES.includes(actor.surface)) throw new MemoryError('INVALID', `Expected an actor surface (${SURFACES.join(', ')}), got ${JSON.stringify(actor?.surface)}`);
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
  return { text: text.trim(), source: source ?? null, created_at: at, salience: salience ?? 0.5, tags: tags ?? [], category: category ?? 'observation' };
}
