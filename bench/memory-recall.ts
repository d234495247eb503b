// Recall on the LoCoMo development split (../shared/data/locomo-dev, protocol in its README): one
// store per conversation, every turn imported as `nightshift memory import` does, each category
// 1-4 question queried with limit 20, the results' sources (first occurrence) scored against the
// evidence at depth 1/5/10/20, overall and by category. Beside it, in the same run: the README's
// anchor (a plain FTS5 BM25 table with one row per turn), the lexical arm alone, and the full
// pipeline with each of the speaker prior, the rare-word links, the asking prior and the period prior
// switched off once (the ablations), and the full pipeline per conversation;
// and the links' price in query and observe time at 10k memories (linkLatency).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { DEFAULT_WEIGHTS, MemoryStore, type StoreOptions } from '../memory/store.js';
import { parseImportLine } from '../memory/text/jsonl.js';
import { contentTerms, ftsQuery } from '../memory/text/text.js';
import type { ObserveInput } from '../memory/types.js';
import { Corpus, percentile } from './memory-mcp.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const LOCOMO_DEV = path.resolve(ROOT, '..', 'shared', 'data', 'locomo-dev');
const DEPTHS = [1, 5, 10, 20] as const;

type Turn = { speaker: string; dia_id: string; text: string; blip_caption?: string };
type Qa = { question: string; evidence?: string[]; category: number };
export type Recall = { questions: number; at: Record<(typeof DEPTHS)[number], number>; by_category: Record<string, { questions: number; at: Record<(typeof DEPTHS)[number], number> }> };
export type RecallReport = { conversations: string[]; anchor: Recall; lexical: Recall; full: Recall; no_speaker: Recall; no_links: Recall; no_asking: Recall; no_period: Recall; by_conversation: Record<string, Recall> };
// LoCoMo's categories 1-4 (category 5, adversarial, is skipped).
const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

