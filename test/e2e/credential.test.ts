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
  const r = await runJson(ws, 'worker', [], { ANTHROPIC_API_KEY: 'sk-test-wrong-key-0000' });
  assert.equal(r.record.outcome, 'error', r.ran.stderr);
  assert.match(r.record.error, /the API refused the credential \(401\): fix ANTHROPIC_API_KEY .*nightshift\.env/);
  assert.match(r.ran.stderr, /"event":"api_credential_refused"/);
  // Without x-should-retry: false the CLI asks ten times more (and takes minutes): the count is the proof.
  assert.ok(api.unauthorized - before <= 2, `the API was asked ${api.unauthorized - before} times`);
  assert.doesNotMatch(r.ran.stderr + r.ran.stdout, /sk-test-wrong-key-0000/, 'the key is never printed');
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

// A key the API refused (401) is marked; the next start today with the same key is refused before
// anything is reserved or asked (exit 78, the env file and the time named), recorded as a refused
// fire. Controls: another key (the valid one) runs; the mark cleared by `hold release`, the same
// wrong key reaches the API again.
test('a key the API refused today: the next start is refused before the charge; another key, or the mark released, runs', { timeout: 180_000 }, async (t) => {
  const ws = workspace(t, api.url, configYaml());
  writeAgent(ws, 'worker', 'SCENARIO=text');
  const wrong = { ANTHROPIC_API_KEY: 'sk-test-wrong-key-refused' };
  const envFile = path.join(ws.dir, 'nightshift.env');
  const first = await runJson(ws, 'worker', [], wrong);
  assert.equal(first.record.outcome, 'error', first.ran.stderr);
  assert.match(first.ran.stderr, /"event":"credential_refusal_marked"/);
  const mark = fs.readFileSync(path.join(ws.state, 'credential-refused.json'), 'utf8');
  assert.ok(!mark.includes(wrong.ANTHROPIC_API_KEY), 'the mark holds no key');
  assert.equal(ledgerRows(ws.dir).length, 1);

  const seen = api.seen.length;
  const refused = await nightshift(['run', 'worker'], { ...ws.env, ...wrong }, ws.dir);
  assert.equal(refused.code, 78, refused.stderr);
  const at = new Date(JSON.parse(mark).at);
  const hhmm = `${String(at.getUTCHours()).padStart(2, '0')}:${String(at.getUTCMinutes()).padStart(2, '0')}`;
  assert.match(refused.stderr, new RegExp(`Refused env file ${envFile.replace(/[.]/g, '\\.')}:\\n  - refused key: the API refused this ANTHROPIC_API_KEY \\(401\\) at ${hhmm} today \\(session ${first.record.id}\\).*nothing was started or charged\\. Fix: put a valid ANTHROPIC_API_KEY in ${envFile.replace(/[.]/g, '\\.')} .*\`nightshift hold release worker\``));
  assert.equal(ledgerRows(ws.dir).length, 1, 'nothing reserved: no new ledger row');
  assert.equal(api.seen.length, seen, 'the API was not asked');
  assert.doesNotMatch(refused.stderr, /sk-test-wrong-key-refused/);
  const fires = await nightshift(['fires', '--json'], ws.env, ws.dir);
  const last = (JSON.parse(fires.stdout) as any[]).find((f) => f.kind === 'run' && f.exit_code === 78);
  assert.ok(last, fires.stdout);
  assert.equal(last.action, 'refused');
  assert.match(last.reason, /refused key: the API refused this ANTHROPIC_API_KEY \(401\)/);

  // Control: another key (the valid one) is not held by the mark.
  const other = await runJson(ws, 'worker');
  assert.equal(other.record.outcome, 'ok', other.ran.stderr);
  assert.equal(ledgerRows(ws.dir).length, 2);

  // The mark released by the operator: the same wrong key goes to the API again (and is refused there).
  const release = await nightshift(['hold', 'release', 'worker', '--json'], ws.env, ws.dir);
  assert.equal(release.code, 0, release.stderr);
  assert.equal(JSON.parse(release.stdout).refused_key_cleared, true);
  const before = api.seen.length;
  const again = await runJson(ws, 'worker', [], wrong);
  assert.equal(again.record.outcome, 'error', again.ran.stderr);
  assert.ok(api.seen.length > before, 'the API was asked');
  assert.equal(ledgerRows(ws.dir).length, 3);
});
