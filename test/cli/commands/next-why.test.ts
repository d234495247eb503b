// `nightshift next` says why an agent waits, not only when: a $0 failed session used up its
// max_runs_per_day of 1, and failed sessions count. Control: without the forecast's `waits` the
// line says only the time (the words below are not there).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Ledger } from '../../../budget/ledger.js';
import { configYaml, nightshift, ROOT, workspace, writeAgent } from '../../helpers.js';

test('next: an agent whose one run a day a failed $0 session used says when it runs and why not sooner', { timeout: 60_000 }, async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml({ top: 'git:\n  enabled: false\ndispatch:\n  - agent: gardener\n    max_runs_per_day: 1\n', budget: { timezone: 'UTC' } }));
  writeAgent(ws, 'gardener', 'x');
  const l = Ledger.open(path.join(ws.state, 'ledger.db'));
  const open = { id: '20261201T090000Z-gardener-aaaaaa', agent: 'gardener', day: '2026-12-01', started_at: '2026-12-01T09:00:00.000Z', transcript: null, model: 'sonnet', supervisor_pid: null, supervisor_start: null };
  l.open(open);
  l.settle(open, { outcome: 'error', ended_at: open.started_at, duration_ms: 1, cost_usd: 0, cost_estimated: false, turns: 0, exit_code: 1, result: null, error: 'API error 502', input_tokens: 0, output_tokens: 0 });
  l.close();
  const args = ['next', '--at', '2026-12-01T15:20:00Z', '--prefix', path.join(ws.dir, 'no-timer')];
  const ran = await nightshift(args, ws.env, ws.dir);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /^ {2}gardener +2026-12-02 00:00 UTC \(in 8h 40m\), not before: ran 1 of max_runs_per_day 1 today \(every session started counts, a failed one too\)$/m, ran.stdout);
  const json = JSON.parse((await nightshift([...args, '--json'], ws.env, ws.dir)).stdout);
  assert.equal(json.next_due.gardener, '2026-12-02T00:00:00.000Z');
  assert.match(json.waits.gardener, /^ran 1 of max_runs_per_day 1 today/);
});

// Control: the rows' old words ("Sessions of this agent a day.") say nothing of failed sessions.
test('docs/configuration.md says a failed session counts against both per-day limits', () => {
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  for (const key of ['budget.max_sessions_per_day', 'dispatch[].max_runs_per_day']) {
    const row = page.split('\n').find((l) => l.startsWith(`| \`${key}\` |`));
    assert.match(row ?? '', /Every session started counts, a failed one too/, key);
  }
});
