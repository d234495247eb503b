// A key the API refuses (issue 29, point 3): the proxy tells the CLI not to retry the 401, so the
// session ends at once, not after the CLI's ten retries (about three minutes), and its error names
// the credential and the file to edit.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, runJson, workspace, writeAgent } from '../helpers.js';

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

// No credential at all, and no env file: refused before anything is pulled, reserved or spawned
// (exit 78, the env file named with the fix). Control: the same site with a key runs and counts.
test('no credential and no env file: refused before the charge, naming the env file; with a key the same site runs', { timeout: 120_000 }, async (t) => {
  const ws = workspace(t, api.url, configYaml());
  writeAgent(ws, 'worker', 'SCENARIO=text');
  const env = { ...ws.env };
  delete env.ANTHROPIC_API_KEY;
  const envFile = path.join(ws.dir, 'nightshift.env');
  assert.equal(fs.existsSync(envFile), false);
  const before = api.seen.length;
  const ran = await nightshift(['run', 'worker'], env, ws.dir);
  assert.equal(ran.code, 78, ran.stderr);
  assert.match(ran.stderr, new RegExp(`no credential: .*${envFile.replace(/[.]/g, '\\.')}.*nothing was started or charged\\. Fix: put ANTHROPIC_API_KEY=\\.\\.\\.`));
  assert.equal(ledgerRows(ws.dir).length, 0, 'nothing reserved: no ledger row');
  assert.equal(api.seen.length, before, 'the API was not asked');
  const { record } = await runJson(ws, 'worker');
  assert.equal(record.outcome, 'ok');
  assert.equal(ledgerRows(ws.dir).length, 1, 'the control is counted');
});
