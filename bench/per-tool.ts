// What nightshift adds to each tool call: the same scripted sessions (1 and 1 + CALLS Bash calls,
// the offline API) run by the bare CLI and by `nightshift run` (wall, hooks, memory server, all as
// configured by default), interleaved. The per-call figure is the difference of the differences,
// so the fixed costs of a start and an end (each side's) drop out:
//   ((nightshift long - nightshift short) - (bare long - bare short)) / CALLS
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFakeApi } from '../test/fake-api.js';
import { CLAUDE, claudeTestEnv, configYaml, SANDBOX, shareWithSession } from '../test/helpers.js';
import { rotatedMedians, timedRun } from './timing.js';

const CALLS = 60;

function bareCli(env: NodeJS.ProcessEnv, cwd: string, calls: number): Promise<number> {
  const args = ['-p', `SCENARIO=varied N=${calls}`, '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--max-turns', String(CALLS + 10), '--model', 'sonnet', '--allowedTools', 'Bash(echo:*)'];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const c = spawn(CLAUDE, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('error', reject);
    c.on('close', (code) => {
      const ms = performance.now() - t0;
      // Every call must have run: a session cut short would read as a cheap one.
      const results = (out.match(/"type":"tool_result"/g) ?? []).length;
      if (code !== 0 || results !== calls) reject(new Error(`bare CLI exited ${code} after ${results} of ${calls} tool results:\n${err.slice(-1500)}`));
      else resolve(ms);
    });
  });
}

export async function perToolBench(runs = 5) {
  const api = await startFakeApi();
  // Not /tmp (the wall hides it); the session user passes through (never lists) to the vault.
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-per-tool-'));
  fs.chmodSync(dir, 0o711);
  try {
    const site = (name: string, calls: number) => {
      const d = path.join(dir, name);
      fs.mkdirSync(path.join(d, 'vault'), { recursive: true });
      fs.mkdirSync(path.join(d, 'prompts'));
      fs.chmodSync(d, 0o711);
      shareWithSession(path.join(d, 'vault'));
      fs.writeFileSync(path.join(d, 'nightshift.yaml'), configYaml({ budget: { max_sessions_per_day: 1000 }, claude: { max_turns: CALLS + 10 } }));
      fs.writeFileSync(path.join(d, 'prompts', 'bench.md'), `---\nallowed_tools: ["Bash(echo:*)"]\n---\nSCENARIO=varied N=${calls}\n`);
      return { d, env: claudeTestEnv(d, api.url) };
    };
    const short = site('short', 1);
    const long = site('long', CALLS + 1);
    const m = await rotatedMedians<'bare1' | 'bareN' | 'ns1' | 'nsN'>([
      ['bare1', () => bareCli(short.env, path.join(short.d, 'vault'), 1)],
      ['bareN', () => bareCli(long.env, path.join(long.d, 'vault'), CALLS + 1)],
      ['ns1', () => timedRun(short.env, short.d)],
      ['nsN', () => timedRun(long.env, long.d)],
    ], runs);
    const bareCall = (m.bareN - m.bare1) / CALLS;
    const nsCall = (m.nsN - m.ns1) / CALLS;
    const out = {
      runs, calls: CALLS, sandbox: SANDBOX,
      bare_short_median_ms: Math.round(m.bare1), bare_long_median_ms: Math.round(m.bareN), nightshift_short_median_ms: Math.round(m.ns1), nightshift_long_median_ms: Math.round(m.nsN),
      bare_per_call_ms: +bareCall.toFixed(1), nightshift_per_call_ms: +nsCall.toFixed(1), added_per_call_ms: +(nsCall - bareCall).toFixed(1), ratio: +(nsCall / bareCall).toFixed(3),
    };
    console.log(`per tool call (sandbox: ${SANDBOX}; ${CALLS} Bash calls, median of ${runs}): nightshift ${nsCall.toFixed(1)} ms vs bare CLI ${bareCall.toFixed(1)} ms a call: +${(nsCall - bareCall).toFixed(1)} ms (ratio ${(nsCall / bareCall).toFixed(2)}; goal +10 ms at most)`);
    return out;
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
