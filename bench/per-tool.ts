// What nightshift adds to each tool call: the same scripted sessions (1 and 1 + CALLS Bash calls,
// the offline API) run by the bare CLI and by `nightshift run` (wall, hooks, memory server, all as
// configured by default), interleaved. The bare CLI is the plain `claude -p --output-format
// stream-json --verbose` a user runs (the CLI runs `echo` unasked: a read-only command), so the
// flags nightshift chooses are nightshift's cost; what they cost alone is a figure of its own
// (`flags_added_gap_ms`: the bare CLI with exactly nightshift's flags, less the plain one). Two
// figures of the same thing:
// - the difference of the differences, so the fixed costs of a start and an end drop out:
//   ((nightshift long - nightshift short) - (bare long - bare short)) / CALLS
// - the median time between one API call and the next inside the long sessions (what the offline
//   API saw arrive: the model's answer relayed, the hook, the tool, the next request built and
//   relayed), nightshift's minus the bare CLI's: a whole session's noise does not enter it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadAgent } from '../config/agents.js';
import { loadConfig } from '../config/config.js';
import { claudeArgs } from '../sessions/run/command.js';
import { type FakeApi, startFakeApi } from '../test/fake-api.js';
import { CLAUDE, claudeTestEnv, configYaml, nightshift, SANDBOX, shareWithSession } from '../test/helpers.js';
import { median, rotatedMedians } from './timing.js';

// `nightshift run` timed, and the CPU its own process used (every thread; NIGHTSHIFT_PROFILE's
// marks, core/profile.ts) pushed to `cpu`: on 2 cores shared with other jobs the wall-clock
// figures swing by more than the goal, the supervisor's CPU a call far less.
async function profiledRun(env: NodeJS.ProcessEnv, cwd: string, cpu: number[]): Promise<number> {
  const t0 = performance.now();
  const r = await nightshift(['run', 'bench', '--json'], { ...env, NIGHTSHIFT_PROFILE: '1' }, cwd);
  const ms = performance.now() - t0;
  if (r.code !== 0) throw new Error(`nightshift run failed: ${r.stderr}`);
  const line = r.stderr.split('\n').filter((l) => l.includes('"nightshift_profile"')).at(-1);
  if (!line) throw new Error('nightshift run wrote no profile line (NIGHTSHIFT_PROFILE=1)');
  cpu.push((JSON.parse(line).nightshift_profile as Array<{ cpu_ms?: number }>).reduce((a, p) => a + (p.cpu_ms ?? 0), 0));
  return ms;
}

const CALLS = 60;

// `hook`: none; an HTTP PreToolUse hook from a settings file; or `control`, the Agent SDK's way
// (the prompt a stream-json message on stdin, after an `initialize` control request registering a
// PreToolUse callback that the CLI asks for on stdout and we answer `{}` on stdin); `stream`: the
// same stdin input without a hook, its baseline. `flags`: the whole command line in place of the
// plain one (nightshift's own, from sessions/run/command.ts).
type BareHook = { settings: string } | 'control' | 'stream' | null;
const PLAIN = ['--output-format', 'stream-json', '--verbose'];
function bareCli(env: NodeJS.ProcessEnv, cwd: string, calls: number, hook: BareHook = null, flags: string[] | null = null): Promise<number> {
  const prompt = `SCENARIO=varied N=${calls}`;
  const stdin = hook === 'control' || hook === 'stream';
  const args = flags ?? ['-p', ...(stdin ? ['--input-format', 'stream-json'] : [prompt]), ...PLAIN, ...(hook && typeof hook === 'object' ? ['--settings', hook.settings] : [])];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const c = spawn(CLAUDE, args, { env, cwd, stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const send = (o: unknown) => c.stdin!.write(`${JSON.stringify(o)}\n`);
    let out = '';
    let err = '';
    let rest = '';
    let callbacks = 0;
    c.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (!stdin) return;
      const lines = (rest + d).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const m = JSON.parse(line);
        if (m.type === 'control_request' && m.request?.subtype === 'hook_callback') {
          callbacks++;
          send({ type: 'control_response', response: { subtype: 'success', request_id: m.request_id, response: {} } });
        }
        if (m.type === 'result') c.stdin!.end();
      }
    });
    c.stderr!.on('data', (d) => (err += d));
    c.on('error', reject);
    if (hook === 'control') send({ type: 'control_request', request_id: 'init', request: { subtype: 'initialize', hooks: { PreToolUse: [{ matcher: null, hookCallbackIds: ['h0'] }] } } });
    if (stdin) send({ type: 'user', message: { role: 'user', content: prompt }, parent_tool_use_id: null, session_id: '' });
    c.on('close', (code) => {
      const ms = performance.now() - t0;
      // Every call must have run (a session cut short would read as a cheap one), and with the
      // control hook every call must have asked it.
      const results = (out.match(/"type":"tool_result"/g) ?? []).length;
      if (code !== 0 || results !== calls || (hook === 'control' && callbacks !== calls)) reject(new Error(`bare CLI exited ${code} after ${results} of ${calls} tool results (${callbacks} hook callbacks):\n${err.slice(-1500)}`));
      else resolve(ms);
    });
  });
}

