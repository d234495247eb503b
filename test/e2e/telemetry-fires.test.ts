// Traces beside other sessions (issue 54, sessions.max_concurrent above 1), through the built CLI,
// the real Claude CLI and the fake API, exported by the real OTLP/HTTP exporter to a loopback
// collector: a session's worktree landing on main is a span of its fire, and each agent a tick
// at capacity records as waiting is a trace of its own, linked from its fire row.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { bash, text } from '../fake-api.js';
import { makeRepos, remoteFile } from '../git-helpers.js';
import { configYaml, fakeApiPerFile, runningSessions, nightshift, runJson, shareWithSession, startNightshift, waitFor, workspace, writeAgent, type Workspace } from '../helpers.js';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp-receiver.js';

const api = fakeApiPerFile();
const receivers: OtlpReceiver[] = [];
after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(): Promise<OtlpReceiver> {
  const rx = await startOtlpReceiver('ok');
  receivers.push(rx);
  return rx;
}
const telemetry = (rx: OtlpReceiver) => `telemetry:\n  otlp_endpoint: ${JSON.stringify(rx.url)}\n`;

const fires = async (ws: Workspace) => {
  const r = await nightshift(['fires', '--json'], ws.env, ws.dir);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as any[];
};

describe('telemetry beside other sessions', () => {
  test('a session beside others lands its worktree on main: the landing is a span of its fire, with what git did', async (t) => {
    const rx = await receiver();
    const ws = workspace(t, api.url, configYaml({ top: `${telemetry(rx)}sessions:\n  max_concurrent: 2\n` }));
    const repos = makeRepos(ws.dir, ws.vault);
    api.script('otel-land', ({ turn }) => (turn === 0 ? bash('echo landed >> notes.md') : text('Wrote notes.md.')));
    writeAgent(ws, 'tracer', 'SCENARIO=otel-land', { allowed_tools: ['Bash'] });
    const { ran, record } = await runJson(ws, 'tracer');
    assert.equal(record.outcome, 'ok', ran.stderr);
    assert.equal(record.git.pushed, true, JSON.stringify(record.git));
    assert.match(remoteFile(repos, 'notes.md'), /landed/);
    const fire = rx.spans.find((s) => !s.parent && s.traceId === record.trace_id);
    assert.ok(fire, rx.spans.map((s) => s.name).join(', '));
    const land = rx.spans.filter((s) => s.name === 'nightshift.git land');
    assert.equal(land.length, 1, rx.spans.map((s) => s.name).join(', '));
    assert.equal(land[0].parent, fire.spanId);
    assert.equal(land[0].attrs['nightshift.git.step'], 'land');
    assert.equal(land[0].attrs['nightshift.session.id'], record.id);
    assert.equal(land[0].attrs['nightshift.git.committed'], true);
    assert.equal(land[0].attrs['nightshift.git.pushed'], true);
    assert.equal(land[0].status.code, 0);
    assert.ok(fire.startNs <= land[0].startNs && land[0].endNs <= fire.endNs, 'within its fire');
    // The worktree path: no commit-and-push of the vault's own work tree.
    assert.equal(rx.spans.filter((s) => s.name === 'nightshift.git commit_and_push').length, 0);
  });

  test('a tick that finds every slot held: each agent it records as waiting is a trace of its own (a locked fire), linked from its row', async (t) => {
    const names = ['b1', 'b2', 'b3', 'b4'];
    const rx = await receiver();
    const ws = workspace(t, api.url, 'x');
    for (const n of names) {
      fs.mkdirSync(path.join(ws.dir, `vault-${n}`));
      shareWithSession(path.join(ws.dir, `vault-${n}`));
    }
    fs.writeFileSync(ws.config, configYaml({ top: `${telemetry(rx)}sessions:\n  max_concurrent: 2\nvaults:\n${names.map((n) => `  ${n}: ./vault-${n}\n`).join('')}dispatch:\n${names.map((n) => `  - agent: ${n}\n`).join('')}` }));
    for (const n of names) writeAgent(ws, n, 'SCENARIO=slow-tool SLEEP=12', { allowed_tools: ['Bash'] });
    const running = () => runningSessions(ws.dir);
    const first = startNightshift(['tick', '--json'], ws.env, ws.dir, t);
    await waitFor(() => running() === 2, 60_000, 'two sessions of the first tick');
    const second = await nightshift(['tick', '--json'], ws.env, ws.dir);
    assert.equal(second.code, 0, second.stderr);
    assert.match(JSON.parse(second.stdout).reason, /^at capacity: 2 sessions running/);
    const waited = (await fires(ws)).filter((f) => f.supervisor_pid !== first.child.pid && f.agent);
    assert.deepEqual(waited.map((f) => [f.agent, f.action]).sort(), [['b3', 'locked'], ['b4', 'locked']]);
    // Mutation: recordWaiting settling its rows without a fire span (settleTraced left out), caught here.
    for (const f of waited) {
      assert.match(String(f.trace_id), /^[0-9a-f]{32}$/, JSON.stringify(f));
      assert.equal(f.spans_dropped, 0);
      const spans = rx.spans.filter((s) => s.traceId === f.trace_id);
      assert.deepEqual(spans.map((s) => [s.name, s.parent]), [['invoke_workflow nightshift', null]]);
      assert.equal(spans[0].attrs['nightshift.fire.action'], 'locked');
      assert.equal(spans[0].attrs['gen_ai.agent.name'], f.agent);
      assert.equal(spans[0].attrs['nightshift.fire.id'], f.id);
      assert.equal(spans[0].attrs['nightshift.fire.reason'], f.reason);
    }
    assert.notEqual(waited[0].trace_id, waited[1].trace_id, 'a trace each');
    // The tick's own fire (the skip at capacity) is a trace apart from both.
    const own = (await fires(ws)).find((f) => f.supervisor_pid !== first.child.pid && !f.agent);
    assert.ok(own?.trace_id && !waited.some((f) => f.trace_id === own.trace_id), JSON.stringify(own));
    assert.equal((await first.done).code, 0);
  });
});
