// One trace per fire (issue 54): the real CLI's session, two Bash calls and a memory query, traced
// by the supervisor and exported by the real OTLP/HTTP exporter to a loopback collector that
// decodes what it is sent. Controls: content capture on shows the prompt and still no key; a
// collector that fails or never answers changes neither the exit nor the outcome, and the fire's
// row counts what it did not take.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { bash, text, TEST_API_KEY } from '../fake-api.js';
import { configYaml, fakeApiPerFile, FIXTURES, nightshift, runJson, startNightshift, waitFor, workspace, writeAgent, type Workspace } from '../helpers.js';
import { startOtlpReceiver, type OtlpReceiver, type Span } from '../otlp-receiver.js';
import { makeRepos } from '../git-helpers.js';
import { startFakeDiscord } from '../fake-discord.js';
import { Fires } from '../../budget/fires.js';

const api = fakeApiPerFile();
const receivers: OtlpReceiver[] = [];
after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

const PROMPT_MARK = 'Tend the lighthouse ledger carefully';

function script(name: string): void {
  api.script(name, ({ turn }) => {
    if (turn === 0) return bash('echo one');
    if (turn === 1) return bash('echo two');
    if (turn === 2) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__query', input: { query: 'when does the lighthouse key rotate', limit: 3 } }] };
    return text('Done.');
  });
}

async function traced(t: Parameters<typeof workspace>[0], mode: 'ok' | 'fail' | 'hang', o: { capture?: boolean; scenario: string }) {
  const rx = await startOtlpReceiver(mode);
  receivers.push(rx);
  const telemetry = `telemetry:\n  otlp_endpoint: ${JSON.stringify(rx.url)}\n${o.capture ? '  capture_content: ["tracer"]\n' : ''}`;
  const ws = workspace(t, api.url, configYaml({ top: telemetry }));
  script(o.scenario);
  // The key planted in the prompt: with content capture on the prompt is exported, the key never.
  writeAgent(ws, 'tracer', `SCENARIO=${o.scenario}\n${PROMPT_MARK}. ${TEST_API_KEY}`);
  const served = api.served.length;
  const { ran, record } = await runJson(ws, 'tracer');
  return { rx, ws, ran, record, served: api.served.slice(served) };
}

async function fireRow(ws: Workspace) {
  const r = await nightshift(['fires', '--json'], ws.env, ws.dir);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout)[0];
}

const sum = (spans: Span[], k: string) => spans.reduce((s, x) => s + Number(x.attrs[k] ?? 0), 0);

