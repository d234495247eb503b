// The session's memory server (Streamable HTTP, stateless: a fresh McpServer per request) answering
// the CLI's start-up requests and a query, each against a bare loopback server's `{}` to the same
// client in the same run: what a request costs beyond HTTP itself.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startMemoryHttp } from '../memory/mcp/mcp-http.js';
import { MemoryStore } from '../memory/store.js';
import { createLogger } from '../logs/logger.js';
import { median } from './timing.js';

async function times(url: string, token: string | null, body: object, n: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const text = JSON.stringify(body);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`memory server answered ${res.statusCode} to ${text.slice(0, 80)}`));
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(text);
    });
    out.push(performance.now() - t0);
  }
  agent.destroy();
  return median(out);
}

export async function mcpHttpBench(n = 300) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-bench-mcp-http-'));
  const store = MemoryStore.open(path.join(dir, 'memory.db'));
  for (let i = 0; i < 200; i++) await store.observe({ text: `bench note ${i}: the deploy of service ${i % 17} moved to host ${i % 5}`, source: 'bench' }, { surface: 'cli' });
  const srv = await startMemoryHttp({ store, sessionId: 'bench', logger: createLogger({ redact: (x) => x, level: 'warn', stderr: { write: () => {} } }), version: 'bench' });
  const bare = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/mcp`;
  try {
    const asks = {
      initialize: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } },
      'tools/list': { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
      query: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'query', arguments: { query: 'deploy of service 3', limit: 10 } } },
    };
    for (const b of Object.values(asks)) await times(srv.url, srv.token, b, 50);
    const base = await times(bareUrl, null, asks.initialize, n);
    const out: Record<string, number> = { bare_p50_ms: +base.toFixed(3) };
    for (const [name, b] of Object.entries(asks)) out[`${name}_p50_ms`] = +(await times(srv.url, srv.token, b, n)).toFixed(3);
    console.log(`memory server over HTTP (p50 of ${n}): ${Object.entries(out).map(([k, v]) => `${k.replace('_p50_ms', '')} ${v} ms`).join(', ')}`);
    return out;
  } finally {
    await srv.close();
    bare.close();
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
