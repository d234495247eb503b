// A key the API refuses (issue 29, point 3): the proxy tells the CLI not to retry the 401, so the
// session ends at once, not after the CLI's ten retries (about three minutes), and its error names
// the credential and the file to edit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configYaml, fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

test('a refused key ends the session at once, naming the credential and its file', { timeout: 120_000 }, async (t) => {
  const ws = workspace(t, api.url, configYaml());
  writeAgent(ws, 'worker', 'SCENARIO=text');
  const before = api.unauthorized;
  const t0 = Date.now();
  const r = await runJson(ws, 'worker', [], { ANTHROPIC_API_KEY: 'sk-ant-wrong-key-0000' });
  const ms = Date.now() - t0;
  assert.equal(r.record.outcome, 'error', r.ran.stderr);
  assert.match(r.record.error, /the API refused the credential \(401\): fix ANTHROPIC_API_KEY .*nightshift\.env/);
  assert.match(r.ran.stderr, /"event":"api_credential_refused"/);
  // Without x-should-retry: false the CLI asks ten times more.
  assert.ok(api.unauthorized - before <= 2, `the API was asked ${api.unauthorized - before} times`);
  assert.ok(ms < 30_000, `took ${ms} ms`);
  assert.doesNotMatch(r.ran.stderr + r.ran.stdout, /sk-ant-wrong-key-0000/, 'the key is never printed');
});
