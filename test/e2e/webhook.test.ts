// The second report channel with the real CLI: `nightshift run` reports its session to
// NIGHTSHIFT_WEBHOOK_URL (ntfy's form here), with no Discord configured; `alert` reaches it as JSON
// with a broken config. Control: the same run without the variable posts nothing there. The
// Anthropic API and the endpoint are loopback imitations.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { configYaml, recorderPerFile, fakeApiPerFile, nightshift, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const TOKEN = 'tk_e2ewebhooktoken0123456789abcdef';
const endpoint = recorderPerFile('{}');
const got = endpoint.got;
const hook = () => `${endpoint.base}/${TOKEN}`;

test('nightshift run reports its session to the ntfy topic, with no Discord set; control: without the variable, nothing', { timeout: 120_000 }, async (t) => {
  got.length = 0;
  const ws = workspace(t, api.url, configYaml({ top: 'git:\n  enabled: false\nwebhook:\n  format: ntfy\n' }));
  writeAgent(ws, 'worker', 'SCENARIO=text');
  const { ran, record } = await runJson(ws, 'worker', [], { NIGHTSHIFT_WEBHOOK_URL: hook() });
  assert.equal(record.outcome, 'ok', ran.stderr);
  assert.equal(got.length, 1, ran.stderr);
  assert.equal(got[0].url, `/${TOKEN}`);
  assert.equal(got[0].headers.title, 'nightshift: worker: ok');
  assert.equal(got[0].headers.priority, '3');
  // nightshift's own lines first, the session's words quoted after its label.
  assert.match(got[0].body, new RegExp(`^Outcome: ok\\n[\\s\\S]*\\nSession: \`${record.id}\`\\nThe session wrote \\(quoted as it wrote it\\):\\n> hi from the fake API$`));
  assert.ok(!got[0].body.includes(String(ws.env.ANTHROPIC_API_KEY)));
  assert.match(ran.stderr, /"event":"report_sent","channel":"webhook"/);
  assert.ok(!ran.stderr.includes(TOKEN), 'the URL is in no log line');

  const control = await runJson(ws, 'worker');
  assert.equal(control.record.outcome, 'ok', control.ran.stderr);
  assert.equal(got.length, 1, 'nothing more reached the endpoint');
});

test('alert with a broken config still reaches the webhook, as JSON', { timeout: 60_000 }, async (t) => {
  got.length = 0;
  const ws = workspace(t, api.url);
  fs.writeFileSync(ws.config, 'claude:\n  timeout: forever\nwebhook:\n  format: json\n');
  const env = { ...ws.env, NIGHTSHIFT_WEBHOOK_URL: hook(), MONITOR_SERVICE_RESULT: 'exit-code', MONITOR_EXIT_CODE: 'exited', MONITOR_EXIT_STATUS: '78', MONITOR_INVOCATION_ID: '0456cdef' };
  const ran = await nightshift(['alert', '--unit', 'nightshift.service'], env, ws.dir);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /alert for nightshift\.service: sent/);
  assert.equal(got.length, 1);
  const body = JSON.parse(got[0].body);
  assert.deepEqual([body.source, body.event, body.outcome, body.title], ['nightshift', 'alert', 'fail', 'unit failed: nightshift.service']);
  assert.equal(body.fields.Exit, 'exited 78');
  assert.match(body.fields['Could not read'], /claude\.timeout: Expected a duration/);
});
