// `memory querry`: a usage error that names the command meant.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nightshift, workspace } from '../../helpers.js';

test('memory with a misspelled command is refused (64) with a "did you mean"; an unrelated word gets none', { timeout: 60_000 }, async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9');
  const typo = await nightshift(['memory', 'querry', 'x'], ws.env, ws.dir);
  assert.equal(typo.code, 64);
  assert.match(typo.stderr, /got `querry`\. Did you mean `query`\?/);
  const far = await nightshift(['memory', 'zzzzzzzz'], ws.env, ws.dir);
  assert.equal(far.code, 64);
  assert.doesNotMatch(far.stderr, /Did you mean/);
});
