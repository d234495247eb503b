// Recall of the vector arms on ../shared/data/locomo-dev, alone and fused with the BM25 anchor,
// and what each costs (load time, RSS). Each dense arm runs in a child process of its own, so its
// memory is measured apart from the others. Run alone: `node dist/bench/embeddings.js [--json]`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { createHashEmbedder, STOPWORDS } from './hash-embedder.js';
import { createUseEmbedder } from '../memory/embeddings/embeddings-use.js';
import type { Embedder } from '../memory/types.js';
import { dot } from '../memory/embeddings/unit-vector.js';

const HERE = fileURLToPath(import.meta.url);
const REPO = path.resolve(path.dirname(HERE), '..', '..');
export const LOCOMO_DEV = path.resolve(REPO, '..', 'shared', 'data', 'locomo-dev');
const DEPTH = 100; // how deep each arm's ranking goes into the fusion
const KS = [1, 5, 10, 20] as const;
const FUSION_WEIGHTS = [1, 0.5, 0.25];

type Turn = { id: string; text: string };
type Question = { key: string; conv: string; question: string; evidence: string[] };
type Conversation = { name: string; turns: Turn[] };
type Rankings = Record<string, string[]>;
export type Recall = Record<`@${(typeof KS)[number]}`, number>;

// The arms that can be measured: the name is what `memory.embeddings` calls them.
const ARMS: Record<string, () => Embedder> = {
  use: () => createUseEmbedder(),
  hash: () => createHashEmbedder(),
  'hash-words': () => createHashEmbedder({ ngrams: [] }),
};

// Turns and questions exactly as the data set's README scores them.
export function loadLocomo(dir = LOCOMO_DEV): { conversations: Conversation[]; questions: Question[] } {
  const conversations: Conversation[] = [];
  const questions: Question[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const name = path.basename(file, '.json');
    const data = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    const turns: Turn[] = [];
    for (let i = 1; data[`session_${i}`]; i++) {
      for (const t of data[`session_${i}`]) {
        turns.push({ id: t.dia_id, text: `${t.speaker}: ${t.text}${t.blip_caption ? ` [image: ${t.blip_caption}]` : ''}` });
      }
    }
    conversations.push({ name, turns });
    data.qa.forEach((q: { question: string; evidence?: string[]; category: number }, i: number) => {
      const evidence = [...new Set((q.evidence ?? []).join(' ').match(/D\d+:\d+/g) ?? [])];
      if (q.category >= 1 && q.category <= 4 && evidence.length) questions.push({ key: `${name}#${i}`, conv: name, question: q.question, evidence });
    });
  }
  return { conversations, questions };
}

