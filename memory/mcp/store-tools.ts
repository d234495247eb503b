// The store's first MCP tools: observe, query, recall, link, stats. Each declares its whole
// contract (memory/mcp/tool.ts); memory/mcp/learning-tools.ts holds the learning layer's.
import { z } from 'zod';
import { attribute, CLAIMED_SOURCE } from './claimed-source.js';
import type { Tool, ToolOptions } from './tool.js';
import {
  CATEGORIES, EDGE_TYPES,
  type Actor, type EdgeType, type MemoryRecord, type MemoryStats, type ObserveInput, type ObserveResult, type QueryOptions, type QueryResult,
} from '../types.js';

// What these tools need from the store; `MemoryStore` satisfies it (sync or async methods alike).
export type StoreToolStore = {
  observe(input: ObserveInput, actor: Actor): Promise<ObserveResult> | ObserveResult;
  query(text: string, opts?: QueryOptions): Promise<QueryResult[]> | QueryResult[];
  recall(id: number): Promise<MemoryRecord> | MemoryRecord;
  link(from: number, to: number, type: EdgeType, weight: number, actor: Actor): unknown;
  stats(): Promise<MemoryStats> | MemoryStats;
};

export const DEFAULT_LINK_WEIGHT = 0.5;
const MAX_TEXT = 20_000;

const id = z.number().int().positive();
const category = z.enum(CATEGORIES);
const edgeType = z.enum(EDGE_TYPES);

const ObserveIn = z.strictObject({
  text: z.string().trim().min(1).max(MAX_TEXT).describe('One claim that stands on its own.'),
  source: z.string().min(1).max(500).optional().describe('Where it came from (a session id, a URL, a file). Defaults to this session.'),
  salience: z.number().min(0).max(1).optional().describe('How much it matters, 0..1.'),
  tags: z.array(z.string().min(1).max(100)).max(50).optional().describe('Short labels.'),
  category: category.optional().describe('Its kind.'),
  speaker: z.string().min(1).max(80).optional().describe('Who said it; default this agent.'),
  valid_from: z.string().min(1).max(64).optional().describe('Holds since (ISO-8601).'),
  shared: z.boolean().optional().describe('For every agent.'),
});
const ObserveOut = z.object({
  observation_id: z.number().int(),
  memory_id: z.number().int(),
  decision: z.enum(['merge', 'link', 'novel']).describe('merge: it matched a known memory; link: a new memory linked to a related one; novel: a new memory'),
  prediction_error: z.number().describe('0 = already known, 1 = nothing like it'),
  linked_to: z.number().int().nullable(),
});

// A session's own server: its observations are its agent's word, as its sources are its own (claimed-source.ts).
const ObserveInClaimed = ObserveIn.omit({ speaker: true }).extend({ source: CLAIMED_SOURCE });

const QueryIn = z.strictObject({
  query: z.string().trim().min(1).max(MAX_TEXT).describe('A question or keywords.'),
  limit: z.number().int().min(1).max(100).optional().describe('Default 10.'),
  include_faded: z.boolean().optional().describe('Also faded and superseded ones, labelled.'),
  as_of: z.string().min(1).max(64).optional().describe('ISO-8601: what held then.'),
});
const Result = z.object({
  id: z.number().int(),
  text: z.string(),
  category,
  score: z.number(),
  sources: z.array(z.string()).describe('The sources of every observation merged into this memory, oldest first'),
  faded: z.boolean(),
  superseded: z.boolean(),
  possibly_outdated: z.literal(true).optional().describe('A newer memory you wrote says another value of it; it may no longer hold'),
});
const QueryOut = z.object({ results: z.array(Result) });

const RecallIn = z.strictObject({ id: id.describe('A memory id.') });
const RecallOut = z.object({
  id: z.number().int(),
  text: z.string(),
  category,
  salience: z.number(),
  confidence: z.number(),
  access_count: z.number().int(),
  tags: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  faded: z.boolean(),
  superseded_by: z.number().int().nullable(),
  valid_from: z.string().describe('Since when it holds'),
  valid_to: z.string().nullable().describe('Until when, once superseded'),
  shared: z.boolean().describe('Every agent\'s, or only its writer\'s'),
  sources: z.array(z.string()),
  edges: z.array(z.object({ type: edgeType, to: z.number().int(), weight: z.number(), direction: z.enum(['out', 'in']) })),
  retrievability: z.number().describe('FSRS-6 probability of recall now, 0..1'),
  due: z.string().nullable().describe('When FSRS next expects it to be seen'),
});

const LinkIn = z.strictObject({
  from: id.describe('From this memory.'),
  to: id.describe('To this memory.'),
  type: edgeType.describe('from <type> to: from supports to, from supersedes to, ...'),
  weight: z.number().min(0).max(1).optional().describe(`0..1, default ${DEFAULT_LINK_WEIGHT}.`),
});
const LinkOut = z.object({ from: z.number().int(), to: z.number().int(), type: edgeType, weight: z.number() });

