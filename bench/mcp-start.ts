// `npm run bench mcp-start` (issue 28 part 4): the CLI as nightshift starts it (wall, hooks, the
// memory server over loopback HTTP), against the fake API, five ways: as configured
// (MCP_CONNECTION_NONBLOCKING=0), with the variable unset (the CLI's default), =1, with the
// server's `alwaysLoad: true`, and with no memory server at all. For each: whether
// the first request carried the memory tools, the CLI's own MCP wait (`mcp_connect_ms` in its
// CLAUDE_CODE_PROFILE_STARTUP report) and spawn-to-exit time. Interleaved, medians.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadAgent } from '../config/agents.js';
import { loadConfig } from '../config/config.js';
import { inputStdio, writeInputs } from '../core/child-process.js';
import { createLogger } from '../logs/logger.js';
import { claudeArgs } from '../sessions/run/command.js';
import { prepareGuest } from '../sessions/wall/guest.js';
import { startFakeApi, text } from '../test/fake-api.js';
import { claudeTestEnv, configYaml, shareWithSession } from '../test/helpers.js';
import { median } from './timing.js';

export const MODES = ['as configured', 'MCP_CONNECTION_NONBLOCKING unset', 'MCP_CONNECTION_NONBLOCKING=1', 'alwaysLoad', 'no memory server'] as const;
type Mode = (typeof MODES)[number];
export type McpStartRow = { mode: Mode; runs: number; with_memory_tools: number; mcp_connect_median_ms: number | null; spawn_to_first_request_median_ms: number; spawn_to_exit_median_ms: number };

// The CLI's start-up report (text) names each checkpoint with its time; the MCP wait is one line.
function mcpConnectMs(home: string): number | null {
  const dir = path.join(home, '.claude', 'startup-perf');
  if (!fs.existsSync(dir)) return null;
  for (const f of fs.readdirSync(dir)) {
    const m = /mcp_connect_ms\D{0,40}?([\d.]+)/.exec(fs.readFileSync(path.join(dir, f), 'utf8'));
    if (m) return Number(m[1]);
  }
  return null;
}

// BENCH_SHOW_PERF=1: the CLI's whole start-up report of each mode's first run, to stderr.
function showPerf(mode: string, home: string): void {
  const dir = path.join(home, '.claude', 'startup-perf');
  if (!fs.existsSync(dir)) return;
  for (const f of fs.readdirSync(dir)) process.stderr.write(`--- ${mode}: ${f}\n${fs.readFileSync(path.join(dir, f), 'utf8')}\n`);
}

