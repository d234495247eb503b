// A `run` as root in a site whose log_dir belongs to the service user (issue 29, point 21): the
// daily log, the transcripts folder and the transcript it makes there are given to that user, so
// the units, running as it, still append to today's log. A folder root owns keeps root's files.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configYaml, fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const SERVICE = 65534;
const SKIP = process.getuid?.() !== 0 ? 'needs root' : false;

function owners(dir: string): Array<[string, number]> {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((p) => [p, fs.statSync(path.join(dir, p)).uid] as [string, number]);
}

test('a run as root leaves no root-owned file in the service user\'s log_dir', { skip: SKIP }, async (t) => {
  const ws = workspace(t, api.url, configYaml());
  writeAgent(ws, 'gardener', 'SCENARIO=text');
  fs.mkdirSync(ws.logs);
  fs.chownSync(ws.logs, SERVICE, SERVICE);
  const { record } = await runJson(ws, 'gardener', ['--force']);
  assert.equal(record.outcome, 'ok', JSON.stringify(record));
  const seen = owners(ws.logs);
  assert.ok(seen.some(([p]) => p.endsWith('.log')) && seen.some(([p]) => p.endsWith('.jsonl')), JSON.stringify(seen));
  assert.deepEqual(seen.filter(([, uid]) => uid !== SERVICE), [], 'every file and folder made there is the service user\'s');
  // Control: root's own log_dir keeps root's files (the owner follows the folder).
  const mine = workspace(t, api.url, configYaml());
  writeAgent(mine, 'gardener', 'SCENARIO=text');
  await runJson(mine, 'gardener', ['--force']);
  assert.ok(owners(mine.logs).every(([, uid]) => uid === 0));
});
