// Every session gets the memory server: the real CLI calls our MCP tools, and what it observes is
// stored with the session id as its source.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fakeApiPerFile, nightshift, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

describe('memory in a session', () => {
  test('the agent observes through mcp__nightshift_memory, then queries, and the result reaches the model', async (t) => {
    const ws = workspace(t, api.url);
    const seen: string[] = [];
    api.script('memory-use', ({ turn, lastToolResult }) => {
      if (lastToolResult) seen.push(lastToolResult);
      if (turn === 0) {
        return { kind: 'message', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__observe', input: { text: 'The deploy key for the staging box rotates every Tuesday', category: 'entity' } }] };
      }
      if (turn === 1) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__query', input: { query: 'when does the staging deploy key rotate', limit: 3 } }] };
      return { kind: 'message', blocks: [{ type: 'text', text: `Memory said: ${lastToolResult}` }] };
    });
    // A restricted agent: the memory tools are allowed for it anyway.
    writeAgent(ws, 'rememberer', 'SCENARIO=memory-use', { allowed_tools: ['Bash(echo:*)'] });
    const { ran, record } = await runJson(ws, 'rememberer');
    assert.equal(record.outcome, 'ok', ran.stderr);
    assert.equal(seen.length, 2, 'both tool calls returned to the model');
    assert.equal(JSON.parse(seen[0]).decision, 'novel', seen[0]);
    // The query's answer, with the memory and its source, was in the request the model got.
    assert.match(seen[1], /rotates every Tuesday/);
    assert.ok(seen[1].includes(record.id), 'the result names the session as its source');
    // And the store has it, with the session id as source.
    const q = await nightshift(['memory', 'query', 'staging deploy key', '--json'], ws.env, ws.dir);
    assert.equal(q.code, 0, q.stderr);
    const results = JSON.parse(q.stdout);
    assert.match(results[0].text, /rotates every Tuesday/);
    assert.deepEqual(results[0].sources, [record.id]);
  });
});
