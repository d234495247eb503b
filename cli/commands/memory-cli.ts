// `nightshift memory observe|query|recall|stats|import|export` and `nightshift mcp`. cli/main.ts
// only dispatches here; the store is opened once per command and always closed.
import { didYouMean } from '../../core/suggest.js';
import fs from 'node:fs';
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Config } from '../../config/schema.js';
import { EXIT, UsageError } from '../../core/errors.js';
import type { Logger } from '../../logs/logger.js';
import { LEARNING_FLAGS, LEARNING_SUBS, learningCommand, type LearningFlags } from './memory-learning.js';
import { parseImportLine, type LineProblem } from '../../memory/text/jsonl.js';
import { runMcpServer } from '../../memory/mcp/mcp-stdio.js';
import { serveStore } from '../../memory/mcp/served-store.js';
import { toResult } from '../../memory/mcp/server.js';
import { openMemoryStore, refusal } from '../../memory/open.js';
import { AGENT } from '../../memory/store/scope.js';
// Opening the store lives in memory/open.ts; these names stay importable from here for the CLI's callers.
export { MemoryDbError, MemoryRefusedError, openMemoryStore } from '../../memory/open.js';
import type { MemoryStore } from '../../memory/store.js';
import { CATEGORIES, MemoryError, type Actor, type Category, type MemoryStats, type ObserveInput, type ObserveResult, type QueryResult } from '../../memory/types.js';
import type { MemoryFlags, MemoryIo } from './memory-io.js';
import { counted } from '../../core/words.js';



export type McpIo = { stdin: Readable; stdout: Writable; env: NodeJS.ProcessEnv; logger: Logger; version: string; signal?: AbortSignal };

const CLI_ACTOR: Actor = { surface: 'cli', sessionId: null };
const IMPORT_ACTOR: Actor = { surface: 'import', sessionId: null };

// `agent`: the store as that agent's sessions see it (memory/store/scope.ts); unset, all of it.
export async function withStore<T>(config: Config, io: MemoryIo, fn: (s: MemoryStore) => Promise<T>, agent: string | null = null): Promise<T> {
  const store = await openMemoryStore(config, io.env, io.logger, agent);
  try {
    return await fn(store).catch(refusal);
  } finally {
    store.close();
  }
}

function oneArg(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`Expected \`nightshift memory ${usage}\`, got ${counted(positionals.length, 'argument')}. See \`nightshift memory --help\`.`);
  return positionals[0];
}

function limitOf(flags: MemoryFlags): number {
  if (flags.limit === undefined) return 10;
  const n = Number(flags.limit);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new UsageError(`Expected --limit to be a whole number from 1 to 1000, got \`${flags.limit}\``);
  return n;
}

function timeOf(v: string | undefined, flag: string): string | null {
  if (v === undefined) return null;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw new UsageError(`Expected --${flag} to be an ISO-8601 time (2026-03-01 or 2026-03-01T09:00:00Z), got \`${v}\``);
  return new Date(ms).toISOString();
}

// An agent's name as agents are named (its sessions' view of the store, memory/store/scope.ts).
function agentOf(name: string): string {
  if (!AGENT.test(name)) throw new UsageError(`Expected --agent to be an agent's name (a-z, 0-9, - and _), got \`${name}\``);
  return name;
}

function categoryOf(flags: MemoryFlags): Category | undefined {
  if (flags.category === undefined) return undefined;
  if (!CATEGORIES.includes(flags.category as Category)) throw new UsageError(`Expected --category to be one of ${CATEGORIES.join(', ')}, got \`${flags.category}\``);
  return flags.category as Category;
}

const FLAG_KEYS: Array<keyof MemoryFlags> = ['json', 'limit', 'explain', 'include-faded', 'source', 'category', 'tags', 'speaker', 'valid-from', 'as-of', 'agent'];
const SUB_FLAGS: Record<string, Array<keyof MemoryFlags>> = {
  observe: ['json', 'source', 'category', 'tags', 'speaker', 'valid-from'],
  query: ['json', 'limit', 'explain', 'include-faded', 'as-of', 'agent'],
  recall: ['json'],
  stats: ['json'],
  import: ['json'],
  export: ['json'],
};

