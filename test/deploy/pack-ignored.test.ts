// `npm pack` leaves nightshift-<version>.tgz in the tree; git ignores it, so no one commits a
// build. Control: without the .gitignore line, check-ignore says it is not ignored (exit 1).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers.js';

const inGit = spawnSync('git', ['-C', ROOT, 'rev-parse', '--is-inside-work-tree'], { encoding: 'utf8' }).stdout.trim() === 'true';

test("npm pack's tarball is ignored by git", { skip: inGit ? false : `${ROOT} is no git work tree` }, () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const r = spawnSync('git', ['-C', ROOT, 'check-ignore', '--no-index', '-v', `${pkg.name}-${pkg.version}.tgz`], { encoding: 'utf8' });
  assert.equal(r.status, 0, `not ignored: ${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /^\.gitignore:\d+:nightshift-\*\.tgz\t/);
});
