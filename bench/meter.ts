// The meter's cost on a proxied call: the same calls through a proxy without a meter and one with
// it (reading the body whole, fitting max_tokens, re-serialising, reading the reply's usage from a
// copy, two ledger writes per call), interleaved in one run against the imitation API. Bodies as
// the CLI sends them (its first turn is ~120 KB, system prompt and tools, with cache_control) and
// a small one, streamed and gzip-compressed replies.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Ledger } from '../budget/ledger.js';
import { SessionMeter } from '../budget/meter.js';
import { startApiProxy, type ApiProxy } from '../sessions/wall/api-proxy.js';
import { startFakeApi, TEST_API_KEY } from '../test/fake-api.js';
import { median } from './timing.js';

const quiet = { warn() {}, info() {}, debug() {} };

// A body shaped like the CLI's (measured on 2.1.197: 118 KB, max_tokens 64000, system blocks with
// cache_control, tools with JSON schemas): about `bytes` of it, a third system text, the rest tools.
function body(bytes: number, compress: boolean): Buffer {
  const system = [{ type: 'text', text: 'You are Claude Code. '.repeat(Math.max(1, Math.floor(bytes / 63))), cache_control: { type: 'ephemeral' } }];
  const tools = Array.from({ length: Math.max(1, Math.round((bytes * 2) / 3 / 1900)) }, (_, i) => ({
    name: `Tool${i}`,
    description: 'Runs a thing. '.repeat(80),
    input_schema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 8 }, (_, j) => [`p${j}`, { type: 'string', description: 'a parameter '.repeat(6) }])), required: ['p0'] },
  }));
  return Buffer.from(JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 64_000, stream: true, system, tools, messages: [{ role: 'user', content: `SCENARIO=text${compress ? ' COMPRESS=gzip' : ''}` }] }));
}

function post(p: ApiProxy, data: Buffer, agent: http.Agent): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const u = new URL(p.url);
    const req = http.request({ host: u.hostname, port: u.port, path: '/v1/messages?beta=true', method: 'POST', agent, headers: { 'x-api-key': p.token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'content-length': data.length, 'accept-encoding': 'gzip' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(data);
  });
}

export async function meterBench(runs = 200) {
  const api = await startFakeApi();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-bench-meter-'));
  const ledger = Ledger.open(path.join(dir, 'ledger.db'));
  ledger.open({ id: 'bench', agent: 'bench', day: '2026-12-01', started_at: new Date().toISOString(), transcript: null, model: 'sonnet', supervisor_pid: process.pid, supervisor_start: null });
  const meter = new SessionMeter({ reservationUsd: 1e9, persist: (m) => ledger.meter('bench', m) });
  const common = { upstream: api.url, credential: { kind: 'api_key' as const, value: TEST_API_KEY }, logger: quiet, redact: (x: string) => x };
  const off = await startApiProxy(common);
  const on = await startApiProxy({ ...common, meter });
  const agent = new http.Agent({ keepAlive: true });
  const out: Record<string, { runs: number; off_p50_ms: number; on_p50_ms: number; delta_p50_ms: number; ratio: number }> = {};
  try {
    for (const [name, bytes, gzip] of [['cli_body_120k', 120_000, false], ['cli_body_120k_gzip', 120_000, true], ['small_body_2k', 2000, false]] as const) {
      const data = body(bytes, gzip);
      if (name === 'cli_body_120k') console.log(`meter bench body: ${data.length} bytes`);
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < 20; i++) await post(off, data, agent), await post(on, data, agent);
      for (let i = 0; i < runs; i++) {
        // Interleaved, the order alternating, so drift and warm-up fall on both alike.
        if (i % 2) a.push(await post(off, data, agent)), b.push(await post(on, data, agent));
        else b.push(await post(on, data, agent)), a.push(await post(off, data, agent));
      }
      const mo = median(a);
      const mn = median(b);
      out[name] = { runs, off_p50_ms: +mo.toFixed(3), on_p50_ms: +mn.toFixed(3), delta_p50_ms: +(mn - mo).toFixed(3), ratio: +(mn / mo).toFixed(3) };
      console.log(`meter, ${name}: p50 ${mn.toFixed(2)} ms metered vs ${mo.toFixed(2)} ms unmetered (median of ${runs}): +${(mn - mo).toFixed(2)} ms, ${(mn / mo).toFixed(2)}x`);
    }
    const s = meter.state();
    if (s.pendingUsd !== 0 || s.worstCaseCalls !== 0) throw new Error(`Expected every bench call metered from its usage, got ${JSON.stringify(s)}`);
  } finally {
    agent.destroy();
    await off.close();
    await on.close();
    await api.close();
    ledger.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