// Runs `f` and keeps the median gap between the API calls it made (turn 2 on: the first follows
// the start), in `gaps`.
function gapped(api: FakeApi, gaps: number[], f: () => Promise<number>): () => Promise<number> {
  return async () => {
    const from = api.requests.length;
    const ms = await f();
    const at = api.requests.slice(from).filter((r) => r.stream).map((r) => r.at);
    const d = at.slice(1).map((t, i) => t - at[i]);
    if (d.length < CALLS) throw new Error(`only ${d.length + 1} API calls seen in a session of ${CALLS + 1} tool calls`);
    gaps.push(median(d));
    return ms;
  };
}

export async function perToolBench(runs = 5) {
  const api = await startFakeApi();
  // Not /tmp (the wall hides it); the session user passes through (never lists) to the vault.
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-per-tool-'));
  fs.chmodSync(dir, 0o711);
  try {
    const site = (name: string, calls: number, top = '', claude: Record<string, unknown> = {}) => {
      const d = path.join(dir, name);
      fs.mkdirSync(path.join(d, 'vault'), { recursive: true });
      fs.mkdirSync(path.join(d, 'prompts'));
      fs.chmodSync(d, 0o711);
      shareWithSession(path.join(d, 'vault'));
      fs.writeFileSync(path.join(d, 'nightshift.yaml'), configYaml({ budget: { max_sessions_per_day: 1000, max_usd_per_day: 10000 }, claude: { max_turns: CALLS + 10, ...claude }, top }));
      fs.writeFileSync(path.join(d, 'prompts', 'bench.md'), `---\nallowed_tools: ["Bash(echo:*)"]\n---\nSCENARIO=varied N=${calls}\n`);
      return { d, env: claudeTestEnv(d, api.url) };
    };
    const short = site('short', 1);
    const long = site('long', CALLS + 1);
    // nightshift's own command line for the long session, less the flags that name its parts (the
    // memory server, the hook settings: they are measured by BENCH_PARTS).
    const config = loadConfig(path.join(long.d, 'nightshift.yaml'));
    const ownFlags = claudeArgs(loadAgent(config, 'bench'), config);
    const bareGaps: number[] = [];
    const flagsGaps: number[] = [];
    const nsGaps: number[] = [];
    const cpuShort: number[] = [];
    const cpuLong: number[] = [];
    const m = await rotatedMedians<'bare1' | 'bareN' | 'flagsN' | 'ns1' | 'nsN'>([
      ['bare1', () => bareCli(short.env, path.join(short.d, 'vault'), 1)],
      ['bareN', gapped(api, bareGaps, () => bareCli(long.env, path.join(long.d, 'vault'), CALLS + 1))],
      ['flagsN', gapped(api, flagsGaps, () => bareCli(long.env, path.join(long.d, 'vault'), CALLS + 1, null, ownFlags))],
      ['ns1', () => profiledRun(short.env, short.d, cpuShort)],
      ['nsN', gapped(api, nsGaps, () => profiledRun(long.env, long.d, cpuLong))],
    ], runs);
    const bareCall = (m.bareN - m.bare1) / CALLS;
    const nsCall = (m.nsN - m.ns1) / CALLS;
    const bareGap = median(bareGaps);
    const nsGap = median(nsGaps);
    const flagsGap = median(flagsGaps);
    const cpuCall = (median(cpuLong) - median(cpuShort)) / CALLS;
    // BENCH_PARTS=1: the in-session figure with parts of nightshift off, to split the sum.
    const parts: Record<string, number> = {};
    if (process.env.BENCH_PARTS) {
      const variants: Array<[string, string, Record<string, unknown>?]> = [
        ['none_nohooks', 'sandbox: none\nhooks:\n  enabled: false\n'],
        ['none_hooks', 'sandbox: none\n'],
        ['wall_nohooks', 'hooks:\n  enabled: false\n'],
        // The whole session as before issue 53, with the CLI's partial messages on.
        ['ns_partial', '', { extra_args: ['--include-partial-messages'] }],
      ];
      const sites = variants.map(([name, top, claude]) => [name, site(`${name}-N`, CALLS + 1, top, claude)] as const);
      // The CLI's own price for an HTTP hook: the bare CLI with one that a loopback server answers
      // `{}` at once (no decision, no wall, no bridge).
      const hookServer = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => res.end('{}'));
      });
      await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
      const hookSettings = path.join(dir, 'bare-hook.json');
      fs.writeFileSync(hookSettings, JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'http', url: `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`, timeout: 30 }] }] } }));
      const g: Record<string, number[]> = { bare: [], bare_flags: [], bare_hook: [], bare_stream: [], bare_control_hook: [], ns: [] };
      for (const [name] of variants) g[name] = [];
      // The supervisor's CPU in each whole long session, by variant.
      const cpu: Record<string, number[]> = { ns: [], ...Object.fromEntries(variants.map(([name]) => [name, [] as number[]])) };
      await rotatedMedians([
        ['bare', gapped(api, g.bare, () => bareCli(long.env, path.join(long.d, 'vault'), CALLS + 1))],
        ['bare_flags', gapped(api, g.bare_flags, () => bareCli(long.env, path.join(long.d, 'vault'), CALLS + 1, null, ownFlags))],
        ['bare_hook', gapped(api, g.bare_hook, () => bareCli(long.env, path.join(long.d, 'vault'), CALLS + 1, { settings: hookSettings }))],
        // The same hook over the control protocol, and its baseline (the prompt on stdin).
        ['bare_stream', gapped(api, g.bare_stream, () => bareCli(long.env, path.join(long.d, 'vault'), CALLS + 1, 'stream'))],
        ['bare_control_hook', gapped(api, g.bare_control_hook, () => bareCli(long.env, path.join(long.d, 'vault'), CALLS + 1, 'control'))],
        ['ns', gapped(api, g.ns, () => profiledRun(long.env, long.d, cpu.ns))],
        ...sites.map(([name, s]) => [name, gapped(api, g[name], () => profiledRun(s.env, s.d, cpu[name]))] as [string, () => Promise<number>]),
      ], runs);
      hookServer.close();
      for (const k of Object.keys(g)) parts[k] = +(median(g[k]) - median(g.bare)).toFixed(1);
      // Each hook against its own baseline, the control hook's the prompt on stdin.
      parts.http_hook_itself = +(median(g.bare_hook) - median(g.bare)).toFixed(1);
      parts.control_hook_itself = +(median(g.bare_control_hook) - median(g.bare_stream)).toFixed(1);
      // Each variant's supervisor CPU a call against the whole session's (the same fixed costs).
      for (const k of Object.keys(cpu)) if (k !== 'ns') parts[`cpu_${k}_vs_ns`] = +((median(cpu[k]) - median(cpu.ns)) / (CALLS + 1)).toFixed(2);
      console.log(`per tool call, median gap between API calls added over the bare CLI's ${median(g.bare).toFixed(1)} ms: ${Object.entries(parts).filter(([k]) => k !== 'bare').map(([k, v]) => `${k} +${v} ms`).join(', ')}`);
    }
    const out = {
      ...(Object.keys(parts).length ? { parts_added_gap_ms: parts } : {}),
      runs, calls: CALLS, sandbox: SANDBOX,
      bare_short_median_ms: Math.round(m.bare1), bare_long_median_ms: Math.round(m.bareN), nightshift_short_median_ms: Math.round(m.ns1), nightshift_long_median_ms: Math.round(m.nsN),
      bare_per_call_ms: +bareCall.toFixed(1), nightshift_per_call_ms: +nsCall.toFixed(1), added_per_call_ms: +(nsCall - bareCall).toFixed(1), ratio: +(nsCall / bareCall).toFixed(3),
      bare_gap_ms: +bareGap.toFixed(1), nightshift_gap_ms: +nsGap.toFixed(1), added_gap_ms: +(nsGap - bareGap).toFixed(1),
      bare_flags: PLAIN, nightshift_flags: ownFlags.filter((a) => a.startsWith('--')), flags_gap_ms: +flagsGap.toFixed(1), flags_added_gap_ms: +(flagsGap - bareGap).toFixed(1),
      nightshift_cpu_per_call_ms: +cpuCall.toFixed(2),
      load: os.loadavg().map((l) => +l.toFixed(2)),
    };
    console.log(`per tool call (sandbox: ${SANDBOX}; ${CALLS} Bash calls, median of ${runs}): nightshift ${nsCall.toFixed(1)} ms vs bare CLI ${bareCall.toFixed(1)} ms a call: +${(nsCall - bareCall).toFixed(1)} ms (ratio ${(nsCall / bareCall).toFixed(2)}; goal +10 ms at most); median gap between API calls ${nsGap.toFixed(1)} vs ${bareGap.toFixed(1)} ms: +${(nsGap - bareGap).toFixed(1)} ms, of which nightshift's CLI flags alone +${(flagsGap - bareGap).toFixed(1)} ms; the supervisor's own CPU ${cpuCall.toFixed(2)} ms a call; load ${out.load.join(' ')}`);
    return out;
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
