// A session whose model is close to a CLI alias (model: sonet) starts with a warning naming the
// agent file and the alias meant (issue 35.8), through the real CLI; a warning, never a refusal.
// Control: the alias spelt right starts with none.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

test('model: sonet warns at the session start, naming the agent file and sonnet; sonnet does not', async (t) => {
  const ws = workspace(t, api.url);
  writeAgent(ws, 'typo', 'Say hi.', { model: 'sonet' });
  writeAgent(ws, 'right', 'Say hi.', { model: 'sonnet' });
  const typo = await runJson(ws, 'typo');
  assert.notEqual(typo.record, null, typo.ran.stderr);
  const warned = typo.ran.stderr.split('\n').filter((l) => l.includes('"event":"model_unknown"'));
  assert.equal(warned.length, 1, typo.ran.stderr);
  assert.ok(warned[0].includes(`${path.join(ws.prompts, 'typo.md')}: model: \`sonet\` is not a model the CLI knows. Did you mean \`sonnet\`?`), warned[0]);
  const right = await runJson(ws, 'right');
  assert.equal(right.ran.code, 0, right.ran.stderr);
  assert.doesNotMatch(right.ran.stderr, /model_unknown/);
});
