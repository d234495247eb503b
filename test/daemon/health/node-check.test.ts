// doctor's Node.js verdict, over the table and a passed-in date: a line fails from its end of life
// on, warns in the 90 days before, and the table agrees with package.json's engines.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { NODE_LINES, NODE_MIN_LINE, nodeCheck } from '../../../daemon/health/node-check.js';
import { ROOT } from '../../helpers.js';

const on = (day: string) => new Date(`${day}T12:00:00Z`);

test('Node 20 fails after its end of life (2026-04-30), with the fix; before it, for engines alone', () => {
  const after = nodeCheck('v20.20.2', on('2026-12-02'));
  assert.equal(after.status, 'fail');
  assert.match(after.detail, /Node\.js 20 reached its end of life on 2026-04-30/);
  assert.match(after.fix!, /install Node\.js 24 LTS .* so better-sqlite3 is built for it/);
  // A day before its end the reason is another: below package.json's engines.
  const before = nodeCheck('v20.20.2', on('2026-04-29'));
  assert.equal(before.status, 'fail');
  assert.match(before.detail, /needs Node\.js 22 or later/);
});

test('Node 22 stays supported until 2027-04-30: ok, then a warning in the last 90 days, then a failure', () => {
  assert.equal(nodeCheck('v22.21.0', on('2026-12-02')).status, 'ok');
  assert.match(nodeCheck('v22.21.0', on('2026-12-02')).detail, /supported until 2027-04-30/);
  const late = nodeCheck('v22.21.0', on('2027-03-01'));
  assert.equal(late.status, 'warn');
  assert.match(late.detail, /reaches its end of life on 2027-04-30 \(in 60 days\)/);
  assert.equal(nodeCheck('v22.21.0', on('2027-04-30')).status, 'fail');
});

test('Node 24 passes; an odd line warns; a line the table does not know warns; below engines fails', () => {
  assert.equal(nodeCheck('v24.22.3', on('2026-12-02')).status, 'ok');
  assert.equal(nodeCheck('v25.1.0', on('2026-01-02')).status, 'warn');
  assert.equal(nodeCheck('v25.1.0', on('2026-12-02')).status, 'fail');
  assert.match(nodeCheck('v30.0.0', on('2026-12-02')).detail, /a release line this build does not know/);
  // A line below the floor that the table has dropped still fails.
  assert.equal(nodeCheck('v16.20.0', on('2026-12-02'), NODE_LINES.filter((l) => l.line !== 16)).status, 'fail');
  assert.equal(nodeCheck('not a version', on('2026-12-02')).status, 'warn');
});

test('the table\'s floor is package.json\'s engines, and every supported line is in the table', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.engines.node, `>=${NODE_MIN_LINE}`);
  assert.ok(NODE_LINES.some((l) => l.line === NODE_MIN_LINE));
  assert.ok(NODE_LINES.some((l) => l.line === 24));
});
