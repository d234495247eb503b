// The CLI as the sessions will start it (issue 29, point 2): doctor reads the installed unit's
// PATH back (not this shell's), and knows that the wall's private /tmp hides a CLI kept there;
// the tick refuses such a CLI before the charge, in the same words.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { validateConfig } from '../../../config/config.js';
import { SandboxUnavailableError } from '../../../core/errors.js';
import { cliReachChecks } from '../../../daemon/health/doctor-setup.js';
import { checkSandbox } from '../../../sessions/wall/sandbox-check.js';
import { CLAUDE, nightshift, tempDir } from '../../helpers.js';

test('doctor checks the CLI on the installed units\' PATH: found where install put it, missing where a unit names none', async (t) => {
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'prompts'));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'sandbox: none\n');
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.symlinkSync(CLAUDE, path.join(dir, 'bin', 'claude'));
  const shellPath = `${path.join(dir, 'bin')}:${process.env.PATH}`;
  const units = path.join(dir, 'units');
  const ran = await nightshift(['systemd', 'install', '--prefix', units, '--user', 'nobody'], { PATH: shellPath, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') }, dir);
  assert.equal(ran.code, 0, ran.stderr);
  const config = validateConfig({ sandbox: 'none' }, path.join(dir, 'nightshift.yaml')).config!;
  const unit = path.join(units, 'nightshift.service');
  // doctor at a shell whose PATH lacks the folder: the units' own PATH is what counts.
  const [found] = cliReachChecks(config, { PATH: '/usr/bin:/bin' }, unit);
  assert.deepEqual([found.name, found.status], ['unit cli', 'ok']);
  assert.equal(found.detail, `${unit} finds ${path.join(dir, 'bin', 'claude')}`);
  // Negative control: a unit as install wrote them before, with systemd's own PATH.
  fs.writeFileSync(unit, fs.readFileSync(unit, 'utf8').replace(/^Environment=PATH=.*\n/m, ''));
  const [lost] = cliReachChecks(config, { PATH: shellPath }, unit);
  assert.equal(lost.status, 'fail');
  assert.match(lost.detail, /runs with PATH=\/usr\/local\/sbin:\/usr\/local\/bin:\/usr\/sbin:\/usr\/bin:\/sbin:\/bin, where `claude` is not found: every session the units start would fail \(spawn_failed\)/);
  assert.match(lost.fix!, /nightshift systemd install --user USER again/);
  // No unit installed: nothing to say about one.
  assert.deepEqual(cliReachChecks(config, { PATH: shellPath }, path.join(dir, 'none.service')), []);
});

test('a CLI under /tmp: doctor fails `wall cli`, and the tick refuses it before the charge', async (t) => {
  const tmp = fs.mkdtempSync('/tmp/nightshift-cli-');
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  fs.writeFileSync(path.join(tmp, 'claude'), '#!/bin/sh\necho 2.0.0\n', { mode: 0o755 });
  const dir = tempDir(t);
  const config = validateConfig({ sandbox: 'bwrap', claude: { command: path.join(tmp, 'claude') } }, path.join(dir, 'nightshift.yaml')).config!;
  const checks = cliReachChecks(config, { PATH: process.env.PATH }, path.join(dir, 'none.service'));
  assert.equal(checks.length, 1);
  assert.equal(checks[0].name, 'wall cli');
  assert.equal(checks[0].status, 'fail');
  assert.match(checks[0].detail, new RegExp(`the CLI ${tmp}/claude lies under /tmp, which the wall replaces with the session's own`));
  await assert.rejects(checkSandbox(config, { PATH: process.env.PATH }, false, Promise.resolve(null)), (err: Error) =>
    err instanceof SandboxUnavailableError && err.message === `Refused: claude.command: ${checks[0].detail}`);
  // Negative control: the same CLI outside /tmp passes both.
  const config2 = { ...config, claude: { ...config.claude, command: CLAUDE } };
  assert.deepEqual(cliReachChecks(config2, { PATH: process.env.PATH }, path.join(dir, 'none.service')), []);
  await checkSandbox(config2, { PATH: process.env.PATH }, false, Promise.resolve(null));
  // Unwalled, /tmp hides nothing.
  assert.deepEqual(cliReachChecks({ ...config, sandbox: 'none' }, { PATH: process.env.PATH }, path.join(dir, 'none.service')), []);
});

test('the watch reports a timer that reaches no rule once: its alert key is the fact, not the hour', async () => {
  const { standingKey } = await import('../../../cli/commands/health.js');
  const never = { name: 'schedule', status: 'fail' as const, detail: 'under the timer (/etc/systemd/system/nightshift.timer: OnCalendar=*-*-* 07:00) rule [0] gardener (hours 6) can never fire', fix: 'x' };
  const key = standingKey([never]);
  assert.match(key!, /^doctor:schedule:[0-9a-f]{16}$/);
  assert.equal(standingKey([{ ...never }]), key, 'the same fact, the same key: sent once');
  assert.notEqual(standingKey([{ ...never, detail: `${never.detail}!` }]), key, 'another fact is news');
  // Negative control: with any other failure, each run alerts as before (a timestamped key).
  assert.equal(standingKey([never, { name: 'silence', status: 'fail', detail: 'd', fix: 'f' }]), undefined);
  assert.equal(standingKey([]), undefined);
});