/** Runs `nightshift memory <sub> ...`; returns the exit code. */
export async function memoryCommand(config: Config, positionals: string[], flags: MemoryFlags, io: MemoryIo): Promise<number> {
  const [sub, ...args] = positionals;
  if ((LEARNING_SUBS as readonly string[]).includes(sub)) {
    const learning = sub as (typeof LEARNING_SUBS)[number];
    for (const [k, v] of Object.entries(flags)) {
      if (v !== undefined && k !== 'config' && !LEARNING_FLAGS[learning].includes(k)) throw new UsageError(`\`memory ${sub}\` does not take --${k}. See \`nightshift memory --help\`.`);
    }
    return learningCommand(config, learning, args, flags as LearningFlags, io, withStore);
  }
  const allowed = sub ? SUB_FLAGS[sub] : undefined;
  if (!allowed) throw new UsageError(`Expected \`nightshift memory observe|query|recall|stats|import|export|${LEARNING_SUBS.join('|')}\`, got ${sub ? `\`${sub}\`` : 'nothing'}.${sub ? didYouMean(sub, [...Object.keys(SUB_FLAGS), ...LEARNING_SUBS]) : ''} See \`nightshift memory --help\`.`);
  for (const k of FLAG_KEYS) {
    if (flags[k] !== undefined && !allowed.includes(k)) throw new UsageError(`\`memory ${sub}\` does not take --${k}. See \`nightshift memory --help\`.`);
  }
  switch (sub) {
    case 'observe':
      return observe(config, oneArg(args, 'observe TEXT'), flags, io);
    case 'query':
      return query(config, oneArg(args, 'query TEXT'), flags, io);
    case 'recall':
      return recall(config, oneArg(args, 'recall ID'), flags, io);
    case 'stats':
      if (args.length) throw new UsageError('Expected `nightshift memory stats`, with no arguments');
      return stats(config, flags, io);
    case 'import':
      return importJsonl(config, oneArg(args, 'import FILE|-'), flags, io);
    default:
      if (args.length > 1) throw new UsageError('Expected `nightshift memory export [FILE]`');
      return exportJsonl(config, args[0], flags, io);
  }
}

function describeObserve(r: ObserveResult): string {
  if (r.decision === 'merge') return `merged into memory #${r.memory_id} (prediction error ${r.prediction_error.toFixed(2)})`;
  if (r.decision === 'link') return `new memory #${r.memory_id}, linked to #${r.linked_to} (prediction error ${r.prediction_error.toFixed(2)})`;
  return `new memory #${r.memory_id}`;
}

async function observe(config: Config, text: string, flags: MemoryFlags, io: MemoryIo): Promise<number> {
  if (!text.trim()) throw new UsageError('Expected TEXT to say something, got an empty string');
  const input: ObserveInput = {
    text,
    source: flags.source ?? 'cli',
    speaker: flags.speaker ?? 'operator',
    valid_from: timeOf(flags['valid-from'], 'valid-from'),
    category: categoryOf(flags),
    tags: flags.tags === undefined ? undefined : flags.tags.split(',').map((t) => t.trim()).filter(Boolean),
  };
  const r = await withStore(config, io, (s) => s.observe(input, CLI_ACTOR));
  io.out(flags.json ? JSON.stringify(r) : describeObserve(r));
  return EXIT.OK;
}

function queryLine(r: QueryResult): string {
  const labels = [r.faded ? 'faded' : '', r.superseded ? 'superseded' : '', r.possibly_outdated ? 'possibly outdated' : ''].filter(Boolean);
  const head = `#${r.id}  ${r.score.toFixed(3)}  [${r.category}]${labels.length ? ` (${labels.join(', ')})` : ''}  ${r.text.length > 200 ? `${r.text.slice(0, 200)}…` : r.text}`;
  const lines = [head];
  if (r.sources.length) lines.push(`      sources: ${r.sources.slice(0, 5).join(', ')}${r.sources.length > 5 ? ` and ${r.sources.length - 5} more` : ''}`);
  if (r.explain) lines.push(`      ${Object.entries(r.explain).map(([k, v]) => `${k} ${v.toFixed(3)}`).join('  ')}`);
  return lines.join('\n');
}

