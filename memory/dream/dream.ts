// Dream: consolidation between sessions. Phases run in order, each timed and fault-isolated (a
// phase that throws is logged and reported `ok: false`; the others still run):
// changed values among recent memories (a dated supersession, possibly outdated, or a candidate) -> cluster recent observations -> abstract clusters (`abstracts` edges) -> contradiction candidates
// -> rare-word links for memories observed before them (a bounded batch) -> FSRS schedule report
// -> fade the weak -> rebuild indices -> one metrics row.
import type { GeminiCheck } from '../learning/contradiction.js';
import { checkContradictions } from '../learning/contradiction-check.js';
import { slotDifference } from '../learning/slot-update.js';
import { describeError, type GeminiModels } from '../gemini-client.js';
import type { MemoryStore } from '../store.js';
import { contentTerms, dice, tokens } from '../text/text.js';
import { cleanDerived } from '../text/text-hygiene.js';
import type { Actor } from '../types.js';
import { counted } from '../../core/words.js';

export const PHASES = ['updates', 'cluster', 'abstract', 'contradictions', 'links', 'schedule', 'fade', 'reindex', 'metrics'] as const;
export type PhaseName = (typeof PHASES)[number];
export type PhaseReport = { ok: boolean; ms: number; error?: string; [count: string]: unknown };
export type DreamReport = { duration_ms: number; phases: Record<PhaseName, PhaseReport> };

export type DreamOptions = {
  actor?: Actor;
  logger?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void } | null;
  // Gemini for abstractions and contradiction checks; offline when absent or when it fails.
  gemini?: { models: GeminiModels; model: string; apiKey?: string } | null;
  onPhase?: (phase: PhaseName, index: number, total: number) => void;
  recentLimit?: number; // memories a dream looks at (the newest touched since the last dream)
  maxClusters?: number; // abstractions per dream
  clusterMin?: number; // Dice above which two recent memories belong together
  linkBatch?: number; // memories a dream offers their rare-word links (those observed before the links, oldest first)
  fade?: { retrievability: number; salience: number };
  now?: () => number; // for timing
  // Test seam: the named phase throws before it does anything.
  failPhase?: PhaseName | null;
  // A stop request (the tick's SIGTERM): the phases not yet run are skipped, a loop stops early.
  signal?: AbortSignal;
};

const DEFAULTS = { linkBatch: 2000, recentLimit: 2000, maxClusters: 100, clusterMin: 0.35, minCluster: 3, maxClusterSize: 50 };

/** Runs a dream over `store`; never throws for a failing phase (it is reported). */
export async function dream(store: MemoryStore, opts: DreamOptions = {}): Promise<DreamReport> {
  const clock = opts.now ?? (() => performance.now());
  const actor: Actor = opts.actor ?? { surface: 'cli', sessionId: null };
  const t0 = clock();
  const startedAt = new Date().toISOString();
  const since = store.lastDream()?.last_observation_id ?? 0;
  const upTo = store.lastObservationId();
  const phases = {} as Record<PhaseName, PhaseReport>;
  let recent: Array<{ id: number; text: string; salience: number; scope: string | null }> = [];
  let clusters: number[][] = [];

  const run = async (name: PhaseName, fn: () => Promise<Record<string, unknown>> | Record<string, unknown>) => {
    opts.onPhase?.(name, PHASES.indexOf(name), PHASES.length);
    const start = clock();
    if (opts.signal?.aborted) {
      phases[name] = { ok: false, ms: 0, error: `skipped: stop requested (${String(opts.signal.reason)})` };
      return;
    }
    try {
      if (opts.failPhase === name) throw new Error(`injected failure in ${name}`);
      const counts = await fn();
      phases[name] = { ok: true, ms: Math.round(clock() - start), ...counts };
    } catch (err) {
      const error = (err as Error)?.message ?? String(err);
      phases[name] = { ok: false, ms: Math.round(clock() - start), error };
      opts.logger?.warn({ event: 'dream_phase_failed', phase: name, err }, `dream: ${name} failed: ${error}`);
    }
  };

  // A changed value among what is stored: dated, never merged (memory/store/updates.ts); first, so
  // an ended value is out of the clusters below.
  await run('updates', () => store.reconcileUpdates(store.recentMemories(since, opts.recentLimit ?? DEFAULTS.recentLimit), actor));

  await run('cluster', () => {
    recent = store.recentMemories(since, opts.recentLimit ?? DEFAULTS.recentLimit);
    clusters = clusterRecent(store, recent, opts.clusterMin ?? DEFAULTS.clusterMin);
    return { observations: upTo - since, memories: recent.length, clusters: clusters.length, clustered: clusters.reduce((s, c) => s + c.length, 0) };
  });

  await run('abstract', async () => {
    let made = 0;
    let skipped = 0;
    let gemini = 0;
    let fallbacks = 0;
    const byId = new Map(recent.map((m) => [m.id, m]));
    // After one failed Gemini call this dream goes on offline: an outage costs one timeout, not one per cluster.
    let geminiUp = !!opts.gemini;
    for (const c of clusters.slice(0, opts.maxClusters ?? DEFAULTS.maxClusters)) {
      if (opts.signal?.aborted) break;
      if (store.hasAbstraction(c)) {
        skipped++;
        continue;
      }
      const texts = c.map((id) => byId.get(id)?.text ?? store.recall(id).text);
      let text: string | null = null;
      if (opts.gemini && geminiUp) {
        try {
          text = await geminiAbstract(texts, opts.gemini);
          gemini++;
        } catch (err) {
          fallbacks++;
          geminiUp = false;
          opts.logger?.warn({ event: 'dream_gemini_fallback', phase: 'abstract', error: describeError(err, opts.gemini.apiKey) }, 'dream: Gemini abstraction failed, extractive instead');
        }
      }
      await store.addAbstraction(cleanDerived(text ?? extractive(texts)), c, actor);
      made++;
    }
    return { abstractions: made, already_covered: skipped, gemini, fallbacks };
  });

  await run('contradictions', () =>
    checkContradictions(store, recent.map((m) => ({ id: m.id, text: m.text })), { actor, gemini: opts.gemini as GeminiCheck | null, logger: opts.logger, event: 'dream_gemini_fallback', signal: opts.signal }),
  );

  // An old store catches up a batch a dream; `through` (in the metrics row) is where the next starts.
  await run('links', () => store.backfillLinks(store.linksThrough(), opts.linkBatch ?? DEFAULTS.linkBatch));

  await run('schedule', () => store.scheduleReport());

  await run('fade', () => {
    const faded = store.fadeWeak(opts.fade ?? { retrievability: store.learning.fade_retrievability, salience: store.learning.fade_salience }, actor);
    return { faded: faded.length };
  });

  await run('reindex', () => store.reindex());

  const duration = () => Math.round(clock() - t0);
  await run('metrics', () => {
    const id = store.recordDream(startedAt, duration(), upTo, { phases }, actor);
    return { dream_id: id };
  });
  const report: DreamReport = { duration_ms: duration(), phases };
  opts.logger?.info({ event: 'dream', ...report }, `dream: ${report.duration_ms} ms, ${counted(Object.values(phases).filter((p) => !p.ok).length, 'phase')} failed`);
  return report;
}

