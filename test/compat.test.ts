// `npm run compat`'s front door: a release number or a usage error (64) that says what it takes;
// nothing is installed or run before the arguments are right.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from './helpers.js';

const compat = (args: string[], env: NodeJS.ProcessEnv = {}) => spawnSync(process.execPath, [path.join(ROOT, 'test', 'compat.mjs'), ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });

test('compat wants --cli and a release number; --help says so and exits 0', (t) => {
  const cache = tempDir(t);
  const env = { NIGHTSHIFT_COMPAT_CACHE: cache };
  for (const args of [[], ['--cli'], ['--cli', 'latest'], ['--cli', '2.1'], ['--cli', '2.1.332', '--frob']]) {
    const r = compat(args, env);
    assert.equal(r.status, 64, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /usage: npm run compat -- --cli VERSION/);
  }
  const help = compat(['--help'], env);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /installed \(npm install\n--prefix\) into \$NIGHTSHIFT_COMPAT_CACHE\/claude-code-VERSION/);
  assert.deepEqual(spawnSync('ls', ['-A', cache], { encoding: 'utf8' }).stdout, '', 'nothing installed on a usage error');
});