export async function mcpStartBench(runs = Number(process.env.BENCH_RUNS) || 5): Promise<McpStartRow[]> {
  const api = await startFakeApi();
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-mcp-start-'));
  const first = new Map<string, string[]>();
  const firstAt = new Map<string, number>();
  api.script('mcpstart', ({ body, prompt }) => {
    const run = /RUN=(\S+)/.exec(prompt)?.[1] ?? '?';
    if (!first.has(run)) {
      first.set(run, (body.tools ?? []).map((t: { name: string }) => t.name));
      firstAt.set(run, performance.now());
    }
    return text('Done.');
  });
  try {
    for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
    fs.chmodSync(dir, 0o755);
    shareWithSession(path.join(dir, 'vault'));
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml({ budget: { max_sessions_per_day: 1000 } }));
    fs.writeFileSync(path.join(dir, 'prompts', 'bench.md'), '---\nallowed_tools: ["Bash(echo:*)"]\nenv: [MCP_CONNECTION_NONBLOCKING]\n---\nSCENARIO=mcpstart\n');
    const env = { ...claudeTestEnv(dir, api.url), CLAUDE_CODE_PROFILE_STARTUP: '1' };
    const config = loadConfig(path.join(dir, 'nightshift.yaml'));
    const agent = loadAgent(config, 'bench');
    const quiet = createLogger({ redact: (t) => t, level: 'warn', stderr: { write: () => {} } });
    const times = new Map<Mode, { exit: number[]; mcp: number[]; request: number[]; tools: number }>(MODES.map((m) => [m, { exit: [], mcp: [], request: [], tools: 0 }]));
    let n = 0;
    for (let i = 0; i < runs; i++) {
      for (const mode of MODES) {
        const run = `r${n++}`;
        const runEnv = { ...env, ...(mode.startsWith('MCP_CONNECTION_NONBLOCKING=') ? { MCP_CONNECTION_NONBLOCKING: mode.split('=')[1] } : {}) };
        const g = await prepareGuest(
          { config, agent, sessionId: `bench-mcp-${run}`, env: runEnv, logger: quiet, redact: (t) => t, state: 'You are the bench agent.\n', version: 'bench' },
          (extra) => claudeArgs({ ...agent, prompt: `${agent.prompt.trim()} RUN=${run}` }, config, extra),
        );
        try {
          const file = g.args[g.args.indexOf('--mcp-config') + 1];
          if (mode === 'alwaysLoad') {
            const c = JSON.parse(fs.readFileSync(file, 'utf8'));
            for (const s of Object.values(c.mcpServers) as Array<Record<string, unknown>>) s.alwaysLoad = true;
            fs.writeFileSync(file, JSON.stringify(c));
          }
          const args = mode === 'no memory server' ? g.args.filter((a, j, all) => a !== '--mcp-config' && all[j - 1] !== '--mcp-config') : g.args;
          const spawnEnv = { ...g.env };
          if (mode === 'MCP_CONNECTION_NONBLOCKING unset') delete spawnEnv.MCP_CONNECTION_NONBLOCKING;
          const t0 = performance.now();
          await new Promise<void>((resolve, reject) => {
            const c = spawn(g.command, args, { env: spawnEnv, cwd: config.vault, stdio: ['ignore', 'ignore', 'pipe', ...inputStdio(g.inputs)], ...(g.user ? { uid: g.user.uid, gid: g.user.gid } : {}) });
            writeInputs(c, g.inputs);
            let err = '';
            c.stderr!.on('data', (d) => (err += d));
            c.on('error', reject);
            c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`the CLI exited ${code}: ${err.slice(-800)}`))));
            g.spawned();
          });
          const t = times.get(mode)!;
          t.exit.push(performance.now() - t0);
          if (firstAt.has(run)) t.request.push(firstAt.get(run)! - t0);
          const home = g.env.CLAUDE_CONFIG_DIR ? path.dirname(g.env.CLAUDE_CONFIG_DIR) : '';
          const ms = mcpConnectMs(home);
          if (process.env.BENCH_SHOW_PERF && i === 0) showPerf(mode, home);
          if (ms !== null) t.mcp.push(ms);
          if ((first.get(run) ?? []).some((name) => name.startsWith('mcp__'))) t.tools++;
        } finally {
          await g.close();
        }
      }
      process.stderr.write('.');
    }
    process.stderr.write('\n');
    const rows = MODES.map((mode) => {
      const t = times.get(mode)!;
      return { mode, runs, with_memory_tools: t.tools, mcp_connect_median_ms: t.mcp.length ? Math.round(median(t.mcp)) : null, spawn_to_first_request_median_ms: Math.round(median(t.request)), spawn_to_exit_median_ms: Math.round(median(t.exit)) };
    });
    for (const r of rows) console.log(`mcp start, ${r.mode.padEnd(30)} memory tools in the first request ${r.with_memory_tools}/${r.runs}; the CLI's mcp_connect ${r.mcp_connect_median_ms ?? '?'} ms; spawn to first request ${r.spawn_to_first_request_median_ms} ms; to exit ${r.spawn_to_exit_median_ms} ms (medians; load ${os.loadavg()[0].toFixed(2)})`);
    return rows;
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
