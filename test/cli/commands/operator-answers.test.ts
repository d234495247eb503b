// Small answers an operator relies on (issue 29): `help` as a command, a calendar check on
// --date, and an agent file whose front matter never closes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configYaml, nightshift, workspace } from '../../helpers.js';

test('`nightshift help` and `nightshift help run` print the help, exit 0', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9');
  const main = await nightshift(['help'], ws.env, ws.dir);
  assert.equal(main.code, 0, main.stderr);
  assert.match(main.stdout, /Usage: nightshift <command>/);
  const run = await nightshift(['help', 'run'], ws.env, ws.dir);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^Usage: nightshift run/m);
  // Control: an unknown command is still one.
  assert.equal((await nightshift(['hepl'], ws.env, ws.dir)).code, 64);
});

test('budget --date takes calendar days only', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml());
  for (const bad of ['2026-13-01', '2026-02-30', '2026-1-01']) {
    const r = await nightshift(['budget', '--date', bad], ws.env, ws.dir);
    assert.equal(r.code, 64, `${bad}: ${r.stderr}`);
    assert.match(r.stderr, /Expected --date as a calendar day YYYY-MM-DD/);
  }
  const ok = await nightshift(['budget', '--date', '2026-02-28', '--json'], ws.env, ws.dir);
  assert.equal(ok.code, 0, ok.stderr);
});

test('an agent file whose front matter never closes is refused, naming the file', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml());
  fs.writeFileSync(path.join(ws.prompts, 'open.md'), '---\nmodel: opus\nmax_turns: 3\nDo the thing.\n');
  const r = await nightshift(['run', 'open'], ws.env, ws.dir);
  assert.equal(r.code, 78, r.stderr);
  assert.match(r.stderr, /Invalid agent file .*open\.md/);
  assert.match(r.stderr, /never closed/);
});
