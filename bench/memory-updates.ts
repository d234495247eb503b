// Knowledge updates (issue 39): facts that change (test/memory/update-pairs.ts), all in one store,
// the older claims valid from January, the newer from June. For each pair, a query today: is the
// current value ranked above the old one? A query as of March: is the old one ranked above (or
// alone)? And are the two values ever one memory (a merge), before or after a dream? Scenarios:
// the operator in order, the operator told out of order (the new first, the old later with its
// earlier valid_from), a session of one agent updating the operator's shared facts (it may not
// end them: they are marked possibly outdated for its own view), and with a word-hashing embedder
// (whose cosine between two values is high enough to merge). Each with the rule off as control.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dream } from '../memory/dream/dream.js';
import { MemoryStore, type StoreOptions } from '../memory/store.js';
import type { Actor } from '../memory/types.js';
import { BETWEEN, NEW_FROM, OLD_FROM, UPDATE_PAIRS } from '../test/memory/update-pairs.js';
import { createHashEmbedder } from './hash-embedder.js';

const TODAY = new Date('2026-12-01T12:00:00.000Z');
const OPERATOR: Actor = { surface: 'cli', sessionId: null };
// Each update in a session of its own (one session's consecutive observations are linked `follows`).
const session = (i: number): Actor => ({ surface: 'mcp', sessionId: `bench-session-${i}` });

export type UpdateScore = { pairs: number; current_first: number; as_of_old_first: number; merged: number; merged_after_dream: number };
export type UpdatesReport = Record<string, { on: UpdateScore; off: UpdateScore }>;

type Scenario = { name: string; options: StoreOptions; order: 'in' | 'reversed'; writer: 'operator' | 'session' };

const SCENARIOS: Scenario[] = [
  { name: 'operator, in order', options: {}, order: 'in', writer: 'operator' },
  { name: 'operator, told out of order', options: {}, order: 'reversed', writer: 'operator' },
  { name: 'session over shared facts', options: {}, order: 'in', writer: 'session' },
  { name: 'operator, hashing embedder', options: { embedder: createHashEmbedder() }, order: 'in', writer: 'operator' },
];

// Where each id first appears in the results (Infinity: absent).
const rankOf = (ids: number[], id: number) => (ids.includes(id) ? ids.indexOf(id) : Infinity);

async function score(dir: string, sc: Scenario, rule: boolean): Promise<UpdateScore> {
  const file = path.join(dir, `${sc.name.replace(/\W+/g, '-')}-${rule ? 'on' : 'off'}.db`);
  const options: StoreOptions = { ...sc.options, knowledgeUpdates: rule, now: () => TODAY };
  const operator = MemoryStore.open(file, options);
  const writer = sc.writer === 'session' ? operator.as('ops') : operator;
  const actor = (i: number) => (sc.writer === 'session' ? session(i) : OPERATOR);
  try {
    const olds: number[] = [];
    const news: number[] = [];
    const put = async (which: 'old' | 'new') => {
      for (const [i, p] of UPDATE_PAIRS.entries()) {
        const isOld = which === 'old';
        // The session's facts of the world are its own; the old ones are the operator's, shared.
        const store = isOld ? operator : writer;
        const r = await store.observe({ text: isOld ? p.old : p.new, valid_from: isOld ? OLD_FROM : NEW_FROM, speaker: 'operator' }, isOld ? OPERATOR : actor(i));
        (isOld ? olds : news).push(r.memory_id);
      }
    };
    if (sc.order === 'in') {
      await put('old');
      await put('new');
    } else {
      await put('new');
      await put('old');
    }
    const merged = UPDATE_PAIRS.filter((_, i) => olds[i] === news[i]).length;
    let current = 0;
    let asOf = 0;
    for (const [i, p] of UPDATE_PAIRS.entries()) {
      const now = (await writer.query(p.query, { limit: 10 })).map((r) => r.id);
      if (rankOf(now, news[i]) < rankOf(now, olds[i])) current++;
      const then = (await writer.query(p.query, { limit: 10, as_of: BETWEEN })).map((r) => r.id);
      if (rankOf(then, olds[i]) < rankOf(then, news[i])) asOf++;
    }
    await dream(operator, { actor: OPERATOR });
    // After the dream: each value still its own memory with its own words.
    const after = UPDATE_PAIRS.filter((p, i) => olds[i] === news[i] || operator.recall(olds[i]).text !== p.old || operator.recall(news[i]).text !== p.new).length;
    return { pairs: UPDATE_PAIRS.length, current_first: current, as_of_old_first: asOf, merged, merged_after_dream: after };
  } finally {
    operator.close();
  }
}

export async function memoryUpdatesBench(): Promise<UpdatesReport> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-updates-'));
  try {
    const out: UpdatesReport = {};
    for (const sc of SCENARIOS) out[sc.name] = { on: await score(dir, sc, true), off: await score(dir, sc, false) };
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function formatUpdates(r: UpdatesReport): string {
  const pct = (n: number, d: number) => `${n}/${d} (${((100 * n) / d).toFixed(1)}%)`;
  const lines = ['memory updates: current value first today, old value first as of before the change, values merged (now / after a dream)'];
  for (const [name, { on, off }] of Object.entries(r)) {
    for (const [label, s] of [['rule on ', on], ['rule off', off]] as const) {
      lines.push(`  ${name.padEnd(30)} ${label}  current first ${pct(s.current_first, s.pairs).padEnd(14)} as-of old first ${pct(s.as_of_old_first, s.pairs).padEnd(14)} merged ${s.merged} / ${s.merged_after_dream}`);
    }
  }
  return lines.join('\n');
}
