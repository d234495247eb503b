// Where one 10k memory query's milliseconds go (issue 40): the same store and queries as
// `memory-mcp`, timed three ways. Over stdio against `nightshift mcp` (the bench's path), with
// ping as the floor; in process through the SDK's InMemoryTransport (the MCP layers without the
// hop); and the store's query alone, each SQL statement timed with its rows. BENCH_CPU_PROF=dir
// also writes the server's CPU profile. `node dist/bench/mcp-query-split.js`.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { BIN } from '../test/helpers.js';
import { Corpus, importLines, percentile, workspace } from './memory-mcp.js';
import { MemoryStore } from '../memory/store.js';
import { registerTools } from '../memory/mcp/server.js';

const N = Number(process.env.BENCH_CALLS) || 500;
const p50 = (xs: number[]) => +percentile(xs, 0.5).toFixed(3);

async function timed(n: number, f: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await f(i);
    out.push(performance.now() - t0);
  }
  return out;
}

export async function mcpQuerySplit(): Promise<void> {
  const corpus = new Corpus();
  const ws = workspace();
  try {
    const stored = Array.from({ length: 10_000 }, () => corpus.sentence());
    await importLines(ws, stored);
    const queries = Array.from({ length: N + 20 }, () => corpus.queryFor(corpus.pick(stored)));
    const db = path.join(ws.dir, 'state', 'memory.db');

    // 1. Over stdio, as the bench.
    const prof = process.env.BENCH_CPU_PROF;
    const args = [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), BIN, 'mcp', '--config', ws.config];
    const client = new Client({ name: 'split', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args, env: ws.env, cwd: ws.dir, stderr: 'inherit' }));
    await client.listTools();
    const call = (q: string) => client.callTool({ name: 'query', arguments: { query: q, limit: 10 } });
    for (const q of queries.slice(0, 20)) await call(q);
    const stdio = await timed(N, (i) => call(queries[20 + i]));
    const ping = await timed(N, () => client.ping());
    await client.close();

    // 2. In process: the real McpServer and Client over the SDK's in-memory pair.
    const store = MemoryStore.open(db);
    const server = new McpServer({ name: 'split', version: '1' });
    registerTools(server, store, { actor: { surface: 'mcp', sessionId: null }, defaultSource: 'mcp', trustSource: true, speaker: 'operator' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const local = new Client({ name: 'split', version: '1' });
    await local.connect(b);
    await local.listTools();
    const lcall = (q: string) => local.callTool({ name: 'query', arguments: { query: q, limit: 10 } });
    for (const q of queries.slice(0, 20)) await lcall(q);
    const inproc = await timed(N, (i) => lcall(queries[20 + i]));
    const lping = await timed(N, () => local.ping());

    // 3. The store's query alone, and each statement inside it.
    for (const q of queries.slice(0, 20)) await store.query(q, { limit: 10 });
    const bare = await timed(N, (i) => store.query(queries[20 + i], { limit: 10 }));
    const sql = new Map<string, { ms: number[]; rows: number[] }>();
    const proto = Object.getPrototypeOf((store as unknown as { db: Database.Database }).db.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
    for (const m of ['all', 'get', 'run']) {
      const orig = proto[m];
      proto[m] = function (this: { source: string }, ...a: unknown[]) {
        const t0 = performance.now();
        const r = orig.apply(this, a);
        const ms = performance.now() - t0;
        const key = this.source.replace(/\s+/g, ' ').slice(0, 110);
        const e = sql.get(key) ?? { ms: [], rows: [] };
        e.ms.push(ms);
        e.rows.push(Array.isArray(r) ? r.length : 1);
        sql.set(key, e);
        return r;
      };
    }
    const wrapped = await timed(N, (i) => store.query(queries[20 + i], { limit: 10 }));
    await local.close();
    store.close();

    console.log(`10k memories, ${N} queries, p50 ms`);
    console.log(`  over stdio: query ${p50(stdio)}, ping ${p50(ping)}`);
    console.log(`  in process (SDK Client and McpServer, in-memory pair): query ${p50(inproc)}, ping ${p50(lping)}`);
    console.log(`  store.query alone: ${p50(bare)} (statements timed: ${p50(wrapped)})`);
    let sum = 0;
    for (const [k, e] of sql) {
      const per = e.ms.reduce((x, y) => x + y, 0) / N;
      sum += per;
      console.log(`    ${per.toFixed(3)} ms/query  ${(e.ms.length / N).toFixed(2)} calls  rows p50 ${percentile(e.rows, 0.5)}  ${k}`);
    }
    console.log(`    SQL total (mean per query) ${sum.toFixed(3)} ms`);
  } finally {
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await mcpQuerySplit();