// The anchor: FTS5 porter unicode61, one row per turn, content words OR-ed, ordered by bm25().
export function bm25Rankings(conversations: Conversation[], questions: Question[]): Rankings {
  const out: Rankings = {};
  for (const c of conversations) {
    const db = new Database(':memory:');
    db.exec("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, text, tokenize = 'porter unicode61')");
    const ins = db.prepare('INSERT INTO t (id, text) VALUES (?, ?)');
    db.transaction(() => c.turns.forEach((t) => ins.run(t.id, t.text)))();
    const q = db.prepare(`SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ${DEPTH}`).pluck();
    for (const qu of questions.filter((x) => x.conv === c.name)) {
      const words = [...new Set(qu.question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter((w) => !STOPWORDS.has(w));
      out[qu.key] = words.length ? (q.all(words.map((w) => `"${w}"`).join(' OR ')) as string[]) : [];
    }
    db.close();
  }
  return out;
}

// Reciprocal rank fusion: each list adds weight / (k + rank).
export function rrf(lists: Array<{ ids: string[]; weight: number }>, k = 60): string[] {
  const score = new Map<string, number>();
  for (const { ids, weight } of lists) ids.forEach((id, r) => score.set(id, (score.get(id) ?? 0) + weight / (k + r + 1)));
  return [...score].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

export function recall(rankings: Rankings, questions: Question[]): Recall {
  const r = { '@1': 0, '@5': 0, '@10': 0, '@20': 0 } as Recall;
  for (const q of questions) {
    const ids = rankings[q.key] ?? [];
    for (const k of KS) r[`@${k}`] += q.evidence.filter((e) => ids.slice(0, k).includes(e)).length / q.evidence.length;
  }
  for (const k of KS) r[`@${k}`] = +(r[`@${k}`] / questions.length).toFixed(3);
  return r;
}

const mb = (bytes: number) => Math.round(bytes / 1e6);

// In the child: load one arm, embed every turn and question, rank turns by cosine.
async function probe(arm: string) {
  const { conversations, questions } = loadLocomo();
  const rssBase = process.memoryUsage().rss;
  const e = ARMS[arm]();
  const t0 = performance.now();
  await e.embed(['warm up']);
  const loadMs = performance.now() - t0;
  const rssLoaded = process.memoryUsage().rss;
  const t1 = performance.now();
  let texts = 0;
  const rankings: Rankings = {};
  for (const c of conversations) {
    const turnVecs = await e.embed(c.turns.map((t) => t.text));
    const qs = questions.filter((q) => q.conv === c.name);
    const qVecs = await e.embed(qs.map((q) => q.question));
    texts += c.turns.length + qs.length;
    qs.forEach((q, i) => {
      rankings[q.key] = c.turns
        .map((t, j) => [t.id, dot(qVecs[i], turnVecs[j])] as const)
        .sort((a, b) => b[1] - a[1])
        .slice(0, DEPTH)
        .map(([id]) => id);
    });
  }
  const embedMs = performance.now() - t1;
  process.stdout.write(JSON.stringify({ model: e.model, dim: e.dim, load_ms: Math.round(loadMs), ms_per_text: +(embedMs / texts).toFixed(2), rss_base_mb: mb(rssBase), rss_loaded_mb: mb(rssLoaded), rss_after_mb: mb(process.memoryUsage().rss), rankings }));
}

export type ArmReport = { arm: string; model: string; dim: number; offline: boolean; load_ms: number; ms_per_text: number; rss_loaded_mb: number; rss_added_mb: number; rss_after_mb: number; dense: Recall; fused: Recall; fused_by_weight: Record<string, Recall> };
export type EmbeddingsReport = { questions: number; bm25: Recall; arms: ArmReport[] };

// Measures every arm (or the named ones) against BM25 on the dev set; prints a table, returns the figures.
export async function embeddingsBench(arms = Object.keys(ARMS), print: (line: string) => void = (l) => console.log(l)): Promise<EmbeddingsReport> {
  const { conversations, questions } = loadLocomo();
  const bm25 = bm25Rankings(conversations, questions);
  const report: EmbeddingsReport = { questions: questions.length, bm25: recall(bm25, questions), arms: [] };
  const row = (name: string, r: Recall, extra = '') => print(`${name.padEnd(30)} ${KS.map((k) => r[`@${k}`].toFixed(3)).join('  ')}${extra}`);
  print(`embeddings recall on locomo-dev (${questions.length} questions)   @1     @5     @10    @20`);
  row('bm25 (anchor)', report.bm25);
  for (const arm of arms) {
    // Without a network namespace where one is available: proof that the arm loads from local files.
    const unshare = ['/usr/bin/unshare', '/bin/unshare'].find((p) => fs.existsSync(p));
    const argv = [HERE, '--probe', arm];
    let r = unshare ? spawnSync(unshare, ['-n', process.execPath, ...argv], { encoding: 'utf8', maxBuffer: 64 << 20 }) : null;
    const offline = r?.status === 0;
    if (!r || r.status !== 0) r = spawnSync(process.execPath, argv, { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.status !== 0) throw new Error(`embeddings probe ${arm} failed: ${r.stderr}`);
    const p = JSON.parse(r.stdout);
    const fusedLists = (w: number) => Object.fromEntries(questions.map((q) => [q.key, rrf([{ ids: bm25[q.key], weight: 1 }, { ids: p.rankings[q.key], weight: w }])]));
    const a: ArmReport = {
      arm,
      model: p.model,
      dim: p.dim,
      offline,
      load_ms: p.load_ms,
      ms_per_text: p.ms_per_text,
      rss_loaded_mb: p.rss_loaded_mb - p.rss_base_mb,
      rss_added_mb: p.rss_after_mb - p.rss_base_mb,
      rss_after_mb: p.rss_after_mb,
      dense: recall(p.rankings, questions),
      fused: recall(fusedLists(1), questions),
      // A weak arm may still help at a lower weight: the sweep shows whether any weight does.
      fused_by_weight: Object.fromEntries(FUSION_WEIGHTS.map((w) => [String(w), recall(fusedLists(w), questions)])),
    };
    report.arms.push(a);
    row(`${arm} dense`, a.dense, `   load ${a.load_ms} ms, ${a.ms_per_text} ms/text, RSS +${a.rss_loaded_mb} MB loaded, +${a.rss_added_mb} MB after the corpus${offline ? ', no network' : ''}`);
    for (const w of FUSION_WEIGHTS) row(`bm25 + ${arm} (rrf 1:${w})`, a.fused_by_weight[String(w)]);
  }
  return report;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf('--probe');
  if (i > 0) await probe(process.argv[i + 1]);
  else {
    const arms = process.argv.slice(2).filter((a) => !a.startsWith('--'));
    const rep = await embeddingsBench(arms.length ? arms : undefined);
    if (process.argv.includes('--json')) console.log(JSON.stringify(rep));
  }
}
