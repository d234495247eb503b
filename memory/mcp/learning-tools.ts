// The learning layer's MCP tools: believe, contradict, predict, resolve, review, threads, wander.
// Same contract as the first five (memory/mcp/store-tools.ts): described schemas, structured content,
// refusals as isError results. Forgetting is not here on purpose: only a human, through the CLI.
import { z } from 'zod';
import { attribute, CLAIMED_SOURCE } from './claimed-source.js';
import type { Tool, ToolOptions } from './tool.js';
import { CATEGORIES, MemoryError, type Actor, type GradeName, type PredictionOutcome, type ReviewResult, type ThreadRecord, type WanderItem } from '../types.js';

// What these tools need from the store; `MemoryStore` satisfies it.
export type LearningToolStore = {
  believe(input: { text: string; confidence?: number; source?: string | null; tags?: string[] }, actor: Actor): Promise<{ id: number; decision: string }>;
  contradict(id: number, otherId: number, note: string | null, actor: Actor): { id: number; other_id: number; confidence: number };
  predict(input: { text: string; confidence?: number; due?: string | null; source?: string | null }, actor: Actor): Promise<{ id: number }>;
  resolvePrediction(id: number, outcome: PredictionOutcome, note: string | null, actor: Actor): { id: number; surprise: number; touched: number[] };
  review(id: number, grade: GradeName, actor: Actor): ReviewResult;
  openThread(input: { text: string; solo?: boolean; source?: string | null }, actor: Actor): Promise<ThreadRecord>;
  resolveThread(id: number, resolution: string | null, actor: Actor): ThreadRecord;
  threads(filter?: { open?: boolean; solo?: boolean; limit?: number }): ThreadRecord[];
  wander(opts?: { steps?: number; seed?: number }): { seed: number; path: WanderItem[] };
};

const MAX_TEXT = 20_000;
const id = z.number().int().positive();
const text = z.string().trim().min(1).max(MAX_TEXT);
const note = z.string().trim().min(1).max(2000);
const fraction = z.number().min(0).max(1);

const BelieveIn = z.strictObject({
  text: text.describe('One sentence that stands on its own.'),
  confidence: fraction.optional().describe('0..1, default 0.7.'),
  source: z.string().min(1).max(500).optional().describe('Where it came from. Defaults to this session.'),
});
const BelieveInClaimed = BelieveIn.extend({ source: CLAIMED_SOURCE });
const BelieveOut = z.object({ id: z.number().int(), decision: z.enum(['merge', 'link', 'novel']).describe('merge: an existing memory became this belief') });

const ContradictIn = z.strictObject({
  id: id.describe('The memory contradicted.'),
  other_id: id.describe('The evidence against it.'),
  note: note.optional().describe('Why, in a sentence.'),
});
const ContradictOut = z.object({ id: z.number().int(), other_id: z.number().int(), confidence: z.number().describe('The contradicted memory\'s new confidence') });

const PredictIn = z.strictObject({
  text: text.describe('Concrete enough to check later.'),
  confidence: fraction.optional().describe('0..1, default 0.5.'),
  due: z.string().min(1).max(64).optional().describe('When to check, ISO-8601.'),
});
const PredictOut = z.object({ id: z.number().int() });

const ResolveIn = z.strictObject({
  id: id.describe('The prediction.'),
  outcome: z.enum(['correct', 'partly', 'wrong']).describe('What happened.'),
  note: note.optional().describe('What actually happened, in a sentence.'),
});
const ResolveOut = z.object({ id: z.number().int(), surprise: z.number().min(0).max(1).describe('How wrong the prediction was: 0 = as expected, 1 = fully surprised') });

const ReviewIn = z.strictObject({
  id: id.describe('The memory to grade.'),
  grade: z.enum(['again', 'hard', 'good', 'easy']).describe('again: wrong; hard: barely right; good: right; easy: obvious.'),
});
const ReviewOut = z.object({
  id: z.number().int(),
  grade: z.enum(['again', 'hard', 'good', 'easy']),
  retrievability: z.number().describe('Before the grade, 0..1'),
  stability: z.number().describe('Days until recall probability falls to 0.9, after the grade'),
  due: z.string().describe('When FSRS next expects it to be seen'),
});

const ThreadsIn = z.strictObject({
  action: z.enum(['open', 'list', 'resolve']).describe('open needs text, resolve needs id.'),
  text: text.optional().describe('open: the question; resolve: what settled it.'),
  id: id.optional().describe('The thread to resolve.'),
  solo: z.boolean().optional().describe('open: an unattended session may take it; list: only these.'),
});
const Thread = z.object({
  id: z.number().int(),
  text: z.string(),
  status: z.enum(['open', 'resolved']),
  solo: z.boolean(),
  opened_at: z.string(),
  resolved_at: z.string().nullable(),
  resolution: z.string().nullable(),
});
const ThreadsOut = z.object({ threads: z.array(Thread).describe('open/resolve: the one thread; list: the open threads, newest first') });

