// `nightshift hold release`: a backoff and a rate limit the operator lifts; the rows stay, the hold
// goes, and doctor's recurring check starts the agent's story again. Control: before the release
// the same ledger holds the agent.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Ledger } from '../../../budget/ledger.js';
import { configYaml, ledgerRows, nightshift, workspace, writeAgent, type Workspace } from '../../helpers.js';

function seed(ws: Workspace, id: string, agent: string, outcome: string, minutesAgo: number, extra: { error?: string; retry_at?: string } = {}): void {
  const l = Ledger.open(path.join(ws.state, 'ledger.db'));
  try {
    const started = new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const open = { id, agent, day: started.slice(0, 10), started_at: started, transcript: null, model: 'sonnet', supervisor_pid: null, supervisor_start: null };
    l.open(open);
    l.settle(open, {
      outcome, ended_at: new Date(Date.parse(started) + 10_000).toISOString(), duration_ms: 10_000, cost_usd: 0.01, cost_estimated: false,
      turns: 1, exit_code: 1, result: null, error: extra.error ?? 'API error 401: invalid x-api-key', input_tokens: 0, output_tokens: 0, retry_at: extra.retry_at ?? null,
    });
  } finally {
    l.close();
  }
}

test('hold release lifts a backoff and a rate limit, is logged, and leaves the ledger\'s rows; doctor stops calling it recurring', { timeout: 120_000 }, async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml({ top: 'backoff:\n  after_failures: 3\n  base: 2h\n' }));
  writeAgent(ws, 'flaky', 'SCENARIO=text');
  writeAgent(ws, 'limited', 'SCENARIO=text');
  for (const [i, m] of [30, 20, 10].entries()) seed(ws, `s-${i}`, 'flaky', 'error', m);
  seed(ws, 's-limit', 'limited', 'rate_limited', 5, { error: 'the API answered 429', retry_at: new Date(Date.now() + 3 * 3600_000).toISOString() });
  const next = async () => JSON.parse((await nightshift(['next', '--json'], ws.env, ws.dir)).stdout);
  // Control: the ledger as it is holds both.
  const before = await next();
  assert.equal(before.holds.flaky?.kind, 'backoff');
  assert.equal(before.holds.limited?.kind, 'rate_limited');
  const doctorBefore = await nightshift(['doctor', '--json'], ws.env, ws.dir);
  assert.match(doctorBefore.stdout, /the earlier fix treated a symptom/);

  const one = await nightshift(['hold', 'release', 'flaky', '--json'], ws.env, ws.dir);
  assert.equal(one.code, 0, one.stderr);
  const r = JSON.parse(one.stdout);
  assert.deepEqual(r.released.map((x: any) => [x.agent, x.kind]), [['flaky', 'backoff']]);
  assert.match(one.stderr, /"event":"hold_released".*"agent":"flaky"/);
  const after = await next();
  assert.equal(after.holds.flaky, undefined, 'the backoff is lifted');
  assert.equal(after.holds.limited?.kind, 'rate_limited', 'the other agent is still held');
  const doctorAfter = await nightshift(['doctor', '--json'], ws.env, ws.dir);
  assert.doesNotMatch(doctorAfter.stdout, /the earlier fix treated a symptom/);

  const all = await nightshift(['hold', 'release', '--all'], ws.env, ws.dir);
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /^released limited \(was rate limited \(the API gave this reset time\), until \S+\)$/m);
  assert.deepEqual((await next()).holds, {});
  assert.equal(ledgerRows(ws.dir).length, 4, 'every row is kept');
  assert.ok(fs.existsSync(path.join(ws.state, 'hold-releases.json')));

  const again = await nightshift(['hold', 'release', 'flaky'], ws.env, ws.dir);
  assert.match(again.stdout, /^flaky is not held: nothing to release$/m);
  const typo = await nightshift(['hold', 'release', 'flakey'], ws.env, ws.dir);
  assert.equal(typo.code, 64);
  assert.match(typo.stderr, /Did you mean `flaky`\?/);
  const help = await nightshift(['hold', '--help'], ws.env, ws.dir);
  assert.match(help.stdout, /Usage: nightshift hold release AGENT/);
});

// The refused key's mark (budget/credential-refusal.ts) goes with any release, said and logged;
// with no mark, nothing is said of it.
test('hold release clears the mark of a key the API refused today, and says so; none, nothing said', { timeout: 60_000 }, async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml());
  writeAgent(ws, 'worker', 'SCENARIO=text');
  const { writeRefusal, refusalFile, credentialFingerprint } = await import('../../../budget/credential-refusal.js');
  const none = await nightshift(['hold', 'release', 'worker', '--json'], ws.env, ws.dir);
  assert.equal(JSON.parse(none.stdout).refused_key_cleared, false);
  writeRefusal(ws.state, { fingerprint: credentialFingerprint('sk-ant-some-key-000000'), kind: 'api_key', at: '2026-03-01T09:41:00.000Z', day: '2026-03-01', session: 's-1', env_file: null, env_ino: null, env_mtime_ms: null });
  const cleared = await nightshift(['hold', 'release', 'worker'], ws.env, ws.dir);
  assert.equal(cleared.code, 0, cleared.stderr);
  assert.match(cleared.stdout, /^worker is not held: nothing to release\ncleared the refused key \(the API refused it at 2026-03-01T09:41:00\.000Z\): the next start tries the key again$/m);
  assert.match(cleared.stderr, /"event":"credential_refusal_cleared"/);
  assert.equal(fs.existsSync(refusalFile(ws.state)), false);
});
