// The README's demo as a newcomer runs it: `npm run demo` in a clone that lies in a 0700 home (root's
// natural `~/src/nightshift`), with the machine's own Node first on PATH (this machine's is 20: the
// clone's scripts must still run on the Node its postinstall brought, node_modules/.bin/node).
// The clone is this one copied: its sources as files, node_modules as hard links (nothing writes there).
// `npm test` from there runs one file (the whole suite is CI's), from the mirror it makes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BWRAP, closedToOthers, ROOT, SESSION_USER } from './helpers.js';

// PATH as the newcomer's shell has it: none of this clone's folders (npm test puts its
// node_modules/.bin first) and, where an older Node installed the clone (its postinstall left
// node_modules/.bin/node), the system's Node first, as it was for `npm ci`.
function machinePath(): string {
  const own = (d: string) => d === ROOT || d.startsWith(`${ROOT}/`);
  const rest = (process.env.PATH ?? '').split(':').filter((d) => d && !own(d));
  const older = fs.existsSync(path.join(ROOT, 'node_modules', '.bin', 'node')) && fs.existsSync('/usr/bin/node');
  return (older ? ['/usr/bin', ...rest.filter((d) => d !== '/usr/bin')] : rest).join(':');
}

function copyClone(to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const e of fs.readdirSync(ROOT)) {
    if (e === 'dist' || e === '.git') continue;
    const r = spawnSync('cp', e === 'node_modules' ? ['-al', path.join(ROOT, e), to] : ['-a', path.join(ROOT, e), to], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }
}

test('npm run demo and npm test work from a clone in a 0700 home with the machine\'s Node first on PATH; without the CLI\'s copy the demo prints nightshift\'s refusal, and in place the tests fail', { timeout: 600_000 }, (t) => {
  const home = fs.mkdtempSync('/srv/nightshift-home-');
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.chmodSync(home, 0o700);
  const clone = path.join(home, 'src', 'nightshift');
  copyClone(clone);
  const env: NodeJS.ProcessEnv = { PATH: machinePath(), HOME: home, LANG: 'C.UTF-8' };
  for (const k of ['TMPDIR', 'npm_config_cache', 'CI']) if (process.env[k]) env[k] = process.env[k];
  const demo = spawnSync('npm', ['run', 'demo'], { cwd: clone, env, encoding: 'utf8', timeout: 500_000 });
  const said = `${demo.stdout}\n${demo.stderr}`;
  assert.equal(demo.status, 0, said.slice(-4000));
  assert.match(demo.stdout, /^outcome {5}ok \(exit 0\)$/m);
  assert.match(demo.stdout, new RegExp(`^sandbox {5}${BWRAP ? 'bwrap' : 'none'}$`, 'm'));
  if (!SESSION_USER) return;
  // What the test is about: the copy's CLI lies behind the 0700 home (a worktree whose node_modules
  // links to another clone's is no such clone).
  assert.ok(closedToOthers(fs.realpathSync(path.join(clone, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe'))), `the CLI of ${clone} does not lie behind ${home}: node_modules must be the clone's own`);
  assert.match(demo.stdout, new RegExp(`This clone lies in ${home}, which ${SESSION_USER.name} cannot pass through: the session runs a copy of the CLI`));
  // The control: the CLI left where it is, behind the 0700 home. nightshift refuses the session,
  // and the demo says so in nightshift's words and fails (it once crashed on the missing record).
  const own = path.join(clone, 'node_modules', '.bin', 'node');
  const refused = spawnSync(fs.existsSync(own) ? own : process.execPath, ['dist/test/demo.js'], {
    cwd: clone, env: { ...env, NIGHTSHIFT_TEST_CLI_COPY: '0' }, encoding: 'utf8', timeout: 120_000,
  });
  assert.equal(refused.status, 78, `${refused.stdout}\n${refused.stderr}`);
  assert.match(refused.stderr, new RegExp(`nightshift refused the demo's session \\(SANDBOX_UNAVAILABLE, exit 78\\): .*the CLI .* lies in ${home} \\(mode 0700`));
  assert.doesNotMatch(refused.stderr, /TypeError/);

  // `npm test` from there: the tests run the clone's build as other users (nobody here), so they
  // run from a mirror under /opt that they can reach.
  const mirror = path.join('/opt/nightshift-test-clone', `nightshift-${createHash('sha256').update(clone).digest('hex').slice(0, 8)}`);
  t.after(() => fs.rmSync(mirror, { recursive: true, force: true }));
  const tests = spawnSync('npm', ['test', '--', 'cli/commands/operator-day.test'], { cwd: clone, env, encoding: 'utf8', timeout: 500_000 });
  assert.equal(tests.status, 0, `${tests.stdout.slice(-3000)}\n${tests.stderr.slice(-3000)}`);
  assert.match(tests.stderr, new RegExp(`^test/run\\.mjs: this clone lies in ${home} \\(mode 0700\\), which the users the tests run as cannot pass through: running them from ${mirror}, the same files hard-linked$`, 'm'));
  assert.match(tests.stdout, /^\d+ passed, 0 failed, 0 skipped on node v/m);
  // The control: run in place, the test that runs the build as nobody fails.
  const inPlace = spawnSync(fs.existsSync(own) ? own : process.execPath, ['test/run.mjs', 'cli/commands/operator-day.test'], { cwd: clone, env: { ...env, NIGHTSHIFT_TEST_MIRRORED: '1' }, encoding: 'utf8', timeout: 300_000 });
  assert.equal(inPlace.status, 1, inPlace.stdout.slice(-2000));
  assert.match(inPlace.stdout, /✖ init into a folder the user cannot make/);
});
