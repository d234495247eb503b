// Dream benchmarks: wall time and peak RSS of one dream over a synthetic store of N memories (each
// size in a child process of its own, so RSS is the dream's and nothing else's), and recall on
// LoCoMo dev before and after a dream (the memory-recall protocol): a dream must not make it worse.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dream, type DreamReport } from '../memory/dream/dream.js';
import { MemoryStore } from '../memory/store.js';
import type { ObserveInput } from '../memory/types.js';
import { importLines, LOCOMO_DEV, questions } from './memory-recall.js';
import { seededRng } from '../memory/learning/wander.js';

const DEPTHS = [1, 5, 10, 20] as const;

// Sentences with structure: people, things, places and days recur, so clusters and contradictions exist.
export function syntheticLines(n: number, seed = 1): ObserveInput[] {
  const rng = seededRng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng() * xs.length)];
  const people = Array.from({ length: 400 }, (_, i) => `person${i}`);
  const things = ['the build server', 'the staging database', 'the invoice exporter', 'the backup job', 'the garden sensor', 'the release train', 'the billing queue', 'the search index', 'the mail relay', 'the photo archive'];
  const verbs = ['fixed', 'configured', 'reviewed', 'migrated', 'restarted', 'documented', 'tested', 'deployed', 'monitored', 'upgraded'];
  const places = ['in Berlin', 'at the office', 'from home', 'on the train', 'in the lab', 'at the cafe'];
  const days = ['on Monday', 'on Tuesday', 'on Wednesday', 'on Thursday', 'on Friday', 'at the weekend'];
  const out: ObserveInput[] = [];
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const neg = rng() < 0.1 ? ' did not say that' : '';
    out.push({
      text: `${pick(people)} ${pick(verbs)} ${pick(things)} ${pick(places)} ${pick(days)}${neg} (note ${i})`,
      source: `syn:${i}`,
      created_at: new Date(t0 + i * 60_000).toISOString(),
    });
  }
  return out;
}

export type DreamSizeReport = { memories: number; import_ms: number; dream_ms: number; peak_rss_mb: number; rss_before_dream_mb: number; phases: DreamReport['phases'] };

// In this process: build a store of `n`, dream once, report. Run it in a child for a clean RSS.
async function dreamAtSize(n: number): Promise<DreamSizeReport> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-dream-'));
  try {
    const store = MemoryStore.open(path.join(dir, 'memory.db'), { now: () => new Date('2026-06-01T00:00:00Z') });
    const t0 = performance.now();
    await store.observeMany(syntheticLines(n), { surface: 'import' });
    const importMs = performance.now() - t0;
    const memories = store.stats().memories;
    store.close();
    // A fresh open, as `nightshift memory dream` does.
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const t1 = performance.now();
    const s = MemoryStore.open(path.join(dir, 'memory.db'), { now: () => new Date('2026-06-01T00:00:00Z') });
    const r = await dream(s);
    s.close();
    const dreamMs = performance.now() - t1;
    return { memories, import_ms: Math.round(importMs), dream_ms: Math.round(dreamMs), peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), rss_before_dream_mb: Math.round(rssBefore / 2 ** 20), phases: r.phases };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Dream at each size, each in a child process. */
export function dreamBench(sizes: number[] = [10_000, 100_000]): DreamSizeReport[] {
  const self = fileURLToPath(import.meta.url);
  return sizes.map((n) => {
    const r = spawnSync(process.execPath, ['--expose-gc', self, '--size', String(n)], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
    if (r.status !== 0) throw new Error(`dream bench at ${n} failed (${r.status ?? r.signal}):\n${r.stderr}`);
    return JSON.parse(r.stdout) as DreamSizeReport;
  });
}

type Recall = Record<(typeof DEPTHS)[number], number>;

/** LoCoMo dev recall (full pipeline, limit 20, sources scored against evidence) before and after one dream, per store. */
export async function recallAfterDream(dataDir = LOCOMO_DEV): Promise<{ questions: number; before: Recall; after: Recall; dream: Array<DreamReport['phases']> } | null> {
  if (!fs.existsSync(dataDir)) return null;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-recall-dream-'));
  const sums = { before: { 1: 0, 5: 0, 10: 0, 20: 0 }, after: { 1: 0, 5: 0, 10: 0, 20: 0 } };
  let n = 0;
  const dreams: Array<DreamReport['phases']> = [];
  try {
    for (const f of fs.readdirSync(dataDir).filter((x) => x.endsWith('.json')).sort()) {
      const conv = JSON.parse(fs.readFileSync(path.join(dataDir, f), 'utf8')) as Record<string, unknown>;
      const store = MemoryStore.open(path.join(tmp, `${f}.db`));
      try {
        await store.observeMany(importLines(conv), { surface: 'import' });
        const qs = questions(conv);
        const score = async (into: Recall) => {
          for (const q of qs) {
            const seen = new Set<string>();
            for (const r of await store.query(q.question, { limit: 20 })) for (const s of r.sources) seen.add(s);
            const ranked = [...seen];
            for (const k of DEPTHS) {
              const top = new Set(ranked.slice(0, k));
              into[k] += q.evidence.filter((e) => top.has(e)).length / q.evidence.length;
            }
          }
        };
        await score(sums.before);
        dreams.push((await dream(store)).phases);
        await score(sums.after);
        n += qs.length;
      } finally {
        store.close();
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const avg = (s: Recall) => Object.fromEntries(DEPTHS.map((k) => [k, +(s[k] / Math.max(1, n)).toFixed(3)])) as Recall;
  return { questions: n, before: avg(sums.before), after: avg(sums.after), dream: dreams };
}

export function formatDream(sizes: DreamSizeReport[], recall: Awaited<ReturnType<typeof recallAfterDream>>): string {
  const lines = sizes.map((s) => `dream at ${s.memories} memories: ${(s.dream_ms / 1000).toFixed(1)} s, peak RSS ${s.peak_rss_mb} MB (import ${(s.import_ms / 1000).toFixed(1)} s; ${Object.entries(s.phases).map(([k, p]) => `${k} ${p.ms}ms`).join(', ')})`);
  if (recall) {
    lines.push(`LoCoMo dev recall before / after a dream (${recall.questions} questions): ${DEPTHS.map((k) => `@${k} ${recall.before[k].toFixed(3)} / ${recall.after[k].toFixed(3)}`).join('  ')}`);
  }
  return lines.join('\n');
}

// Child mode: `node dist/bench/dream.js --size N` prints one DreamSizeReport.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--size');
  if (i > 0) {
    dreamAtSize(Number(process.argv[i + 1])).then((r) => process.stdout.write(`${JSON.stringify(r)}\n`));
  } else if (process.argv.includes('--recall')) {
    recallAfterDream().then((r) => process.stdout.write(`${JSON.stringify(r)}\n`));
  }
}

/** `npm run bench` (only=dream): dream at 10k and 100k memories and LoCoMo recall before/after, printed and returned. */
export async function dreamBenchAll(): Promise<{ sizes: DreamSizeReport[]; recall: Awaited<ReturnType<typeof recallAfterDream>> }> {
  const sizes = dreamBench();
  const recall = await recallAfterDream();
  process.stdout.write(`${formatDream(sizes, recall)}\n`);
  return { sizes, recall };
}
