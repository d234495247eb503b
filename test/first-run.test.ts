// The README's demo as a newcomer runs it: `npm run demo` in a clone that lies in a 0700 home (root's
// natural `~/src/nightshift`), with the machine's own Node first on PATH (this machine's is 20: the
// clone's scripts must still run on the Node its postinstall brought, node_modules/.bin/node).
// The clone is this one copied: its sources as files, node_modules as hard links (nothing writes there).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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

test('npm run demo works from a clone in a 0700 home with the machine\'s Node first on PATH; without the CLI\'s copy, nightshift\'s refusal is printed', { timeout: 600_000 }, (t) => {
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
});