// Connected groups of recent memories: close in words (Dice over the gate's candidates) or linked
// by relates_to/supports edges. Groups of at least three, capped in size, biggest first.
// Only memories of one scope make a cluster: an abstraction over one agent's private memory and
// another's (or a shared one) would carry its words where they may not go.
function clusterRecent(store: MemoryStore, recent: Array<{ id: number; text: string; scope: string | null }>, min: number): number[][] {
  const inRecent = new Set(recent.map((m) => m.id));
  const scopeOf = new Map(recent.map((m) => [m.id, m.scope]));
  const parent = new Map<number, number>(recent.map((m) => [m.id, m.id]));
  const find = (x: number): number => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    while (parent.get(x) !== r) {
      const next = parent.get(x)!;
      parent.set(x, r);
      x = next;
    }
    return r;
  };
  const textOf = new Map(recent.map((m) => [m.id, m.text]));
  const union = (a: number, b: number) => {
    if (scopeOf.get(a) !== scopeOf.get(b)) return;
    // Two values of one fact are not "the same thing" an abstraction may speak for.
    if (slotDifference(textOf.get(a) ?? '', textOf.get(b) ?? '')) return;
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(Math.max(ra, rb), Math.min(ra, rb));
  };
  for (const e of store.edgesAmong([...inRecent], ['relates_to', 'supports'])) union(e.from, e.to);
  for (const m of recent) for (const n of store.similar(m.text, { limit: 5, min, except: m.id })) if (inRecent.has(n.id)) union(m.id, n.id);
  const groups = new Map<number, number[]>();
  for (const m of recent) {
    const r = find(m.id);
    groups.set(r, [...(groups.get(r) ?? []), m.id]);
  }
  return [...groups.values()]
    .filter((g) => g.length >= DEFAULTS.minCluster)
    .map((g) => g.sort((a, b) => a - b).slice(0, DEFAULTS.maxClusterSize))
    .sort((a, b) => b.length - a.length || a[0] - b[0]);
}

/** Extractive abstraction, offline: the terms the members share most and the most central member's text. */
export function extractive(texts: string[]): string {
  const df = new Map<string, number>();
  for (const t of texts) for (const w of new Set(contentTerms(t))) df.set(w, (df.get(w) ?? 0) + 1);
  const shared = [...df].filter(([, n]) => n >= 2).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 5).map(([w]) => w);
  const toks = texts.map(tokens);
  let best = 0;
  let bestScore = -1;
  toks.forEach((a, i) => {
    const s = toks.reduce((acc, b, j) => (i === j ? acc : acc + dice(a, b)), 0);
    if (s > bestScore) {
      bestScore = s;
      best = i;
    }
  });
  const central = texts[best].length > 300 ? `${texts[best].slice(0, 300)}…` : texts[best];
  return `Recurring across ${texts.length} memories${shared.length ? ` (${shared.join(', ')})` : ''}: ${central}`;
}

async function geminiAbstract(texts: string[], g: { models: GeminiModels; model: string }): Promise<string> {
  const r = await g.models.generateContent({
    model: g.model,
    contents: [
      'These memories of one agent belong together. Write one plain sentence, under 40 words, that states what they have in common',
      '(a pattern, a fact they establish, or a recurring situation). No preamble.',
      ...texts.slice(0, 30).map((t, i) => `${i + 1}. ${t.slice(0, 500)}`),
    ].join('\n'),
    config: { temperature: 0.2, maxOutputTokens: 200, thinkingConfig: { thinkingBudget: 0 } },
  });
  const text = (r.text ?? '').trim();
  if (!text || text.length > 1000 || text.startsWith('{') || text.startsWith('[')) throw new Error(`Expected one sentence from Gemini, got ${JSON.stringify(text.slice(0, 80))}`);
  return text;
}