async function query(config: Config, text: string, flags: MemoryFlags, io: MemoryIo): Promise<number> {
  const limit = limitOf(flags);
  const asOf = timeOf(flags['as-of'], 'as-of');
  const agent = flags.agent === undefined ? null : agentOf(flags.agent);
  const results = await withStore(config, io, async (s) => s.query(text, { limit, include_faded: !!flags['include-faded'], explain: !!flags.explain, as_of: asOf }), agent);
  // The same array the MCP `query` tool returns (plus `explain` when asked for).
  if (flags.json) io.out(JSON.stringify(results.map((r) => (flags.explain && r.explain ? { ...toResult(r), explain: r.explain } : toResult(r)))));
  else io.out(results.length ? results.map(queryLine).join('\n') : 'no memories match');
  return EXIT.OK;
}

async function recall(config: Config, idText: string, flags: MemoryFlags, io: MemoryIo): Promise<number> {
  const id = Number(idText);
  if (!Number.isInteger(id) || id < 1) throw new UsageError(`Expected ID to be a memory id (a whole number above 0), got \`${idText}\``);
  const m = await withStore(config, io, async (s) => s.recall(id));
  if (flags.json) io.out(JSON.stringify(m));
  else {
    io.out([
      `memory      #${m.id} [${m.category}]${m.faded ? ' (faded)' : ''}${m.superseded_by !== null ? ` (superseded by #${m.superseded_by})` : ''}`,
      `text        ${m.text}`,
      `salience    ${m.salience.toFixed(2)}   confidence ${m.confidence.toFixed(2)}   accessed ${m.access_count}x`,
      `tags        ${m.tags.join(', ') || '-'}`,
      `created     ${m.created_at}   updated ${m.updated_at}`,
      `holds       from ${m.valid_from}${m.valid_to ? ` to ${m.valid_to}` : ''}   ${m.scope === null ? 'shared' : `${m.scope}'s own`}`,
      `sources     ${m.sources.join(', ') || '-'}`,
      ...m.edges.map((e) => `edge        ${e.direction === 'out' ? `-${e.type}-> #${e.to}` : `<-${e.type}- #${e.to}`}  (weight ${e.weight.toFixed(2)})`),
    ].join('\n'));
  }
  return EXIT.OK;
}

async function stats(config: Config, flags: MemoryFlags, io: MemoryIo): Promise<number> {
  const s = await withStore(config, io, async (st) => st.stats());
  if (flags.json) io.out(JSON.stringify(s));
  else {
    io.out([
      `file          ${s.file} (schema ${s.schema_version})`,
      `memories      ${s.memories} (${s.faded} faded, ${s.superseded} superseded)`,
      `observations  ${s.observations}`,
      `edges         ${s.edges}`,
      `tombstones    ${s.tombstones}`,
      `recall        mean retrievability ${s.retrievability.mean.toFixed(2)} (${s.retrievability.below_half} below 0.5), ${s.overdue} overdue, ${s.reviews} reviews`,
      `learning      ${s.threads_open} open threads, ${s.predictions_open} open predictions, ${s.contradiction_candidates} contradiction candidates`,
      `embeddings    ${s.embedded} (${s.embedding_model ?? 'none'})`,
      `last dream    ${lastDreamLine(s.last_dream)}`,
      ...Object.entries(s.by_category).map(([c, n]) => `  ${c.padEnd(12)} ${n}`),
    ].join('\n'));
  }
  return EXIT.OK;
}

// Pure: the last dream in one line (a count its failed phase did not give is "-").
export function lastDreamLine(d: MemoryStats['last_dream']): string {
  if (!d) return 'never';
  const n = (x: number | null) => (x === null ? '-' : String(x));
  const failed = d.failed_phases.length ? `; failed: ${d.failed_phases.join(', ')}` : '';
  return `${d.at} (${d.duration_ms} ms): ${n(d.observations)} observations, ${n(d.abstractions)} abstractions, ${n(d.superseded)} superseded, ${n(d.contradictions)} contradiction candidates, ${n(d.linked)} linked, ${n(d.faded)} faded${failed}`;
}

// Progress on a terminal only: one line on stderr, rewritten at most every 200 ms.
function progress(io: MemoryIo, total: () => number): { tick(done: number): void; end(): void } {
  if (!io.stderrIsTTY) return { tick: () => {}, end: () => {} };
  let last = 0;
  let shown = false;
  return {
    tick(done) {
      const now = Date.now();
      if (now - last < 200) return;
      last = now;
      shown = true;
      io.err(`\rimport: ${done} observed, ${counted(total(), 'line')} read`);
    },
    end() {
      if (shown) io.err('\n');
    },
  };
}

export type ImportReport = { file: string; lines: number; observed: number; merge: number; link: number; novel: number; refused: LineProblem[]; bad: LineProblem[] };

async function importJsonl(config: Config, file: string, flags: MemoryFlags, io: MemoryIo): Promise<number> {
  const stream = file === '-' ? io.stdin : fs.createReadStream(file);
  if (file !== '-' && !fs.existsSync(file)) throw new UsageError(`Expected FILE to be a JSONL file, got \`${file}\` (not found)`);
  const report: ImportReport = { file, lines: 0, observed: 0, merge: 0, link: 0, novel: 0, refused: [], bad: [] };
  const bar = progress(io, () => report.lines);
  await withStore(config, io, async (store) => {
    // The store batches and reports refusals by index; lineOf maps an index back to its line.
    const lineOf: number[] = [];
    async function* good(): AsyncGenerator<ObserveInput> {
      const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
      for await (const line of rl) {
        report.lines++;
        const parsed = parseImportLine(line);
        if (!parsed) continue;
        if (!parsed.ok) {
          report.bad.push({ line: report.lines, field: parsed.field, message: parsed.message });
          continue;
        }
        lineOf.push(report.lines);
        yield parsed.input;
      }
    }
    const r = await store.observeMany(good(), IMPORT_ACTOR, (done) => bar.tick(done));
    r.forEach((o, i) => {
      if (o instanceof MemoryError) report.refused.push({ line: lineOf[i], field: o.code === 'TOMBSTONED' ? 'text' : '(line)', message: `${o.code}: ${o.message}` });
      else {
        report.observed++;
        report[o.decision]++;
      }
    });
  });
  bar.end();
  for (const p of [...report.bad, ...report.refused].sort((a, b) => a.line - b.line)) io.err(`${file}:${p.line}: ${p.field}: ${p.message}\n`);
  if (flags.json) io.out(JSON.stringify(report));
  else {
    const problems = report.bad.length + report.refused.length;
    io.out(`imported ${report.observed} of ${counted(report.lines, 'line')} from ${file === '-' ? 'stdin' : file}: ${report.novel} new, ${report.link} linked, ${report.merge} merged${problems ? `; ${report.bad.length} bad, ${report.refused.length} refused (see above)` : ''}`);
  }
  return report.bad.length || report.refused.length ? EXIT.FAILED : EXIT.OK;
}

async function exportJsonl(config: Config, file: string | undefined, flags: MemoryFlags, io: MemoryIo): Promise<number> {
  const toStdout = file === undefined || file === '-';
  let count = 0;
  await withStore(config, io, async (store) => {
    const fd = toStdout ? null : fs.openSync(`${file}.tmp`, 'w');
    let chunk: string[] = [];
    const write = () => {
      if (!chunk.length) return;
      if (fd === null) io.out(chunk.join('\n'));
      else fs.writeSync(fd, `${chunk.join('\n')}\n`);
      chunk = [];
    };
    try {
      for (const line of store.exportAll()) {
        chunk.push(JSON.stringify(line));
        count++;
        if (chunk.length >= 1000) write();
      }
      write();
    } finally {
      if (fd !== null) fs.closeSync(fd);
    }
    // Written beside and renamed, so an interrupted export never leaves half a file under the name.
    if (fd !== null) fs.renameSync(`${file}.tmp`, file!);
  });
  if (!toStdout) io.out(flags.json ? JSON.stringify({ file, lines: count }) : `exported ${counted(count, 'line')} to ${file}`);
  return EXIT.OK;
}

/** Runs `nightshift mcp`: the memory tools on stdio until the client closes stdin. */
export async function mcpCommand(config: Config, io: McpIo): Promise<number> {
  const store = await openMemoryStore(config, io.env, io.logger);
  const sessionId = io.env.NIGHTSHIFT_SESSION_ID || null;
  const serving = serveStore(store, config, io.env, io.logger, sessionId);
  try {
    await runMcpServer(store, { stdin: io.stdin, stdout: io.stdout, logger: io.logger, sessionId, version: io.version, signal: io.signal, afterObserve: serving.afterObserve });
  } finally {
    serving.stop();
    store.close();
  }
  return EXIT.OK;
}
