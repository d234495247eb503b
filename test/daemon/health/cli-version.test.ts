// doctor's CLI version verdict: inside the tested range ok, outside a warning that names the range
// and the fix; the range's top is the CLI the suite pins.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CLI_TESTED, cliVersionCheck, compareVersions } from '../../../daemon/health/cli-version.js';
import { ROOT } from '../../helpers.js';

const range = { min: '2.1.197', max: '2.1.332' };

test('a CLI inside the tested range is ok; older or newer warns with the range and the fix', () => {
  assert.equal(cliVersionCheck('claude', '2.1.332 (Claude Code)', range).status, 'ok');
  assert.equal(cliVersionCheck('claude', '2.1.197 (Claude Code)', range).status, 'ok');
  const old = cliVersionCheck('/usr/bin/claude', '2.1.100 (Claude Code)', range);
  assert.equal(old.status, 'warn');
  assert.match(old.detail, /Claude Code 2\.1\.100 is older than the tested range 2\.1\.197 to 2\.1\.332/);
  assert.equal(old.fix, 'npm install -g @anthropic-ai/claude-code@2.1.332');
  const newer = cliVersionCheck('claude', '2.2.0 (Claude Code)', range);
  assert.equal(newer.status, 'warn');
  assert.match(newer.detail, /newer than the tested range/);
  assert.match(newer.fix!, /npm run compat -- --cli 2\.2\.0/);
  assert.equal(cliVersionCheck('claude', 'garbage', range).status, 'warn');
});

test('versions compare by number, not as text', () => {
  assert.ok(compareVersions('2.1.332', '2.1.40') > 0);
  assert.ok(compareVersions('2.10.0', '2.9.9') > 0);
  assert.equal(compareVersions('2.1.197', '2.1.197'), 0);
});

test('the tested range ends at the CLI the suite pins', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(CLI_TESTED.max, pkg.devDependencies['@anthropic-ai/claude-code']);
  assert.ok(compareVersions(CLI_TESTED.min, CLI_TESTED.max) <= 0);
});
