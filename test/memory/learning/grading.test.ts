import assert from 'node:assert/strict';
import { test } from 'node:test';
import { usageFromTranscript } from '../../../memory/learning/grading.js';

const P = 'mcp__nightshift_memory__';
const call = (id: string, tool: string, input: object) => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id, name: `${P}${tool}`, input }] } });
const other = (input: object) => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 'x', name: 'Bash', input }] } });
const say = (text: string) => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text }] } });
const result = (id: string, structured: object, isError = false) =>
  JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id, is_error: isError, content: [{ type: 'text', text: JSON.stringify(structured) }] }] } });
const mem = (id: number, text: string) => ({ id, text, category: 'entity', score: 1, sources: [], faded: false, superseded: false });

test('a recalled memory is used when later text carries its own words, not just the words of the query', () => {
  const lines = [
    call('q1', 'query', { query: 'staging database port' }),
    result('q1', { results: [mem(7, 'The staging database runs PostgreSQL 16 on port 5433 behind pgbouncer'), mem(8, 'Staging deploys need a green CI run first')] }),
    say('Checking the staging database port now.'),
    other({ command: 'psql -h staging -p 5433 # PostgreSQL 16 via pgbouncer' }),
  ];
  assert.deepEqual(usageFromTranscript(lines), { recalledIds: [7, 8], surfacedIds: [], injectedIds: [], usedIds: [7] });
});

test('an id named later (#12, or as a memory tool argument) is a use; a result before the call is not', () => {
  const lines = [
    say('memory #3 is stale'), // before it was recalled: no use
    call('q', 'query', { query: 'x' }),
    result('q', { results: [mem(3, 'a b c'), mem(12, 'd e f')] }),
    say('See #12.'),
    call('r', 'recall', { id: 3 }),
    result('r', { ...mem(3, 'a b c'), edges: [] }),
  ];
  assert.deepEqual(usageFromTranscript(lines).usedIds, [3, 12]);
});

test('wander results are surfaced, not recalled; an error result and unrelated tools count for nothing', () => {
  const lines = [
    call('w', 'wander', { steps: 2, seed: 1 }),
    result('w', { seed: 1, path: [{ ...mem(4, 'the kiln fires at 1200 degrees for stoneware glaze'), via: 'start' }, { ...mem(5, 'the cat likes tuna'), via: 'edge' }] }),
    call('q', 'query', { query: 'nothing' }),
    result('q', { results: [mem(9, 'ignored')] }, true),
    say('The kiln fires stoneware glaze at 1200 degrees, noted.'),
    'not json at all',
  ];
  assert.deepEqual(usageFromTranscript(lines), { recalledIds: [], surfacedIds: [4, 5], injectedIds: [], usedIds: [4] });
});

test('memories injected by session-state count as shown: used when the agent carries their words', () => {
  const injected = [{ id: 20, text: 'The operator prefers short commit messages in the imperative mood' }, { id: 21, text: 'Bird feeder refills happen on Saturdays' }];
  const lines = [say('Writing commit messages short and in the imperative mood, as the operator prefers.')];
  assert.deepEqual(usageFromTranscript(lines, injected), { recalledIds: [], surfacedIds: [], injectedIds: [20, 21], usedIds: [20] });
});