// "1:56 pm on 8 May, 2023" as ISO-8601 UTC.
export function locomoDate(s: string): string {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(s);
  if (!m) throw new Error(`Expected a LoCoMo date like \`1:56 pm on 8 May, 2023\`, got \`${s}\``);
  const month = MONTHS.indexOf(m[5].toLowerCase());
  if (month < 0) throw new Error(`Unknown month in \`${s}\``);
  const hour = (Number(m[1]) % 12) + (m[3].toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

// The import lines of one conversation, session by session, as the README prescribes.
export function importLines(conv: Record<string, unknown>): ObserveInput[] {
  const out: ObserveInput[] = [];
  for (let i = 1; Array.isArray(conv[`session_${i}`]); i++) {
    const at = locomoDate(String(conv[`session_${i}_date_time`]));
    for (const t of conv[`session_${i}`] as Turn[]) {
      out.push({ text: `${t.speaker}: ${t.text}${t.blip_caption ? ` [image: ${t.blip_caption}]` : ''}`, source: t.dia_id, created_at: at });
    }
  }
  return out;
}

export function questions(conv: Record<string, unknown>): Array<{ question: string; evidence: string[]; category: number }> {
  return ((conv.qa as Qa[]) ?? [])
    .filter((q) => q.category >= 1 && q.category <= 4)
    .map((q) => ({ question: q.question, category: q.category, evidence: [...new Set((q.evidence ?? []).join(' ').match(/D\d+:\d+/g) ?? [])] }))
    .filter((q) => q.evidence.length);
}

class Sums {
  sums = { 1: 0, 5: 0, 10: 0, 20: 0 };
  n = 0;
  add(ranked: string[], evidence: string[]): void {
    for (const k of DEPTHS) {
      const top = new Set(ranked.slice(0, k));
      this.sums[k] += evidence.filter((e) => top.has(e)).length / evidence.length;
    }
    this.n++;
  }
  at(): Record<(typeof DEPTHS)[number], number> {
    const at = { 1: 0, 5: 0, 10: 0, 20: 0 };
    for (const k of DEPTHS) at[k] = this.n ? +(this.sums[k] / this.n).toFixed(3) : 0;
    return at;
  }
}

class Scores {
  private all = new Sums();
  private cats = new Map<number, Sums>();
  add(ranked: string[], evidence: string[], category: number): void {
    this.all.add(ranked, evidence);
    if (!this.cats.has(category)) this.cats.set(category, new Sums());
    this.cats.get(category)!.add(ranked, evidence);
  }
  result(): Recall {
    const by_category = Object.fromEntries(
      [...this.cats].sort((a, b) => a[0] - b[0]).map(([c, x]) => [CATEGORY_NAMES[c] ?? String(c), { questions: x.n, at: x.at() }]),
    );
    return { questions: this.all.n, at: this.all.at(), by_category };
  }
}

// The anchor: FTS5 porter unicode61, one row per turn, stop words out, terms OR-ed, bm25 order.
function anchorRanking(lines: ObserveInput[]): (q: string) => string[] {
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE t USING fts5 (dia UNINDEXED, text, tokenize = 'porter unicode61')");
  const ins = db.prepare('INSERT INTO t (dia, text) VALUES (?, ?)');
  db.transaction(() => lines.forEach((l) => ins.run(l.source, l.text)))();
  const q = db.prepare('SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 20').pluck();
  return (question) => {
    const m = ftsQuery(contentTerms(question));
    return m ? (q.all(m) as string[]) : [];
  };
}

// The ranked dia_ids of a query: each result's sources, first occurrence only.
async function storeRanking(store: MemoryStore, question: string): Promise<string[]> {
  const seen = new Set<string>();
  for (const r of await store.query(question, { limit: 20 })) for (const s of r.sources) seen.add(s);
  return [...seen];
}

/** Runs the recall benchmark; null (with a message on stderr) when the data folder is absent. */
export async function memoryRecall(opts: { dataDir?: string; full?: StoreOptions; lexical?: StoreOptions; files?: string[] } = {}): Promise<RecallReport | null> {
  const dir = opts.dataDir ?? LOCOMO_DEV;
  if (!fs.existsSync(dir)) {
    process.stderr.write(`memory recall: skipped, no LoCoMo data at ${dir}\n`);
    return null;
  }
  const files = opts.files ?? fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  const anchor = new Scores();
  const full = opts.full ?? {};
  const variants: Array<{ name: 'full' | 'lexical' | 'no_speaker' | 'no_links' | 'no_asking' | 'no_period'; options: StoreOptions; scores: Scores }> = [
    { name: 'full', options: full, scores: new Scores() },
    { name: 'lexical', options: { ...opts.lexical, weights: { activation: 0, vector: 0, ...opts.lexical?.weights } }, scores: new Scores() },
    { name: 'no_speaker', options: { ...full, weights: { ...full.weights, speaker: 0 } }, scores: new Scores() },
    { name: 'no_links', options: { ...full, weights: { ...full.weights, link_cap: 0 } }, scores: new Scores() },
    { name: 'no_asking', options: { ...full, weights: { ...full.weights, asking: 0 } }, scores: new Scores() },
    { name: 'no_period', options: { ...full, weights: { ...full.weights, period: 0 } }, scores: new Scores() },
  ];
  // The full pipeline per conversation, so a change's delta shows on each.
  const byConversation = new Map<string, Scores>();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-recall-'));
  try {
    for (const f of files) {
      const conv = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Record<string, unknown>;
      // Each line as `nightshift memory import` reads it.
      const lines = importLines(conv).map((l) => {
        const p = parseImportLine(JSON.stringify(l));
        if (!p?.ok) throw new Error(`Expected a valid import line, got ${JSON.stringify(l)}`);
        return p.input;
      });
      const qs = questions(conv);
      const anchorRank = anchorRanking(lines);
      for (const q of qs) anchor.add(anchorRank(q.question), q.evidence, q.category);
      for (const v of variants) {
        const store = MemoryStore.open(path.join(tmp, `${f}.${v.name}.db`), v.options);
        try {
          await store.observeMany(lines, { surface: 'import' });
          for (const q of qs) {
            const ranked = await storeRanking(store, q.question);
            v.scores.add(ranked, q.evidence, q.category);
            if (v.name === 'full') {
              if (!byConversation.has(f)) byConversation.set(f, new Scores());
              byConversation.get(f)!.add(ranked, q.evidence, q.category);
            }
          }
        } finally {
          store.close();
        }
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const r = Object.fromEntries(variants.map((v) => [v.name, v.scores.result()])) as Record<(typeof variants)[number]['name'], Recall>;
  return { conversations: files, anchor: anchor.result(), ...r, by_conversation: Object.fromEntries([...byConversation].map(([f, s]) => [f, s.result()])) };
}

export function formatRecall(r: RecallReport): string {
  const cells = (at: Recall['at']) => DEPTHS.map((k) => at[k].toFixed(3).padStart(6)).join(' ');
  const row = (name: string, x: Recall) => `${name.padEnd(34)} ${cells(x.at)}`;
  const rows: Array<[string, Recall]> = [
    ['anchor: FTS5 BM25, row per turn', r.anchor],
    ['store, lexical arm alone', r.lexical],
    ['store, full pipeline', r.full],
    ['full, speaker prior off', r.no_speaker],
    ['full, rare-word links off', r.no_links],
    ['full, asking prior off', r.no_asking],
    ['full, period prior off', r.no_period],
  ];
  const cats = Object.keys(r.full.by_category);
  return [
    `memory recall, LoCoMo dev (${r.conversations.join(', ')}; ${r.full.questions} questions)`,
    `${''.padEnd(34)} ${DEPTHS.map((k) => `@${k}`.padStart(6)).join(' ')}`,
    ...rows.map(([n, x]) => row(n, x)),
    `recall@10 full / anchor: ${(r.full.at[10] / r.anchor.at[10]).toFixed(3)}`,
    'full pipeline by conversation:',
    ...Object.entries(r.by_conversation).map(([f, x]) => row(`  ${f} (${x.questions} questions)`, x)),
    'by category (@1 @5 @10 @20):',
    ...cats.flatMap((c) => [
      `  ${c} (${r.full.by_category[c].questions} questions)`,
      ...rows.map(([n, x]) => `    ${n.padEnd(32)} ${x.by_category[c] ? cells(x.by_category[c].at) : ''}`),
    ]),
  ].join('\n');
}

// The links' price: in-process query and observe p50 on a store of `n` generated prose-like
// memories in sessions of 50 (each its own conversation time, so links can form), with the links
// off and at the default cap, built from the same lines and asked the same queries.
export type LinkLatencyRow = { name: string; link_cap: number; memories: number; shares: number; import_ms: number; query_p50_ms: number; query_p95_ms: number; observe_p50_ms: number; observe_p95_ms: number };
export async function linkLatency(opts: { n?: number; calls?: number; variants?: Array<{ name: string; options: StoreOptions }> } = {}): Promise<LinkLatencyRow[]> {
  const n = opts.n ?? 10_000;
  const calls = opts.calls ?? 300;
  const corpus = new Corpus(11);
  const lines: ObserveInput[] = Array.from({ length: n }, (_, i) => ({ text: corpus.sentence(), source: `l${i}`, created_at: new Date(Date.UTC(2024, 0, 1) + Math.floor(i / 50) * 86_400_000).toISOString() }));
  const queries = Array.from({ length: calls + 20 }, () => corpus.queryFor(corpus.pick(lines).text));
  const fresh = Array.from({ length: calls + 20 }, () => corpus.sentence());
  const variants = opts.variants ?? [
    { name: 'links off', options: { weights: { link_cap: 0 } } },
    { name: 'links on (default)', options: {} },
  ];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-links-'));
  const out: LinkLatencyRow[] = [];
  const ms = (xs: number[], p: number) => +percentile(xs, p).toFixed(2);
  try {
    for (const [k, v] of variants.entries()) {
      const store = MemoryStore.open(path.join(tmp, `${k}.db`), v.options);
      try {
        const t0 = performance.now();
        await store.observeMany(lines, { surface: 'import' });
        const import_ms = Math.round(performance.now() - t0);
        const q: number[] = [];
        for (const [i, text] of queries.entries()) {
          const t = performance.now();
          await store.query(text, { limit: 10 });
          if (i >= 20) q.push(performance.now() - t);
        }
        const o: number[] = [];
        for (const [i, text] of fresh.entries()) {
          const t = performance.now();
          await store.observe({ text }, { surface: 'mcp', sessionId: `live-${Math.floor(i / 10)}` });
          if (i >= 20) o.push(performance.now() - t);
        }
        const db = (store as unknown as { db: Database.Database }).db;
        const shares = (db.prepare("SELECT count(*) AS n FROM edges WHERE type = 'shares'").get() as { n: number }).n;
        out.push({ name: v.name, link_cap: v.options.weights?.link_cap ?? DEFAULT_WEIGHTS.link_cap, memories: n, shares, import_ms, query_p50_ms: ms(q, 0.5), query_p95_ms: ms(q, 0.95), observe_p50_ms: ms(o, 0.5), observe_p95_ms: ms(o, 0.95) });
      } finally {
        store.close();
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return out;
}

export function formatLinkLatency(rows: LinkLatencyRow[]): string {
  return [
    `links at ${rows[0]?.memories ?? 0} memories (in process; load ${os.loadavg()[0].toFixed(2)}):`,
    ...rows.map((r) => `  ${r.name.padEnd(22)} query p50 ${r.query_p50_ms.toFixed(2)} ms (p95 ${r.query_p95_ms.toFixed(2)}), observe p50 ${r.observe_p50_ms.toFixed(2)} ms (p95 ${r.observe_p95_ms.toFixed(2)}), ${r.shares} shares edges, import ${r.import_ms} ms`),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = process.argv.includes('--latency-only') ? null : await memoryRecall();
  if (r) console.log(formatRecall(r));
  if (!process.argv.includes('--recall-only')) console.log(formatLinkLatency(await linkLatency()));
}