describe('telemetry', () => {
  test('a run is one trace: fire, session, each request with its tokens, each tool call, the memory query; no prompt, no key', async (t) => {
    const { rx, ws, ran, record, served } = await traced(t, 'ok', { scenario: 'otel-trace' });
    assert.equal(record.outcome, 'ok', ran.stderr);
    assert.deepEqual(rx.errors, []);
    const spans = rx.spans;
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, 'one trace');
    const roots = spans.filter((s) => !s.parent);
    assert.deepEqual(roots.map((s) => s.name), ['invoke_workflow nightshift']);
    const fire = roots[0];
    assert.equal(fire.attrs['nightshift.fire.action'], 'session');
    assert.equal(fire.attrs['nightshift.fire.exit_code'], 0);
    assert.equal(fire.resource['service.name'], 'nightshift');
    const session = spans.find((s) => s.name === 'invoke_agent tracer');
    assert.ok(session, spans.map((s) => s.name).join(', '));
    assert.equal(session.parent, fire.spanId);
    assert.equal(session.attrs['nightshift.session.id'], record.id);
    assert.equal(session.attrs['nightshift.session.outcome'], 'ok');
    assert.equal(session.attrs['gen_ai.agent.name'], 'tracer');
    assert.ok(fire.startNs <= session.startNs && session.endNs <= fire.endNs, 'the session lies within its fire');
    // Each request the proxy forwarded, with the usage the API reported for it.
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    assert.ok(chats.length >= 2, `${chats.length} requests`);
    for (const c of chats) assert.equal(c.parent, session.spanId);
    assert.equal(chats.length, served.length, 'a span for each answered request');
    assert.equal(sum(chats, 'gen_ai.usage.input_tokens'), served.reduce((s, x) => s + x.usage.input_tokens, 0));
    assert.equal(sum(chats, 'gen_ai.usage.output_tokens'), served.reduce((s, x) => s + x.usage.output_tokens, 0));
    assert.equal(sum(chats, 'gen_ai.usage.cache_read.input_tokens'), served.reduce((s, x) => s + (x.usage.cache_read_input_tokens ?? 0), 0));
    assert.equal(sum(chats, 'gen_ai.usage.cache_creation.input_tokens'), served.reduce((s, x) => s + (x.usage.cache_creation_input_tokens ?? 0), 0));
    // The ledger's row: the same calls, the same cost.
    assert.equal(chats.length, record.api_calls);
    assert.ok(Math.abs(sum(chats, 'nightshift.cost_usd') - record.cost_usd) < 1e-9, `${sum(chats, 'nightshift.cost_usd')} vs ${record.cost_usd}`);
    for (const c of chats) {
      assert.equal(c.attrs['http.response.status_code'], 200);
      assert.ok(Number(c.attrs['nightshift.meter.worst_case_usd']) >= Number(c.attrs['nightshift.cost_usd']), 'the worst case admitted covers the price');
    }
    // Two Bash calls, allowed; the memory query's own call too.
    const tools = spans.filter((s) => s.name.startsWith('execute_tool '));
    const bashes = tools.filter((s) => s.attrs['gen_ai.tool.name'] === 'Bash');
    assert.equal(bashes.length, 2, tools.map((s) => s.name).join(', '));
    for (const b of bashes) {
      assert.equal(b.attrs['nightshift.tool.decision'], 'allowed');
      assert.equal(b.parent, session.spanId);
      assert.ok(b.endNs >= b.startNs);
    }
    const memory = spans.filter((s) => s.attrs['gen_ai.operation.name'] === 'search_memory');
    assert.equal(memory.length, 1, spans.map((s) => s.name).join(', '));
    assert.equal(memory[0].parent, session.spanId);
    assert.equal(typeof memory[0].attrs['nightshift.memory.hits'], 'number');
    // No content by default, and no key, anywhere in what was sent.
    const all = rx.bodies.join('\n');
    assert.ok(!all.includes(PROMPT_MARK), 'no prompt text');
    assert.ok(!all.includes('echo one'), 'no tool input');
    assert.ok(!all.includes('lighthouse key rotate'), 'no memory query text');
    assert.ok(!all.includes(TEST_API_KEY), 'no key');
    // The fire's row names its trace and counts nothing dropped.
    const row = await fireRow(ws);
    assert.equal(row.trace_id, fire.traceId);
    assert.equal(row.spans_dropped, 0);
    // Where the operator looks: run --json, show, fires, and the daily log's lines of the session.
    assert.equal(record.trace_id, fire.traceId);
    const show = await nightshift(['show', record.id], ws.env, ws.dir);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, new RegExp(`^trace +${fire.traceId}$`, 'm'));
    const fires = await nightshift(['fires'], ws.env, ws.dir);
    assert.match(fires.stdout, new RegExp(`trace ${fire.traceId}`));
    const listed = await nightshift(['sessions', '--json'], ws.env, ws.dir);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(JSON.parse(listed.stdout).find((x: { id: string }) => x.id === record.id)?.trace_id, fire.traceId);
    const day = fs.readdirSync(ws.logs).filter((f) => f.endsWith('.log'));
    const lines = day.flatMap((f) => fs.readFileSync(path.join(ws.logs, f), 'utf8').split('\n')).filter(Boolean).map((l) => JSON.parse(l));
    const ended = lines.find((l) => l.event === 'session_end');
    assert.equal(ended?.trace_id, fire.traceId, 'the session\'s log lines carry the trace id');
  });

  // Control of the test above: the same session with content capture on does show the prompt and
  // the tool input through the same path, and the planted key is still redacted.
  test('with content capture on for the agent, the prompt and tool input are in the trace and the key is not', async (t) => {
    const { rx, ran, record } = await traced(t, 'ok', { capture: true, scenario: 'otel-content' });
    assert.equal(record.outcome, 'ok', ran.stderr);
    const all = rx.bodies.join('\n');
    assert.ok(all.includes(PROMPT_MARK), 'the prompt is exported');
    assert.ok(all.includes('echo one'), 'the tool input is exported');
    assert.ok(all.includes('lighthouse key rotate'), 'the memory query is exported');
    assert.ok(!all.includes(TEST_API_KEY), 'the key is redacted');
    assert.ok(all.includes('[redacted]'));
  });

  for (const mode of ['fail', 'hang'] as const) {
    test(`a collector that ${mode === 'fail' ? 'answers 500' : 'never answers'} changes neither the run's exit nor its outcome; the fire's row counts the drop`, async (t) => {
      const { rx, ws, ran, record } = await traced(t, mode, { scenario: `otel-${mode}` });
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(record.outcome, 'ok', ran.stderr);
      assert.ok(rx.requests >= 1, 'the exporter tried');
      const row = await fireRow(ws);
      assert.match(String(row.trace_id), /^[0-9a-f]{32}$/);
      assert.ok(row.spans_dropped > 0, `dropped: ${row.spans_dropped}`);
    });
  }

  // A slow collector: it takes every export at once and answers only when the test says. The
  // flush may wait 10 minutes: a result that waited on the collector would not come while it
  // holds its answers. The control runs the same session with the fire waiting for its flush
  // before its row and result (test/fixtures/run-trace-at-fire.mjs, the behaviour before the fix).
  for (const control of [false, true]) {
    test(control
      ? 'the control: a fire that waits for its flush holds its result while the collector holds its answer'
      : 'the run\'s result and its settled fire row come while the collector holds its answers; the exit waits for it, and the row counts nothing dropped', async (t) => {
      const rx = await startOtlpReceiver('hold');
      receivers.push(rx);
      const telemetry = `telemetry:\n  otlp_endpoint: ${JSON.stringify(rx.url)}\n  flush_timeout: 10m\n  export_timeout: 10m\n`;
      const ws = workspace(t, api.url, configYaml({ top: telemetry }));
      const scenario = control ? 'otel-slow-control' : 'otel-slow';
      script(scenario);
      writeAgent(ws, 'tracer', `SCENARIO=${scenario}`);
      let child: ReturnType<typeof spawn>;
      let done: Promise<{ code: number | null; stderr: string }>;
      if (control) {
        child = spawn(process.execPath, [path.join(FIXTURES, 'run-trace-at-fire.mjs'), ws.config, 'tracer'], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
        t.after(() => void (child.exitCode === null && child.kill('SIGKILL')));
        let stderr = '';
        child.stderr!.on('data', (c) => (stderr += c));
        done = new Promise((ok) => child.on('close', (code) => ok({ code, stderr })));
      } else {
        const run = startNightshift(['run', 'tracer', '--json'], ws.env, ws.dir, t);
        child = run.child;
        done = run.done;
      }
      let out = '';
      child.stdout!.on('data', (c) => (out += c));
      const fireRowNow = () => {
        // Read in this process, at once: nothing is spawned while the collector holds.
        const look = Fires.look(path.join(ws.dir, 'state', 'fires.db'));
        try {
          return look.list()[0];
        } finally {
          look.close();
        }
      };
      if (control) {
        // The fire's own span has reached the collector: the fire is in its flush, and waits.
        await waitFor(() => rx.spans.some((s) => !s.parent), 60_000, 'the fire\'s span at the collector');
        assert.ok(rx.held >= 1);
        assert.equal(out, '', 'no result while the collector holds its answer');
        assert.equal(fireRowNow().status, 'open', 'the fire\'s row is not settled either');
        rx.release();
        const ended = await done;
        assert.equal(ended.code, 0, ended.stderr);
        assert.equal(JSON.parse(out).outcome, 'ok');
        return;
      }
      // Mutation: endFireSpan waiting for telemetry.flush (the control's seam as the default), caught here.
      await waitFor(() => out.includes('\n'), 60_000, 'the run\'s result while the collector holds its answers');
      const record = JSON.parse(out);
      assert.ok(rx.held >= 1, `requests held at the result: ${rx.held}`);
      assert.equal(child.exitCode, null, 'the process runs on after its result, for the collector');
      const rowAtResult = fireRowNow();
      assert.equal(rowAtResult.status, 'settled');
      assert.equal(rowAtResult.trace_id, record.trace_id);
      rx.release();
      const ended = await done;
      assert.equal(ended.code, 0, ended.stderr);
      assert.equal(record.outcome, 'ok', ended.stderr);
      // Every span reached the collector, the fire's root among them, and the row knows it.
      assert.equal(rx.spans.find((s) => !s.parent)?.traceId, record.trace_id);
      assert.equal((await fireRow(ws)).spans_dropped, 0, 'the row\'s count made final after the collector answered');
    });
  }

  test('the git steps and the report delivery are spans of the fire; the Discord report names the trace', async (t) => {
    const rx = await startOtlpReceiver('ok');
    receivers.push(rx);
    const discord = await startFakeDiscord();
    t.after(() => discord.close());
    const ws = workspace(t, api.url, configYaml({ top: `telemetry:\n  otlp_endpoint: ${JSON.stringify(rx.url)}\n`, discord: { api_base: discord.apiBase, timeout: '5s' } }));
    makeRepos(ws.dir, ws.vault);
    api.script('otel-git', ({ turn }) => (turn === 0 ? bash('echo traced >> notes.md') : text('Wrote notes.md.')));
    writeAgent(ws, 'tracer', 'SCENARIO=otel-git', { allowed_tools: ['Bash'] });
    const { ran, record } = await runJson(ws, 'tracer', [], { DISCORD_WEBHOOK_URL: discord.webhookUrl });
    assert.equal(record.outcome, 'ok', ran.stderr);
    const fire = rx.spans.find((s) => !s.parent)!;
    const child = (name: string) => rx.spans.find((s) => s.name === name && s.parent === fire.spanId);
    const pull = child('nightshift.git pull');
    const push = child('nightshift.git commit_and_push');
    const report = child('nightshift.report deliver');
    assert.ok(pull && push && report, rx.spans.map((s) => s.name).join(', '));
    assert.equal(push.attrs['nightshift.git.committed'], true);
    assert.equal(push.attrs['nightshift.git.pushed'], true);
    assert.equal(report.attrs['nightshift.report.key'], `session:${record.id}`);
    assert.equal(report.attrs['nightshift.report.sent'], 1);
    const embed = discord.messages.at(-1)?.body?.embeds?.[0];
    assert.deepEqual(embed?.fields?.find((f: { name: string }) => f.name === 'Trace'), { name: 'Trace', value: `\`${fire.traceId}\`` });
  });

  test('a call the meter refuses (the reservation spent) is a span too, in error, saying budget', { timeout: 180_000 }, async (t) => {
    const rx = await startOtlpReceiver('ok');
    receivers.push(rx);
    const ws = workspace(t, api.url, configYaml({ top: `telemetry:\n  otlp_endpoint: ${JSON.stringify(rx.url)}\n`, claude: { max_turns: 30 }, budget: { max_usd_per_session: 0.4, min_session_usd: 0.2 } }));
    api.script('otel-budget', ({ turn }) => ({ ...bash(`echo spent-${turn}`), usage: { input_tokens: 1000, output_tokens: 40_000 } }));
    writeAgent(ws, 'tracer', 'SCENARIO=otel-budget');
    const { ran, record } = await runJson(ws, 'tracer');
    assert.equal(record.outcome, 'budget', ran.stderr);
    const refused = rx.spans.filter((s) => s.attrs['nightshift.refused'] === 'budget');
    assert.ok(refused.length >= 1, rx.spans.map((s) => `${s.name} ${JSON.stringify(s.attrs['nightshift.refused'] ?? null)}`).join(', '));
    assert.equal(refused[0].status.code, 2, 'an error');
    const session = rx.spans.find((s) => s.name === 'invoke_agent tracer')!;
    assert.equal(refused[0].parent, session.spanId);
    assert.equal(session.attrs['nightshift.session.outcome'], 'budget');
  });

  test('a tick with nothing due is a trace of one span: the fire, a skip, with its reason', async (t) => {
    const rx = await startOtlpReceiver('ok');
    receivers.push(rx);
    const ws = workspace(t, api.url, configYaml({ top: `telemetry:\n  otlp_endpoint: ${JSON.stringify(rx.url)}\n` }));
    const tick = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(tick.code, 0, tick.stderr);
    assert.equal(JSON.parse(tick.stdout).action, 'skip');
    assert.equal(rx.spans.length, 1, rx.spans.map((s) => s.name).join(', '));
    const [fire] = rx.spans;
    assert.equal(fire.name, 'invoke_workflow nightshift');
    assert.equal(fire.attrs['nightshift.fire.action'], 'skip');
    assert.equal(fire.attrs['nightshift.fire.trigger'], 'hand');
    assert.ok(String(fire.attrs['nightshift.fire.reason']).length > 0);
    const row = await fireRow(ws);
    assert.equal(row.trace_id, fire.traceId);
    assert.equal(row.spans_dropped, 0);
  });

  test('telemetry off (no otlp_endpoint): the fire has no trace', async (t) => {
    const ws = workspace(t, api.url);
    script('otel-off');
    writeAgent(ws, 'tracer', 'SCENARIO=otel-off');
    const { ran, record } = await runJson(ws, 'tracer');
    assert.equal(record.outcome, 'ok', ran.stderr);
    const row = await fireRow(ws);
    assert.equal(row.trace_id, null);
    assert.equal(row.spans_dropped, null);
    // No field at all, as run --json and show --json have none.
    assert.equal('trace_id' in record, false);
    for (const args of [['sessions', '--json'], ['show', record.id, '--json']]) {
      const r = await nightshift(args, ws.env, ws.dir);
      assert.equal(r.code, 0, r.stderr);
      const shown = [JSON.parse(r.stdout)].flat()[0];
      assert.equal(shown.id, record.id);
      assert.equal('trace_id' in shown, false, `${args[0]}: ${r.stdout}`);
    }
  });
});
