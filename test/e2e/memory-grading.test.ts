// FSRS grades from real use: a session that queries a memory and uses its answer leaves that
// memory graded Good; a session that queries and ignores the answer leaves it ungraded.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { MemoryStore } from '../../memory/store.js';
import { fakeApiPerFile, nightshift, runJson, workspace, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();

async function seed(ws: Workspace): Promise<number> {
  const r = await nightshift(['memory', 'observe', 'The invoice exporter writes CSV files to the outbox folder at dawn', '--json'], ws.env, ws.dir);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).memory_id;
}

function reviewsOf(ws: Workspace, id: number): Array<{ grade: string; reason: string; session_id: string }> {
  const s = MemoryStore.open(path.join(ws.state, 'memory.db'));
  try {
    return (s as any).db.prepare('SELECT grade, reason, session_id FROM reviews WHERE memory_id = ?').all(id);
  } finally {
    s.close();
  }
}

describe('memory grading after a session', () => {
  test('a session that queries a memory and uses it leaves that memory graded Good', async (t) => {
    const ws = workspace(t, api.url);
    const id = await seed(ws);
    api.script('grade-use', ({ turn, lastToolResult }) => {
      if (turn === 0) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__query', input: { query: 'invoice exporter', limit: 3 } }] };
      const hit = JSON.parse(lastToolResult ?? '{}').results?.[0];
      return { kind: 'message', blocks: [{ type: 'text', text: `Per memory #${hit?.id}: the exporter writes CSV files into the outbox at dawn, so I checked the outbox.` }] };
    });
    writeAgent(ws, 'user', 'SCENARIO=grade-use');
    const { ran, record } = await runJson(ws, 'user');
    assert.equal(record.outcome, 'ok', ran.stderr);
    assert.deepEqual(reviewsOf(ws, id), [{ grade: 'good', reason: 'used', session_id: record.id }], fs.readFileSync(record.transcript, 'utf8'));
    const log = fs.readFileSync(path.join(ws.logs, fs.readdirSync(ws.logs).find((f) => f.endsWith('.log'))!), 'utf8');
    assert.match(log, /"event":"memory_graded"/);
  });

  test('a session that queries a memory and ignores it leaves it ungraded', async (t) => {
    const ws = workspace(t, api.url);
    const id = await seed(ws);
    api.script('grade-ignore', ({ turn }) => {
      if (turn === 0) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__query', input: { query: 'invoice exporter', limit: 3 } }] };
      return { kind: 'message', blocks: [{ type: 'text', text: 'Nothing relevant; moving on to the weather report.' }] };
    });
    writeAgent(ws, 'ignorer', 'SCENARIO=grade-ignore');
    const { ran, record } = await runJson(ws, 'ignorer');
    assert.equal(record.outcome, 'ok', ran.stderr);
    assert.deepEqual(reviewsOf(ws, id), []);
  });
});
