// `nightshift rehearse` (issue 29, point 20): the API imitation served from the shipped command,
// with the URL and key it prints put in a site's nightshift.env, runs a real session offline.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configYaml, runJson, startNightshift, waitFor, workspace, writeAgent } from '../../helpers.js';

test('rehearse prints the two env lines; a site with them in nightshift.env runs a session against it', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml());
  const served = startNightshift(['rehearse'], { PATH: process.env.PATH }, ws.dir, t);
  let out = '';
  served.child.stdout!.on('data', (c) => (out += c));
  await waitFor(() => /^ANTHROPIC_API_KEY=/m.test(out), 10_000, 'rehearse to print its lines');
  const url = /^ANTHROPIC_BASE_URL=(http:\/\/127\.0\.0\.1:\d+)$/m.exec(out)![1];
  const key = /^ANTHROPIC_API_KEY=(sk-rehearsal-\w+)$/m.exec(out)![1];
  // The site's own environment names neither: only the env file points it at the imitation.
  const env = { ...ws.env };
  delete env.ANTHROPIC_BASE_URL;
  delete env.ANTHROPIC_API_KEY;
  fs.writeFileSync(path.join(ws.dir, 'nightshift.env'), `ANTHROPIC_BASE_URL=${url}\nANTHROPIC_API_KEY=${key}\n`, { mode: 0o600 });
  writeAgent(ws, 'gardener', 'Tidy the notes.');
  const { ran, record } = await runJson({ ...ws, env }, 'gardener');
  assert.equal(record.outcome, 'ok', ran.stderr);
  // Control: another key is refused by the imitation, so the session did use the printed one.
  fs.writeFileSync(path.join(ws.dir, 'nightshift.env'), `ANTHROPIC_BASE_URL=${url}\nANTHROPIC_API_KEY=sk-other\n`, { mode: 0o600 });
  const other = await runJson({ ...ws, env }, 'gardener', ['--force']);
  assert.notEqual(other.record.outcome, 'ok');
  served.child.kill('SIGINT');
  const done = await served.done;
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /stopped \(SIGINT\): [1-9]\d* message requests? answered, [1-9]\d* refused/);
});
