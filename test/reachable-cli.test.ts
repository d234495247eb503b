// The tests' CLI from a clone under /tmp or /var/tmp, or behind a folder others cannot pass: a
// copy under the cache (the wall and the units cannot reach it there); from anywhere else, the CLI itself.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { closedToOthers, HIDDEN_FROM_UNITS, reachableCli, tempDir } from './helpers.js';

test('a CLI under /tmp is copied whole outside it, once; one elsewhere is used as it is', (t) => {
  const dir = tempDir(t);
  assert.match(dir, HIDDEN_FROM_UNITS, 'the temp dir is one the units hide');
  const cli = path.join(dir, 'claude');
  fs.writeFileSync(cli, '#!/bin/sh\necho 9.9.9\n', { mode: 0o755 });
  const cache = fs.mkdtempSync('/opt/nightshift-test-cli-test-');
  t.after(() => fs.rmSync(cache, { recursive: true, force: true }));
  const copy = reachableCli(cli, cache);
  assert.ok(copy.startsWith(`${cache}/`), copy);
  assert.doesNotMatch(fs.realpathSync(copy), HIDDEN_FROM_UNITS);
  assert.equal(fs.readFileSync(copy, 'utf8'), fs.readFileSync(cli, 'utf8'));
  assert.equal(fs.statSync(copy).mode & 0o777, 0o755);
  assert.equal(reachableCli(cli, cache), copy, 'the second time, the same copy');
  // The control: a CLI outside the hidden folders (the copy itself) is not copied again.
  assert.equal(reachableCli(copy, cache), copy);
  assert.equal(fs.readdirSync(cache).length, 1);
});

test('a CLI behind a folder others cannot pass (a clone in a 0700 home) is copied where they can', (t) => {
  const home = fs.mkdtempSync('/srv/nightshift-home-');
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.chmodSync(home, 0o700);
  const cli = path.join(home, 'src', 'claude');
  fs.mkdirSync(path.dirname(cli));
  fs.writeFileSync(cli, '#!/bin/sh\necho 9.9.9\n', { mode: 0o755 });
  assert.equal(closedToOthers(cli), home);
  const cache = fs.mkdtempSync('/opt/nightshift-test-cli-test-');
  t.after(() => fs.rmSync(cache, { recursive: true, force: true }));
  const copy = reachableCli(cli, cache);
  assert.ok(copy.startsWith(`${cache}/`), copy);
  assert.equal(closedToOthers(copy), null);
  // The control: the same home opened to others (o+x) keeps the CLI where it is.
  fs.chmodSync(home, 0o701);
  assert.equal(closedToOthers(cli), null);
  assert.equal(reachableCli(cli, cache), cli);
});