const WanderIn = z.strictObject({
  steps: z.number().int().min(1).max(100).optional().describe('Default 5.'),
  seed: z.number().int().min(0).max(2 ** 31 - 1).optional().describe('The same seed gives the same path.'),
});
const WanderOut = z.object({
  seed: z.number().int(),
  path: z.array(
    z.object({
      id: z.number().int(),
      text: z.string(),
      category: z.enum(CATEGORIES),
      retrievability: z.number(),
      via: z.enum(['start', 'edge', 'jump', 'restart']).describe('edge: followed a link; jump: to an overdue memory; restart: nowhere left to go from the last one'),
    }),
  ),
});

const writes = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

// The tools, bound to a store and the session's actor.
export function learningTools(store: LearningToolStore, opts: ToolOptions): Tool[] {
  const actor = opts.actor;
  return [
    {
      name: 'believe',
      title: 'Hold a belief',
      description: 'Record a belief with a confidence, through the same gate as observe; returns its id.',
      input: opts.trustSource ? BelieveIn : BelieveInClaimed,
      output: BelieveOut,
      annotations: writes,
      async run(a: z.output<typeof BelieveIn>) {
        const { source, tags } = attribute(a.source, undefined, opts);
        const r = await store.believe({ text: a.text, confidence: a.confidence, source, tags }, actor);
        return { structured: { id: r.id, decision: r.decision } };
      },
    },
    {
      name: 'contradict',
      title: 'Mark a contradiction',
      description: 'Say memory other_id contradicts memory id: id loses confidence; nothing is deleted.',
      input: ContradictIn,
      output: ContradictOut,
      annotations: { ...writes, idempotentHint: false },
      async run(a: z.output<typeof ContradictIn>) {
        return { structured: store.contradict(a.id, a.other_id, a.note ?? null, actor) };
      },
    },
    {
      name: 'predict',
      title: 'Make a prediction',
      description: 'Record what you expect and how likely it is; settle it later with resolve.',
      input: PredictIn,
      output: PredictOut,
      annotations: writes,
      async run(a: z.output<typeof PredictIn>) {
        return { structured: await store.predict({ text: a.text, confidence: a.confidence, due: a.due ?? null, source: opts.defaultSource }, actor) };
      },
    },
    {
      name: 'resolve',
      title: 'Resolve a prediction',
      description: 'Say how a prediction turned out; returns the surprise, 0..1.',
      input: ResolveIn,
      output: ResolveOut,
      annotations: writes,
      async run(a: z.output<typeof ResolveIn>) {
        const r = store.resolvePrediction(a.id, a.outcome, a.note ?? null, actor);
        return { structured: { id: r.id, surprise: r.surprise } };
      },
    },
    {
      name: 'review',
      title: 'Grade a memory',
      description: 'Grade a memory (again, hard, good, easy); its review schedule moves.',
      input: ReviewIn,
      output: ReviewOut,
      annotations: writes,
      async run(a: z.output<typeof ReviewIn>) {
        return { structured: store.review(a.id, a.grade, actor) };
      },
    },
    {
      name: 'threads',
      title: 'Threads across sessions',
      description: 'Questions or work across sessions: open (text), list, or resolve (id); solo ones an unattended session may take.',
      input: ThreadsIn,
      output: ThreadsOut,
      annotations: writes,
      async run(a: z.output<typeof ThreadsIn>) {
        if (a.action === 'open') {
          if (!a.text) throw new MemoryError('INVALID', 'Expected `text` to open a thread (the question or the work)');
          return { structured: { threads: [await store.openThread({ text: a.text, solo: a.solo ?? false, source: opts.defaultSource }, actor)] } };
        }
        if (a.action === 'resolve') {
          if (a.id === undefined) throw new MemoryError('INVALID', 'Expected `id` of the thread to resolve');
          return { structured: { threads: [store.resolveThread(a.id, a.text ?? null, actor)] } };
        }
        return { structured: { threads: store.threads({ open: true, solo: a.solo }) } };
      },
    },
    {
      name: 'wander',
      title: 'Wander through memory',
      description:
        'A seeded random walk over linked memories, for reflection.',
      input: WanderIn,
      output: WanderOut,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      async run(a: z.output<typeof WanderIn>) {
        return { structured: store.wander({ steps: a.steps, seed: a.seed }) };
      },
    },
  ];
}
