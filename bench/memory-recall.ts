// Recall on the LoCoMo development split (../shared/data/locomo-dev, protocol in its README): one
// store per conversation, every turn imported as `nightshift memory import` does, each category
// 1-4 question queried with limit 20, the results' sources (first occurrence) scored against the
// evidence at depth 1/5/10/20. Beside it, in the same run: the README's anchor, a plain FTS5 BM25
// table with one row per turn.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { MemoryStore, type StoreOptions } from '../memory/store.js';
import { contentTerms, ftsQuery } from '../memory/text/text.js';
import type { ObserveInput } from '../memory/types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const LOCOMO_DEV = path.resolve(ROOT, '..', 'shared', 'data', 'locomo-dev');
const DEPTHS = [1, 5, 10, 20] as const;

type Turn = { speaker: string; dia_id: string; text: string; blip_caption?: string };
type Qa = { question: string; evidence?: string[]; category: number };
export type Recall = { questions: number; at: Record<(typeof DEPTHS)[number], number> };
export type RecallReport = { conversations: string[]; anchor: Recall; lexical: Recall; full: Recall };

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

export function questions(conv: Record<string, unknown>): Array<{ question: string; evidence: string[] }> {
  return ((conv.qa as Qa[]) ?? [])
    .filter((q) => q.category >= 1 && q.category <= 4)
    .map((q) => ({ question: q.question, evidence: [...new Set((q.evidence ?? []).join(' ').match(/D\d+:\d+/g) ?? [])] }))
    .filter((q) => q.evidence.length);
}

class Scores {
  private sums = { 1: 0, 5: 0, 10: 0, 20: 0 };
  private n = 0;
  add(ranked: string[], evidence: string[]): void {
    for (const k of DEPTHS) {
      const top = new Set(ranked.slice(0, k));
      this.sums[k] += evidence.filter((e) => top.has(e)).length / evidence.length;
    }
    this.n++;
  }
  result(): Recall {
    const at = { 1: 0, 5: 0, 10: 0, 20: 0 };
    for (const k of DEPTHS) at[k] = this.n ? +(this.sums[k] / this.n).toFixed(3) : 0;
    return { questions: this.n, at };
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
export async function memoryRecall(opts: { dataDir?: string; full?: StoreOptions; lexical?: StoreOptions } = {}): Promise<RecallReport | null> {
  const dir = opts.dataDir ?? LOCOMO_DEV;
  if (!fs.existsSync(dir)) {
    process.stderr.write(`memory recall: skipped, no LoCoMo data at ${dir}\n`);
    return null;
  }
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  const anchor = new Scores();
  const lexical = new Scores();
  const full = new Scores();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-recall-'));
  const lexicalOnly: StoreOptions = { ...opts.lexical, weights: { activation: 0, vector: 0, ...opts.lexical?.weights } };
  try {
    for (const f of files) {
      const conv = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Record<string, unknown>;
      const lines = importLines(conv);
      const qs = questions(conv);
      const anchorRank = anchorRanking(lines);
      const stores = [MemoryStore.open(path.join(tmp, `${f}.full.db`), opts.full), MemoryStore.open(path.join(tmp, `${f}.lex.db`), lexicalOnly)];
      try {
        for (const s of stores) await s.observeMany(lines, { surface: 'import' });
        for (const q of qs) {
          anchor.add(anchorRank(q.question), q.evidence);
          full.add(await storeRanking(stores[0], q.question), q.evidence);
          lexical.add(await storeRanking(stores[1], q.question), q.evidence);
        }
      } finally {
        for (const s of stores) s.close();
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return { conversations: files, anchor: anchor.result(), lexical: lexical.result(), full: full.result() };
}

export function formatRecall(r: RecallReport): string {
  const row = (name: string, x: Recall) => `${name.padEnd(34)} ${DEPTHS.map((k) => x.at[k].toFixed(3).padStart(6)).join(' ')}`;
  return [
    `memory recall, LoCoMo dev (${r.conversations.join(', ')}; ${r.full.questions} questions)`,
    `${''.padEnd(34)} ${DEPTHS.map((k) => `@${k}`.padStart(6)).join(' ')}`,
    row('anchor: FTS5 BM25, row per turn', r.anchor),
    row('store, lexical arm alone', r.lexical),
    row('store, full pipeline', r.full),
    `recall@10 full / anchor: ${(r.full.at[10] / r.anchor.at[10]).toFixed(3)}`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await memoryRecall();
  if (r) {
    console.log(formatRecall(r));
    if (process.argv.includes('--json')) console.log(JSON.stringify(r));
  }
}
