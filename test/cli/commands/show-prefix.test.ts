// `show` takes a unique start of an id; one several sessions share is refused with the choices.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { Ledger } from '../../../budget/ledger.js';
import { nightshift, workspace, writeAgent } from '../../helpers.js';

test('show: a unique prefix names the session; a shared one lists them (64); an unknown one says so (64)', { timeout: 60_000 }, async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9');
  writeAgent(ws, 'gardener', 'x');
  const l = Ledger.open(path.join(ws.state, 'ledger.db'));
  for (const id of ['20261201T030000Z-gardener-aaaaaa', '20261201T040000Z-gardener-bbbbbb', '20261201T040000Z-gardener-cccccc']) {
    const open = { id, agent: 'gardener', day: '2026-12-01', started_at: `2026-12-01T0${id[10]}:00:00.000Z`, transcript: null, model: 'sonnet', supervisor_pid: null, supervisor_start: null };
    l.open(open);
    l.settle(open, { outcome: 'ok', ended_at: open.started_at, duration_ms: 1, cost_usd: 0, cost_estimated: false, turns: 1, exit_code: 0, result: null, error: null, input_tokens: 0, output_tokens: 0 });
  }
  l.close();
  const one = await nightshift(['show', '20261201T03', '--json'], ws.env, ws.dir);
  assert.equal(one.code, 0, one.stderr);
  assert.equal(JSON.parse(one.stdout).id, '20261201T030000Z-gardener-aaaaaa');
  const shared = await nightshift(['show', '20261201T04'], ws.env, ws.dir);
  assert.equal(shared.code, 64);
  assert.match(shared.stderr, /is the start of 2 sessions \(.*bbbbbb.*cccccc|.*cccccc.*bbbbbb/);
  const none = await nightshift(['show', '20261202'], ws.env, ws.dir);
  assert.equal(none.code, 64);
  assert.match(none.stderr, /No session `20261202`/);
});
