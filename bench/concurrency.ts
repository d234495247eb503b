// `npm run bench concurrency`: sessions side by side (sessions.max_concurrent), as ratios against
// one session in the same run. Goals (issue 51): four one-call sessions at max_concurrent 4 in
// ≤ 1.5× the time of one; the charge with 8 supervisors racing p99 ≤ 5 ms; the supervisor's peak
// memory with 4 sessions ≤ 2× its peak with one.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Ledger } from '../budget/ledger.js';
import { startFakeApi } from '../test/fake-api.js';
import { BIN, claudeTestEnv, configYaml, shareWithSession } from '../test/helpers.js';
import { median } from './timing.js';

const AGENTS = ['c1', 'c2', 'c3', 'c4'];

// One tick over `agents` (each with a vault of its own) at `max`: its time and the tick process's
// peak resident memory (VmHWM, read as it exits).
async function tickOnce(apiUrl: string, agents: string[], max: number): Promise<{ ms: number; peakKb: number }> {
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-conc-'));
  try {
    fs.chmodSync(dir, 0o711);
    for (const d of ['vault', 'prompts', ...agents.map((a) => `vault-${a}`)]) fs.mkdirSync(path.join(dir, d));
    for (const a of agents) shareWithSession(path.join(dir, `vault-${a}`));
    const vaults = `vaults:\n${agents.map((a) => `  ${a}: ./vault-${a}\n`).join('')}`;
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml({ top: `git:\n  enabled: false\nsessions:\n  max_concurrent: ${max}\n${vaults}dispatch:\n${agents.map((a) => `  - agent: ${a}\n`).join('')}` }));
    for (const a of agents) fs.writeFileSync(path.join(dir, 'prompts', `${a}.md`), `---\nallowed_tools: ["Bash(echo:*)"]\n---\nSCENARIO=text ${a}\n`);
    const env = claudeTestEnv(dir, apiUrl);
    const t0 = performance.now();
    let peakKb = 0;
    await new Promise<void>((resolve, reject) => {
      const c = spawn(process.execPath, [BIN, 'tick'], { env, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr.on('data', (d) => (err += d));
      // The high-water mark as the process lives (the last read before it exits is its peak).
      const poll = setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${c.pid}/status`, 'utf8'));
          if (m) peakKb = Math.max(peakKb, Number(m[1]));
        } catch {
          // gone
        }
      }, 20);
      c.on('error', reject);
      c.on('close', (code) => {
        clearInterval(poll);
        if (code === 0) resolve();
        else reject(new Error(`tick exited ${code}: ${err.slice(-2000)}`));
      });
    });
    const ms = performance.now() - t0;
    const ledger = Ledger.open(path.join(dir, 'state', 'ledger.db'));
    const n = ledger.dayTotals(new Date().toISOString().slice(0, 10)).sessions;
    ledger.close();
    if (n !== agents.length) throw new Error(`expected ${agents.length} sessions from one tick, got ${n}`);
    return { ms, peakKb };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// 8 processes charging at once, each `perRacer` times: the charge's own time (the IMMEDIATE
// transaction that decides and writes), as each racer measured it.
async function chargeRace(perRacer: number): Promise<number[]> {
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-charge-'));
  try {
    const file = path.join(dir, 'ledger.db');
    Ledger.open(file).close();
    const script = `
      const { Ledger } = await import(${JSON.stringify(path.join(import.meta.dirname, '..', 'budget', 'ledger.js'))});
      const { chargeFor } = await import(${JSON.stringify(path.join(import.meta.dirname, '..', 'budget', 'policy.js'))});
      const limits = { maxSessionsPerDay: 1e9, maxUsdPerDay: 1e9, maxUsdPerSession: 1, minSessionUsd: 0.01, maxRunsPerDay: null };
      const ledger = Ledger.open(${JSON.stringify(file)});
      const out = [];
      for (let i = 0; i < ${perRacer}; i++) {
        const s = { id: 'r' + process.pid + '-' + i, agent: 'a' + process.pid, day: '2026-12-07', started_at: new Date().toISOString(), transcript: null, model: 'sonnet', supervisor_pid: process.pid, supervisor_start: null };
        const t0 = performance.now();
        ledger.open(s, (today) => chargeFor(s.agent, today, limits, false));
        out.push(performance.now() - t0);
      }
      ledger.close();
      process.stdout.write(JSON.stringify(out));`;
    const runs = await Promise.all(Array.from({ length: 8 }, () => new Promise<number[]>((resolve, reject) => {
      const c = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (err += d));
      c.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
    })));
    return runs.flat().sort((a, b) => a - b);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function concurrencyBench(rounds = 3) {
  const api = await startFakeApi();
  try {
    const one: Array<{ ms: number; peakKb: number }> = [];
    const four: Array<{ ms: number; peakKb: number }> = [];
    // Interleaved, so the machine's drift falls on both.
    for (let i = 0; i < rounds; i++) {
      one.push(await tickOnce(api.url, AGENTS.slice(0, 1), 1));
      four.push(await tickOnce(api.url, AGENTS, 4));
    }
    const charges = await chargeRace(50);
    const p = (q: number) => charges[Math.min(charges.length - 1, Math.floor(q * charges.length))];
    const r = {
      one_session_ms: median(one.map((x) => x.ms)),
      four_at_once_ms: median(four.map((x) => x.ms)),
      time_ratio: median(four.map((x) => x.ms)) / median(one.map((x) => x.ms)),
      charge_p50_ms: p(0.5),
      charge_p99_ms: p(0.99),
      peak_one_mb: median(one.map((x) => x.peakKb)) / 1024,
      peak_four_mb: median(four.map((x) => x.peakKb)) / 1024,
      memory_ratio: median(four.map((x) => x.peakKb)) / median(one.map((x) => x.peakKb)),
    };
    console.log(`concurrency: four one-call sessions at max_concurrent 4 ${r.four_at_once_ms.toFixed(0)} ms vs one ${r.one_session_ms.toFixed(0)} ms: ${r.time_ratio.toFixed(2)}× (goal ≤ 1.5)`);
    console.log(`concurrency: the charge with 8 racing: p50 ${r.charge_p50_ms.toFixed(2)} ms, p99 ${r.charge_p99_ms.toFixed(2)} ms (goal p99 ≤ 5)`);
    console.log(`concurrency: the supervisor's peak memory ${r.peak_four_mb.toFixed(0)} MB with 4 vs ${r.peak_one_mb.toFixed(0)} MB with 1: ${r.memory_ratio.toFixed(2)}× (goal ≤ 2)`);
    return r;
  } finally {
    await api.close();
  }
}
