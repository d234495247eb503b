// The PreToolUse hook's cost: the same scripted session (10 tool calls) run by nightshift with its
// hook server and without (hooks.enabled: false), interleaved, and the hook's own HTTP round trip
// against a bare loopback server that answers `{}` to the same client.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { HOOK_PATH, startHookServer } from '../sessions/hooks/hook-server.js';
import { decider } from '../sessions/hooks/session-hooks.js';
import { startFakeApi } from '../test/fake-api.js';
import { median, timedRun } from './timing.js';
import { claudeTestEnv, configYaml, shareWithSession } from '../test/helpers.js';

const CALLS = 10;

async function roundTrips(url: string, token: string | null, n: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ session_id: 's', cwd: '/srv/vault', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'echo bench', description: 'x' }, tool_use_id: 't' });
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${url}${HOOK_PATH}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body.replace('bench', `bench ${i}`));
    });
    out.push(performance.now() - t0);
  }
  agent.destroy();
  return out;
}

export async function hooksBench(runs = 6) {
  // 1. The round trip alone: our hook server (guardrail + loop pre-block) vs a bare `{}` server.
  const quiet = { warn() {}, debug() {}, error() {} };
  const hs = await startHookServer({ decide: decider({ vault: '/srv/vault', extraDirs: [], home: '/root' }, { maxRepeats: 5, window: 20, cycleRepeats: 3 }), logger: quiet, redact: (x) => x });
  const bare = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
  await roundTrips(hs.url, hs.token, 200);
  await roundTrips(bareUrl, null, 200);
  const ours = median(await roundTrips(hs.url, hs.token, 2000));
  const base = median(await roundTrips(bareUrl, null, 2000));
  await hs.close();
  bare.close();

  // 2. Whole sessions with and without the hook, interleaved.
  const api = await startFakeApi();
  // Not /tmp (the wall hides it); the session user passes through (never lists) to the vault.
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-hooks-'));
  try {
    fs.chmodSync(dir, 0o711);
    const mk = (name: string, enabled: boolean, calls: number) => {
      const d = path.join(dir, name);
      fs.mkdirSync(path.join(d, 'vault'), { recursive: true });
      fs.mkdirSync(path.join(d, 'prompts'));
      fs.chmodSync(d, 0o711);
      shareWithSession(path.join(d, 'vault'));
      fs.writeFileSync(path.join(d, 'nightshift.yaml'), `${configYaml({ budget: { max_sessions_per_day: 1000 }, claude: { max_turns: 30 } })}git:\n  enabled: false\nhooks:\n  enabled: ${enabled}\n`);
      fs.writeFileSync(path.join(d, 'prompts', 'bench.md'), `---\nallowed_tools: ["Bash(echo:*)"]\n---\nSCENARIO=varied N=${calls}\n`);
      return { d, env: claudeTestEnv(d, api.url) };
    };
    // Sessions of 0 and of CALLS tool calls, each with and without hooks: the per-call cost is what
    // the hook adds to the difference, free of the fixed cost (server start, settings file).
    const on = mk('on', true, CALLS);
    const off = mk('off', false, CALLS);
    const on0 = mk('on0', true, 0);
    const off0 = mk('off0', false, 0);
    const withHooks: number[] = [];
    const without: number[] = [];
    const withHooks0: number[] = [];
    const without0: number[] = [];
    for (let i = 0; i < runs; i++) {
      for (const [ws, into] of [[off, without], [on, withHooks], [off0, without0], [on0, withHooks0]] as const) {
        into.push(await timedRun(ws.env, ws.d));
      }
      process.stderr.write('.');
    }
    process.stderr.write('\n');
    const w = median(withHooks);
    const wo = median(without);
    const fixed = median(withHooks0) - median(without0);
    const perCall = (w - wo - fixed) / CALLS;
    const result = {
      round_trip_p50_ms: +ours.toFixed(3),
      bare_round_trip_p50_ms: +base.toFixed(3),
      round_trip_added_p50_ms: +(ours - base).toFixed(3),
      runs,
      tool_calls: CALLS,
      session_with_hooks_median_ms: Math.round(w),
      session_without_hooks_median_ms: Math.round(wo),
      session_fixed_overhead_ms: Math.round(fixed),
      per_call_overhead_ms: +perCall.toFixed(2),
    };
    console.log(
      `hooks: PreToolUse round trip p50 ${ours.toFixed(3)} ms vs bare loopback ${base.toFixed(3)} ms (+${(ours - base).toFixed(3)} ms); ` +
        `session of ${CALLS} tool calls ${w.toFixed(0)} ms with hooks vs ${wo.toFixed(0)} ms without (median of ${runs}); fixed cost ${fixed.toFixed(0)} ms, ${perCall.toFixed(2)} ms per call`,
    );
    return result;
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
