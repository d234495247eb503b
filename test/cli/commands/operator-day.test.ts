// What the operator sees on a day of use (issue 29): doctor with a broken config, human lines at a
// terminal, config typos, `logs -f` stopped with Ctrl-C.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configYaml, startNightshift, workspace } from '../../helpers.js';

test('`logs -f` stopped with Ctrl-C writes nothing into the log it follows', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml());
  fs.mkdirSync(ws.logs);
  const { child, done } = startNightshift(['logs', '-f'], ws.env, ws.dir, t);
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  // The follower is running once the day's file exists to be followed (or a moment has passed).
  await new Promise((r) => setTimeout(r, 1500));
  child.kill('SIGINT');
  const ran = await done;
  assert.equal(ran.code, 0, ran.stderr);
  const files = fs.readdirSync(ws.logs).filter((f) => f.endsWith('.log'));
  const text = files.map((f) => fs.readFileSync(path.join(ws.logs, f), 'utf8')).join('');
  assert.doesNotMatch(text, /received SIGINT/, `the daily log: ${text}`);
  assert.match(ran.stderr, /received SIGINT/, 'the terminal still hears of it');
});
