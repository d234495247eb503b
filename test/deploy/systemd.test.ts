// The rendered units must pass `systemd-analyze verify` (Debian's systemd package; .ci/run installs it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { nightshift, ROOT, tempDir } from '../helpers.js';

function verify(dir: string) {
  const files = fs.readdirSync(dir).filter((f) => /\.(service|timer)$/.test(f)).map((f) => path.join(dir, f));
  return spawnSync('systemd-analyze', ['verify', '--man=no', ...files], { encoding: 'utf8', cwd: dir });
}

async function rendered(t: any, extra: string[] = []) {
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'prompts'));
  fs.cpSync(path.join(ROOT, 'prompts'), path.join(dir, 'prompts'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'dispatch:\n  - agent: gardener\n    hours: [6]\n  - agent: researcher\n');
  const env = { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const units = path.join(dir, 'units');
  const ran = await nightshift(['systemd', 'install', '--prefix', units, '--user', 'root', ...extra], env, dir);
  return { dir, units, ran, env };
}

describe('systemd units', () => {
  test('install writes every unit with this install\'s paths and prints the systemctl line', async (t) => {
    const { dir, units, ran } = await rendered(t, ['--on-calendar', '*-*-* 06,18:00:00']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /systemctl daemon-reload && systemctl enable --now nightshift\.timer/);
    const names = fs.readdirSync(units).sort();
    assert.deepEqual(names, ['nightshift-alert@.service', 'nightshift-daemon.service', 'nightshift.service', 'nightshift.timer']);
    const service = fs.readFileSync(path.join(units, 'nightshift.service'), 'utf8');
    assert.ok(!/\{\{/.test(names.map((n) => fs.readFileSync(path.join(units, n), 'utf8')).join('')), 'every placeholder filled');
    assert.match(service, new RegExp(`ExecStart=${process.execPath} ${ROOT}/dist/daemon/bin.js tick --config ${dir}/nightshift.yaml`));
    assert.match(service, new RegExp(`ReadWritePaths=${dir}/vault ${dir}/state ${dir}/logs`));
    // The backstop sits above the longest session watchdog (30m default, gardener 20m).
    const timeout = Number(/TimeoutStartSec=(\d+)s/.exec(service)![1]);
    assert.ok(timeout > 1800, `TimeoutStartSec ${timeout}`);
    assert.match(fs.readFileSync(path.join(units, 'nightshift.timer'), 'utf8'), /OnCalendar=\*-\*-\* 06,18:00:00\nPersistent=true/);
  });

  test('every rendered unit passes systemd-analyze verify', async (t) => {
    const { units } = await rendered(t);
    const r = verify(units);
    assert.equal(r.error, undefined, 'systemd-analyze must be installed (Debian package systemd)');
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.ok(!/nightshift/.test(r.stderr), r.stderr);
  });

  test('negative control: verify rejects a broken unit', async (t) => {
    const { units } = await rendered(t);
    const file = path.join(units, 'nightshift.service');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^ExecStart=.*$/m, 'ExecStart=relative/nightshift tick').replace('Type=oneshot', 'Type=sometimes'));
    const r = verify(units);
    assert.notEqual(`${r.stderr}`.match(/nightshift\.service/), null, r.stderr);
  });

  test('print renders the same units to stdout', async (t) => {
    const { env, dir } = await rendered(t);
    const ran = await nightshift(['systemd', 'print', '--user', 'nobody'], env, dir);
    assert.equal(ran.code, 0);
    assert.match(ran.stdout, /# ---- nightshift\.timer ----/);
    assert.match(ran.stdout, /User=nobody/);
    assert.equal((await nightshift(['systemd', 'frobnicate'], env, dir)).code, 64);
  });
});