const StatsIn = z.strictObject({});
const StatsOut = z.object({
  memories: z.number().int(),
  observations: z.number().int(),
  edges: z.number().int(),
  faded: z.number().int(),
  superseded: z.number().int(),
  tombstones: z.number().int(),
  by_category: z.record(z.string(), z.number().int()),
  embedding_model: z.string().nullable(),
  embedded: z.number().int(),
  schema_version: z.number().int(),
  file: z.string(),
  retrievability: z.object({ mean: z.number(), below_half: z.number().int() }).describe('FSRS-6 over active memories, now'),
  overdue: z.number().int().describe('Active memories past their FSRS due time'),
  reviews: z.number().int(),
  threads_open: z.number().int(),
  predictions_open: z.number().int(),
  contradiction_candidates: z.number().int().describe('Found on ingest or by dream, not yet confirmed'),
});

// The store's shapes, cut to exactly the fields the output schemas declare (clients validate them
// strictly, and the surface stays stable when the store grows a column).
export function toResult(r: QueryResult): z.output<typeof Result> {
  return { id: r.id, text: r.text, category: r.category, score: r.score, sources: r.sources, faded: r.faded, superseded: r.superseded, ...(r.possibly_outdated ? { possibly_outdated: true as const } : {}) };
}

function toRecord(m: MemoryRecord): z.output<typeof RecallOut> {
  return {
    id: m.id, text: m.text, category: m.category, salience: m.salience, confidence: m.confidence, access_count: m.access_count, tags: m.tags,
    created_at: m.created_at, updated_at: m.updated_at, faded: m.faded, superseded_by: m.superseded_by,
    valid_from: m.valid_from, valid_to: m.valid_to, shared: m.scope === null, sources: m.sources,
    edges: m.edges.map((e) => ({ type: e.type, to: e.to, weight: e.weight, direction: e.direction })),
    retrievability: m.retrievability, due: m.due,
  };
}

function toStats(s: MemoryStats): z.output<typeof StatsOut> {
  return {
    memories: s.memories, observations: s.observations, edges: s.edges, faded: s.faded, superseded: s.superseded, tombstones: s.tombstones,
    by_category: Object.fromEntries(Object.entries(s.by_category).filter(([, n]) => typeof n === 'number')) as Record<string, number>,
    embedding_model: s.embedding_model, embedded: s.embedded, schema_version: s.schema_version, file: s.file,
    retrievability: s.retrievability, overdue: s.overdue, reviews: s.reviews, threads_open: s.threads_open,
    predictions_open: s.predictions_open, contradiction_candidates: s.contradiction_candidates,
  };
}

export function storeTools(store: StoreToolStore, opts: ToolOptions): Tool[] {
  return [
    {
      name: 'observe',
      title: 'Remember an observation',
      description:
        'Remember one claim for later sessions: a close match is merged, a related one linked; returns its id.',
      input: opts.trustSource ? ObserveIn : ObserveInClaimed,
      output: ObserveOut,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      async run(a: z.output<typeof ObserveIn>) {
        const { source, tags } = attribute(a.source, a.tags, opts);
        const input: ObserveInput = { text: a.text, source, salience: a.salience, tags, category: a.category, speaker: a.speaker ?? opts.speaker ?? null, valid_from: a.valid_from ?? null, shared: a.shared ?? false };
        const r = await store.observe(input, opts.actor);
        if (r.decision !== 'merge') setImmediate(() => opts.afterObserve?.({ id: r.memory_id, text: a.text }));
        return { structured: { observation_id: r.observation_id, memory_id: r.memory_id, decision: r.decision, prediction_error: r.prediction_error, linked_to: r.linked_to } };
      },
    },
    {
      name: 'query',
      title: 'Search memory',
      description:
        'Search memory by meaning and words; results best first with id, text, score and sources (faded ones only with include_faded).',
      input: QueryIn,
      output: QueryOut,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      async run(a: z.output<typeof QueryIn>) {
        const results = await store.query(a.query, { limit: a.limit ?? 10, include_faded: a.include_faded ?? false, as_of: a.as_of ?? null });
        return { structured: { results: results.map(toResult) } };
      },
    },
    {
      name: 'recall',
      title: 'Recall one memory',
      description: 'The full record of one memory by id, its sources and edges.',
      input: RecallIn,
      output: RecallOut,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      async run(a: z.output<typeof RecallIn>) {
        return { structured: toRecord(await store.recall(a.id)) };
      },
    },
    {
      name: 'link',
      title: 'Link two memories',
      description:
        'Record a typed relation from one memory to another (again: a new weight); `from supersedes to` also ends `to`\'s validity, which a session may do only to its own memories.',
      input: LinkIn,
      output: LinkOut,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(a: z.output<typeof LinkIn>) {
        const weight = a.weight ?? DEFAULT_LINK_WEIGHT;
        await store.link(a.from, a.to, a.type, weight, opts.actor);
        return { structured: { from: a.from, to: a.to, type: a.type, weight } };
      },
    },
    {
      name: 'stats',
      title: 'Memory statistics',
      description: 'Counts of memories, edges, threads and predictions, and how well the store is remembered.',
      input: StatsIn,
      output: StatsOut,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      async run() {
        return { structured: toStats(await store.stats()) };
      },
    },
  ];
}

