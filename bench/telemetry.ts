// `npm run bench telemetry` (issue 54): what tracing costs. (1) The SDK's load, paid only with
// telemetry.otlp_endpoint set. (2) The spans of a large session (a fire, a session, 40 requests,
// 40 tool calls, 10 memory operations) made and ended in-process: the session's added time.
// (3) The fire's flush against a collector that answers, answers 500, never answers, or is not
// there: the most a fire waits is telemetry.flush_timeout. (4) Whole `nightshift run` sessions
// against the imitation API with telemetry off, on, and on against each dead collector,
// interleaved: a dead collector must not move the run's time beyond flush_timeout. (5) Whole
// `nightshift tick` processes with nothing due, interleaved, against a collector that answers,
// answers 500, or never answers: the time to the tick's result (its --json line) and to its exit,
// each as a ratio against the healthy collector's. The result never waits on the collector; the
// exit waits for it, flush_timeout at most.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { openTelemetry } from '../logs/telemetry.js';
import { startFakeApi } from '../test/fake-api.js';
import { claudeTestEnv, configYaml, shareWithSession, startNightshift } from '../test/helpers.js';
import { startOtlpReceiver } from '../test/otlp-receiver.js';
import { median, timedRun } from './timing.js';

const quiet = { warn: () => {}, debug: () => {} };
const settings = (url: string) => ({ telemetry: { otlp_endpoint: url, capture_content: [], max_queue_size: 2048, export_timeout: 5000, flush_timeout: 1000 } });

// A port nothing listens on (connection refused).
async function closedPort(): Promise<string> {
  const s = net.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return `http://127.0.0.1:${port}`;
}

type Tel = NonNullable<Awaited<ReturnType<typeof openTelemetry>>>;

// One large session's spans; returns the fire's span.
function sessionSpans(tel: Tel) {
  const fire = tel.fire('invoke_workflow nightshift', { 'gen_ai.operation.name': 'invoke_workflow', 'nightshift.fire.kind': 'tick' });
  const session = fire.child('invoke_agent bench', { 'gen_ai.agent.name': 'bench', 'gen_ai.request.model': 'sonnet' });
  for (let i = 0; i < 40; i++) {
    const c = session.child('chat claude-sonnet-5', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'claude-sonnet-5', 'url.path': '/v1/messages', 'nightshift.meter.worst_case_usd': 0.9 });
    c.set({ 'http.response.status_code': 200, 'nightshift.ratelimit.requests-remaining': '49', 'gen_ai.usage.input_tokens': 1200 + i, 'gen_ai.usage.output_tokens': 300, 'gen_ai.usage.cache_read.input_tokens': 40_000, 'gen_ai.usage.cache_creation.input_tokens': 900, 'nightshift.cost_usd': 0.02 });
    c.end();
    const t = session.child('execute_tool Bash', { 'gen_ai.tool.name': 'Bash', 'nightshift.tool.decision': 'allowed', 'nightshift.tool.decide_ms': 0.2 });
    t.end();
  }
  for (let i = 0; i < 10; i++) {
    const m = session.child('search_memory query', { 'gen_ai.operation.name': 'search_memory', 'nightshift.memory.tool': 'query' });
    m.set({ 'nightshift.memory.hits': 3, 'nightshift.memory.latency_ms': 4 });
    m.end();
  }
  session.set({ 'nightshift.session.outcome': 'ok', 'nightshift.cost_usd': 0.8 });
  session.end();
  fire.end();
  return fire;
}

