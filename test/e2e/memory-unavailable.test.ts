// A session whose memory store cannot be served still runs, and says so: in its record, in
// `status` and in its Discord report (issue 14: nothing about memory is lost silently).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { sessionReport } from '../../report/embed.js';
import { fakeApiPerFile, nightshift, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

test('a session run without its memory tools says so in its record and in status; one with them does not', async (t) => {
  const ws = workspace(t, api.url);
  writeAgent(ws, 'worker', 'SCENARIO=tool');
  // Control: a healthy store is served.
  const served = await runJson(ws, 'worker');
  assert.equal(served.ran.code, 0, served.ran.stderr);
  assert.equal(served.record.memory, 'served');
  // A file that is not a database where the store lives: it cannot be served.
  for (const f of fs.readdirSync(ws.state).filter((f) => f.startsWith('memory.db'))) fs.rmSync(path.join(ws.state, f));
  fs.writeFileSync(path.join(ws.state, 'memory.db'), 'not a database, written by something else\n'.repeat(200));
  const { ran, record } = await runJson(ws, 'worker');
  assert.equal(ran.code, 0, ran.stderr);
  assert.equal(record.outcome, 'ok', 'the session still runs');
  assert.equal(record.memory, 'unavailable');
  assert.match(ran.stderr, /"event":"memory_unavailable"/);
  const status = await nightshift(['status', '--json'], ws.env, ws.dir);
  assert.equal(status.code, 0, status.stderr);
  const last = JSON.parse(status.stdout).last_sessions as Array<{ id: string; memory: string | null }>;
  assert.equal(last.find((s) => s.id === record.id)?.memory, 'unavailable');
  assert.equal(last.find((s) => s.id === served.record.id)?.memory, 'served');
  const text = await nightshift(['status'], ws.env, ws.dir);
  assert.match(text.stdout, new RegExp(`${record.id}.*no memory tools`));
  assert.doesNotMatch(text.stdout, new RegExp(`${served.record.id}.*no memory tools`));
});

test('the Discord report of a session without its memory tools has a Memory field; a served one has none', () => {
  const base = { id: 'S1', agent: 'worker', outcome: 'ok', model: 'sonnet', cost_usd: 0.01, cost_estimated: false, turns: 2, duration_ms: 1000, ended_at: null, result: 'done', error: null };
  const today = { day: '2026-12-01', sessions: 1, max_sessions: 10, cost_usd: 0.01, max_usd: 5 };
  const field = (memory: 'served' | 'unavailable') => sessionReport({ ...base, memory }, null, today, { redact: (x) => x }).embed.fields?.find((f) => f.name === 'Memory');
  assert.match(field('unavailable')?.value ?? '', /without its memory tools/);
  assert.equal(field('served'), undefined);
});
