// `systemd print|install` warns when the vault's remote is a path the units cannot write (issue
// 36, point 4): ProtectSystem= leaves it read-only, and every push fails "remote unpack failed".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { validateConfig } from '../../config/config.js';
import { pathRemoteWarning } from '../../daemon/systemd.js';
import { CLAUDE, nightshift, PATH_WITHOUT_CLAUDE, tempDir } from '../helpers.js';
import { git } from '../git-helpers.js';

test('pathRemoteWarning: a path or file:// remote outside ReadWritePaths= is named; URLs and paths inside are not', () => {
  const c = validateConfig({ vault: '/srv/ns/vault', state_dir: '/srv/ns/state', log_dir: '/srv/ns/logs' }, '/srv/ns/nightshift.yaml').config!;
  assert.match(pathRemoteWarning(c, 'origin', '/srv/remotes/vault.git')!, /git remote `origin` is \/srv\/remotes\/vault\.git, outside the units' ReadWritePaths= \(.*\/srv\/ns\/vault.*\): every push from the units fails there \("remote unpack failed"\)/);
  assert.match(pathRemoteWarning(c, 'origin', 'file:///srv/remotes/vault.git')!, /\/srv\/remotes\/vault\.git/);
  assert.match(pathRemoteWarning(c, 'origin', '../../remotes/v.git')!, /is \/srv\/remotes\/v\.git/, 'relative to the vault');
  for (const url of ['/srv/ns/state/remote.git', 'ssh://git@host/v.git', 'git@host:v.git', 'https://host/v.git', null]) assert.equal(pathRemoteWarning(c, 'origin', url), null, String(url));
});

test('systemd print warns about the vault\'s path remote outside the units\' paths, and not about one inside', async (t) => {
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.symlinkSync(CLAUDE, path.join(dir, 'bin', 'claude'));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'vault: ./site/vault\nstate_dir: ./site/state\nlog_dir: ./site/logs\n');
  for (const d of ['site/vault', 'site/state', 'site/logs', 'prompts']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  git(path.join(dir, 'site', 'vault'), 'init', '--quiet');
  git(path.join(dir, 'site', 'vault'), 'remote', 'add', 'origin', path.join(dir, 'elsewhere', 'remote.git'));
  const env = { PATH: `${path.join(dir, 'bin')}:${PATH_WITHOUT_CLAUDE}`, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const outside = await nightshift(['systemd', 'print', '--user', 'nobody'], env, dir);
  assert.equal(outside.code, 0, outside.stderr);
  assert.match(outside.stderr, new RegExp(`warning: git remote \`origin\` is ${path.join(dir, 'elsewhere', 'remote.git')}, outside the units' ReadWritePaths=`));
  // Control: the same remote under state_dir, which the units may write: no warning.
  git(path.join(dir, 'site', 'vault'), 'remote', 'set-url', 'origin', path.join(dir, 'site', 'state', 'remote.git'));
  const inside = await nightshift(['systemd', 'print', '--user', 'nobody'], env, dir);
  assert.equal(inside.code, 0, inside.stderr);
  assert.doesNotMatch(inside.stderr, /git remote/);
});