export async function telemetryBench(runs = 5) {
  const out: Record<string, unknown> = {};
  const ok = await startOtlpReceiver('ok');
  const t0 = performance.now();
  const tel = (await openTelemetry(settings(ok.url), { env: {}, redact: (t) => t, version: 'bench', logger: quiet }))!;
  out.sdk_load_ms = +(performance.now() - t0).toFixed(1);
  console.log(`telemetry: the SDK loads and a provider starts in ${out.sdk_load_ms} ms (only with telemetry.otlp_endpoint set)`);
  // The spans of a session of 91, warm.
  sessionSpans(tel);
  const made: number[] = [];
  for (let i = 0; i < 30; i++) {
    const s = performance.now();
    sessionSpans(tel);
    made.push(performance.now() - s);
  }
  out.session_spans_ms = +median(made).toFixed(2);
  console.log(`telemetry: 92 spans of one session made and ended in ${out.session_spans_ms} ms (median of 30; the goal: at most 5 ms)`);
  await tel.flush(sessionSpans(tel).traceId!);
  tel.close();
  // The fire's flush against each collector.
  const fail = await startOtlpReceiver('fail');
  const hang = await startOtlpReceiver('hang');
  const collectors = { ok: ok.url, '500': fail.url, 'never answers': hang.url, 'not there': await closedPort() };
  const flush: Record<string, { ms: number; dropped: number }> = {};
  for (const [name, url] of Object.entries(collectors)) {
    const t = (await openTelemetry(settings(url), { env: {}, redact: (x) => x, version: 'bench', logger: quiet }))!;
    const fire = sessionSpans(t);
    const s = performance.now();
    const dropped = await t.flush(fire.traceId!);
    flush[name] = { ms: +(performance.now() - s).toFixed(1), dropped };
    t.close();
    console.log(`telemetry: the fire's flush, collector ${name}: ${flush[name].ms} ms, ${dropped} of 92 spans dropped (flush_timeout 1000 ms)`);
  }
  out.flush = flush;
  // Whole runs, interleaved: off, on, on against a dead collector.
  const api = await startFakeApi();
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-'));
  try {
    fs.chmodSync(dir, 0o711);
    fs.mkdirSync(path.join(dir, 'vault'));
    fs.mkdirSync(path.join(dir, 'prompts'));
    shareWithSession(path.join(dir, 'vault'));
    fs.writeFileSync(path.join(dir, 'prompts', 'bench.md'), '---\nallowed_tools: ["Bash(echo:*)"]\n---\nSCENARIO=tool\n');
    const env = claudeTestEnv(dir, api.url);
    const yaml = (url: string | null) => configYaml({ budget: { max_sessions_per_day: 1000 }, top: url ? `telemetry:\n  otlp_endpoint: ${JSON.stringify(url)}\n` : '' });
    const modes: Record<string, string | null> = { off: null, on: ok.url, 'on, collector answers 500': fail.url, 'on, collector never answers': hang.url };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(modes).map((k) => [k, []]));
    for (let i = 0; i < runs; i++) {
      for (const [name, url] of Object.entries(modes)) {
        fs.writeFileSync(path.join(dir, 'nightshift.yaml'), yaml(url));
        times[name].push(await timedRun(env, dir));
      }
      process.stderr.write('.');
    }
    process.stderr.write('\n');
    const runMs: Record<string, number> = {};
    for (const [name, t] of Object.entries(times)) {
      runMs[name] = Math.round(median(t));
      console.log(`telemetry: nightshift run (one session, a tool call), ${name}: ${runMs[name]} ms (median of ${runs})`);
    }
    out.run_ms = runMs;
    out.tick = await tickTimes(env, dir, { ok: ok.url, 'answering 500': fail.url, 'never answering': hang.url }, Math.max(runs, 7));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await Promise.all([ok.close(), fail.close(), hang.close(), api.close()]);
  }
  return out;
}

// One `nightshift tick --json` with nothing due: ms to its result line, ms to its exit.
async function timedTick(env: NodeJS.ProcessEnv, cwd: string): Promise<{ result: number; exit: number }> {
  const t0 = performance.now();
  const run = startNightshift(['tick', '--json'], env, cwd);
  let result = 0;
  run.child.stdout!.on('data', () => (result ||= performance.now() - t0));
  const r = await run.done;
  if (r.code !== 0 || !result) throw new Error(`nightshift tick failed (${r.code}): ${r.stderr}`);
  return { result, exit: performance.now() - t0 };
}

async function tickTimes(env: NodeJS.ProcessEnv, dir: string, collectors: Record<string, string>, runs: number) {
  const configs = Object.fromEntries(Object.entries(collectors).map(([name, url]) => {
    const file = path.join(dir, `tick-${name.replace(/\W+/g, '-')}.yaml`);
    // No dispatch rule: nothing is due, the fire is the trace's one span.
    fs.writeFileSync(file, configYaml({ top: `telemetry:\n  otlp_endpoint: ${JSON.stringify(url)}\n  flush_timeout: 1s\n` }));
    return [name, file];
  }));
  const times: Record<string, { result: number[]; exit: number[] }> = Object.fromEntries(Object.keys(collectors).map((k) => [k, { result: [], exit: [] }]));
  const names = Object.keys(collectors);
  for (let i = 0; i < runs; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length];
      const t = await timedTick({ ...env, NIGHTSHIFT_CONFIG: configs[name] }, dir);
      times[name].result.push(t.result);
      times[name].exit.push(t.exit);
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  const base = { result: median(times.ok.result), exit: median(times.ok.exit) };
  const out: Record<string, { result_ms: number; exit_ms: number; result_ratio: number; exit_ratio: number }> = {};
  for (const name of names) {
    const result = median(times[name].result);
    const exit = median(times[name].exit);
    out[name] = { result_ms: Math.round(result), exit_ms: Math.round(exit), result_ratio: +(result / base.result).toFixed(2), exit_ratio: +(exit / base.exit).toFixed(2) };
    console.log(`telemetry: nightshift tick, nothing due, collector ${name}: result ${out[name].result_ms} ms (${out[name].result_ratio}x the healthy collector's), exit ${out[name].exit_ms} ms (${out[name].exit_ratio}x; flush_timeout 1s), medians of ${runs}`);
  }
  return out;
}
