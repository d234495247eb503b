// The rendered units must pass `systemd-analyze verify` (Debian's systemd package; .ci/run installs it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../config/config.js';
import { makeWritablePaths, renderUnits, SYSTEMD_DEFAULT_PATH, UNIT_FILES, unitPathSetting, unitWord } from '../../daemon/systemd.js';
import { CLAUDE, nightshift, PATH_WITHOUT_CLAUDE, ROOT, tempDir } from '../helpers.js';

function verify(dir: string) {
  const files = fs.readdirSync(dir).filter((f) => /\.(service|timer)$/.test(f)).map((f) => path.join(dir, f));
  return spawnSync('systemd-analyze', ['verify', '--man=no', ...files], { encoding: 'utf8', cwd: dir });
}

// `site`: a folder of the temp dir the site lives in (a name with a space, say).
async function rendered(t: any, extra: string[] = [], user = 'root', site = '') {
  const dir = path.join(tempDir(t), site);
  fs.mkdirSync(path.join(dir, 'prompts'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'prompts'), path.join(dir, 'prompts'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'dispatch:\n  - agent: gardener\n    hours: [6]\n  - agent: researcher\n');
  // claude.command is the default bare `claude`, found in a folder of this shell's PATH that
  // systemd's own PATH lacks (as an nvm or --prefix install is).
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.symlinkSync(CLAUDE, path.join(dir, 'bin', 'claude'));
  const env = { PATH: `${path.join(dir, 'bin')}:${PATH_WITHOUT_CLAUDE}`, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const units = path.join(dir, 'units');
  const ran = await nightshift(['systemd', 'install', '--prefix', units, '--user', user, ...extra], env, dir);
  return { dir, units, ran, env };
}

describe('systemd units', () => {
  test('install writes every unit with this install\'s paths and prints the systemctl line', async (t) => {
    const { dir, units, ran } = await rendered(t, ['--on-calendar', '*-*-* 06,18:00:00']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /systemctl daemon-reload && systemctl enable --now nightshift\.timer nightshift-watch\.timer/);
    const names = fs.readdirSync(units).sort();
    assert.deepEqual(names, [
      'nightshift-alert.sh', 'nightshift-alert@.service', 'nightshift-check.service', 'nightshift-daemon.service', 'nightshift-watch.service', 'nightshift-watch.timer', 'nightshift.service', 'nightshift.timer',
    ]);
    // The alarm's shell path wraps nightshift's own alert and doctor, from where systemd reads units
    // (staged: where the printed line copies them), with the monitor's 0600 file beside the env file.
    const alertUnit = fs.readFileSync(path.join(units, 'nightshift-alert@.service'), 'utf8');
    assert.match(alertUnit, new RegExp(`^ExecStart=/bin/sh /etc/systemd/system/nightshift-alert\\.sh alert %i ${process.execPath} ${ROOT}/dist/cli/bin\\.js alert --unit %i --config `, 'm'));
    assert.match(alertUnit, new RegExp(`^EnvironmentFile=-${dir}/nightshift-monitor\\.env$`, 'm'));
    assert.match(fs.readFileSync(path.join(units, 'nightshift-watch.service'), 'utf8'), /^ExecStart=\/bin\/sh \/etc\/systemd\/system\/nightshift-alert\.sh watch %n \S+ \S+ doctor --alert /m);
    assert.equal(fs.readFileSync(path.join(units, 'nightshift-alert.sh'), 'utf8'), fs.readFileSync(path.join(ROOT, 'deploy', 'systemd', 'nightshift-alert.sh'), 'utf8'));
    assert.ok(!fs.existsSync(path.join(dir, 'nightshift-monitor.env')), 'staging writes no site file');
    const service = fs.readFileSync(path.join(units, 'nightshift.service'), 'utf8');
    assert.ok(!/\{\{/.test(names.map((n) => fs.readFileSync(path.join(units, n), 'utf8')).join('')), 'every placeholder filled');
    assert.match(service, new RegExp(`ExecStart=${process.execPath} --min-semi-space-size=32 ${ROOT}/dist/cli/bin.js tick --config ${dir}/nightshift.yaml`));
    assert.match(service, new RegExp(`ReadWritePaths=${dir}/vault ${dir}/state ${dir}/logs`));
    // The backstop sits above the longest session watchdog (30m default, gardener 20m).
    const timeout = Number(/TimeoutStartSec=(\d+)s/.exec(service)![1]);
    assert.ok(timeout > 1800, `TimeoutStartSec ${timeout}`);
    assert.match(fs.readFileSync(path.join(units, 'nightshift.timer'), 'utf8'), /OnCalendar=\*-\*-\* 06,18:00:00\nPersistent=true/);
    // The watch runs the doctor on its own schedule; the alert reports the failed unit (%i), and
    // neither stops on a missing folder, which is what they are there to report.
    const watch = fs.readFileSync(path.join(units, 'nightshift-watch.service'), 'utf8');
    assert.match(watch, new RegExp(`ExecStart=/bin/sh /etc/systemd/system/nightshift-alert.sh watch %n ${process.execPath} ${ROOT}/dist/cli/bin.js doctor --alert --config ${dir}/nightshift.yaml`));
    assert.match(watch, new RegExp(`ReadWritePaths=-${dir}/vault -${dir}/state -${dir}/logs\n`));
    assert.match(watch, new RegExp(`WorkingDirectory=-${dir}\n`));
    assert.doesNotMatch(watch, /^OnFailure=/m);
    assert.match(fs.readFileSync(path.join(units, 'nightshift-watch.timer'), 'utf8'), /OnCalendar=\*-\*-\* \*:17:00\n[\s\S]*Unit=nightshift-watch\.service/);
    // The units find the CLI where this shell did, and node for its #!/usr/bin/env node; each logs
    // as nightshift (journalctl -t nightshift).
    for (const name of ['nightshift.service', 'nightshift-daemon.service', 'nightshift-watch.service']) {
      const unit = fs.readFileSync(path.join(units, name), 'utf8');
      const expected = [...new Set([`${dir}/bin`, path.dirname(process.execPath), ...SYSTEMD_DEFAULT_PATH.split(':')])].join(':');
      assert.ok(unit.split('\n').includes(`Environment=PATH=${expected}`), `${name}: ${/^Environment=PATH=.*$/m.exec(unit)?.[0]}`);
    }
    for (const name of names.filter((n) => n.endsWith('.service'))) assert.match(fs.readFileSync(path.join(units, name), 'utf8'), /^SyslogIdentifier=nightshift$/m, name);
    // Units in a folder systemd does not read: the line copies them into place first.
    assert.match(ran.stdout, new RegExp(`Staged in ${units}, which systemd does not read[^\n]*\n  install -m 0644 ${units}/nightshift\.service [^\n]* /etc/systemd/system/\n  systemctl daemon-reload && systemctl enable`));
    assert.doesNotMatch(ran.stdout, /^Now run:/m);
    const alert = fs.readFileSync(path.join(units, 'nightshift-alert@.service'), 'utf8');
    assert.match(alert, /^ExecStart=\/bin\/sh \S+\/nightshift-alert\.sh alert %i \S+ \S+ alert --unit %i --config /m);
    assert.match(service, /OnFailure=nightshift-alert@%n\.service/);
  });

  test('install warns, on stderr, of each folder under /tmp or /var/tmp, which PrivateTmp= hides', async (t) => {
    const { dir, ran } = await rendered(t);
    assert.equal(ran.code, 0, ran.stderr);
    // tempDir lives under os.tmpdir(); this test is only meaningful there.
    if (!/^\/(var\/)?tmp\//.test(dir)) return t.skip(`the temp dir ${dir} is not under /tmp`);
    for (const key of ['vault', 'state_dir', 'log_dir']) assert.match(ran.stderr, new RegExp(`warning: ${key} \\S+ is under /tmp or /var/tmp, which the units' PrivateTmp= hides`));
    assert.doesNotMatch(ran.stdout, /warning/);
  });

  test('no warning for a site under /srv-like paths', async (t) => {
    const { dir, env } = await rendered(t);
    const site = '/srv/nightshift-test-site-never-created';
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), `vault: ${site}/vault\nstate_dir: ${site}/state\nlog_dir: ${dir}/logs\n`);
    const ran = await nightshift(['systemd', 'print', '--user', 'nobody'], env, dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.doesNotMatch(ran.stderr, /warning: (vault|state_dir)/);
    assert.match(ran.stderr, /warning: log_dir /);
  });

  test('install makes the missing writable folders, owned by the service user, and leaves existing ones', (t) => {
    const dir = tempDir(t);
    fs.mkdirSync(path.join(dir, 'vault'));
    fs.writeFileSync(path.join(dir, 'passwd'), 'root:x:0:0::/root:/bin/sh\nsvc:x:12345:12346::/nonexistent:/usr/sbin/nologin\n');
    const c = { vault: path.join(dir, 'vault'), state_dir: path.join(dir, 'site', 'state'), log_dir: path.join(dir, 'site', 'logs'), git: { lock_file: path.join(dir, 'site', 'state', 'git.lock') } };
    const r = makeWritablePaths(c as any, 'svc', path.join(dir, 'passwd'));
    assert.deepEqual(r.made, [c.state_dir, c.log_dir]);
    const root = process.getuid?.() === 0;
    // As root the owner is checked: the vault exists, owned by root, not by svc.
    assert.deepEqual(r.warnings, root ? [`warning: ${c.vault} is owned by uid 0, not svc: the units write there as svc; chown it unless its mode lets them`] : []);
    for (const d of [c.state_dir, c.log_dir, path.join(dir, 'site')]) assert.equal(fs.statSync(d).uid, root ? 12345 : process.getuid?.(), d);
    assert.equal(fs.statSync(c.vault).uid, process.getuid?.(), 'an existing folder keeps its owner');
    assert.deepEqual(makeWritablePaths(c as any, 'svc', path.join(dir, 'passwd')).made, [], 'nothing to make the second time');
    if (root) assert.match(makeWritablePaths({ ...c, log_dir: path.join(dir, 'other') } as any, 'nobody-here', path.join(dir, 'passwd')).warnings[0], /user nobody-here has no entry/);
  });

  test('every rendered unit passes systemd-analyze verify', async (t) => {
    const { units } = await rendered(t);
    const r = verify(units);
    assert.equal(r.error, undefined, 'systemd-analyze must be installed (Debian package systemd)');
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.ok(!/nightshift/.test(r.stderr), r.stderr);
  });

  // `systemd-analyze security --offline=true` scores a unit's hardening from 0 (all) to 10 (none).
  // The tick and the daemon run sessions in bubblewrap, and the watch's doctor starts one: they
  // allow its namespaces, three mount calls and a /proc with nothing over it (see the comment in
  // nightshift.service), which costs about 1.0 (2.1 before the sandbox, 3.1 with it). Units for
  // root keep what handing each session to session_user takes, measured at 0.8 more (CAP_SETUID
  // CAP_SETGID 0.3, CAP_CHOWN 0.2, CAP_DAC_OVERRIDE 0.2, CAP_KILL 0.1): 4.0 at most, and never
  // CAP_SYS_ADMIN; the same units for a service user keep none. The tick and the daemon hand each
  // session a cgroup of its own (Delegate=pids memory, so ProtectControlGroups= is off): 0.2 more,
  // measured (3.3 to 3.5, 4.0 to 4.2 for root).
  test('every service stays at an exposure of 3.5 or less (4.2 for root), and allows no namespace bwrap does not need', async (t) => {
    for (const [user, most] of [['nobody', 3.5], ['root', 4.2]] as const) {
      const { units } = await rendered(t, [], user);
      const services = fs.readdirSync(units).filter((f) => f.endsWith('.service'));
      const r = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', ...services.map((f) => path.join(units, f))], { encoding: 'utf8', cwd: units });
      assert.equal(r.error, undefined, 'systemd-analyze must be installed (Debian package systemd)');
      const scores = new Map([...`${r.stdout}${r.stderr}`.matchAll(/Overall exposure level for (\S+): ([\d.]+)/g)].map((m) => [m[1], Number(m[2])]));
      assert.equal(scores.size, services.length, `${r.stdout}\n${r.stderr}`);
      for (const [unit, score] of scores) assert.ok(score <= most, `${user}: ${unit}: exposure ${score} > ${most}\n${r.stdout}`);
      const tick = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', path.join(units, 'nightshift.service')], { encoding: 'utf8', cwd: units }).stdout;
      for (const ns of ['cgroup']) assert.match(tick, new RegExp(`✓ RestrictNamespaces=~${ns}\\s`), tick);
      // What the supervisor's own /proc, files and privileges rest on stays.
      for (const kept of ['ProtectProc=', 'ProtectSystem=', 'NoNewPrivileges=', 'PrivateDevices=', 'CapabilityBoundingSet=~CAP_SYS_ADMIN']) {
        assert.ok(tick.split('\n').some((l) => l.startsWith(`✓ ${kept} `)), `${user}: ${kept} kept\n${tick}`);
      }
      const caps = /^CapabilityBoundingSet=(.*)$/m.exec(fs.readFileSync(path.join(units, 'nightshift.service'), 'utf8'))![1];
      assert.equal(caps, user === 'root' ? 'CAP_SETUID CAP_SETGID CAP_CHOWN CAP_DAC_OVERRIDE CAP_KILL' : '');
    }
  });

  test('negative control: verify rejects a broken unit', async (t) => {
    const { units } = await rendered(t);
    const file = path.join(units, 'nightshift.service');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^ExecStart=.*$/m, 'ExecStart=relative/nightshift tick').replace('Type=oneshot', 'Type=sometimes'));
    const r = verify(units);
    assert.notEqual(`${r.stderr}`.match(/nightshift\.service/), null, r.stderr);
  });

  test('install refuses, writing nothing, a calendar systemd would refuse and a user that is not there (or none)', async (t) => {
    const bad = await rendered(t, ['--on-calendar', 'every tuesday']);
    assert.equal(bad.ran.code, 64);
    assert.match(bad.ran.stderr, /Expected --on-calendar to be a systemd calendar expression .*got `every tuesday`: systemd-analyze says: Failed to parse/);
    assert.equal(fs.existsSync(bad.units), false);
    const env = bad.env;
    const noUser = await nightshift(['systemd', 'install', '--prefix', bad.units], env, bad.dir);
    assert.equal(noUser.code, 64);
    assert.match(noUser.stderr, /Expected --user NAME.*or --user root explicitly/);
    const ghost = await nightshift(['systemd', 'install', '--prefix', bad.units, '--user', 'no-such-user-here'], env, bad.dir);
    assert.equal(ghost.code, 64);
    assert.match(ghost.stderr, /Expected --user to name an existing user, got `no-such-user-here`: create it first \(useradd/);
    assert.equal(fs.existsSync(bad.units), false);
    // Negative control: an existing user and a spec systemd reads.
    const good = await nightshift(['systemd', 'install', '--prefix', bad.units, '--user', 'nobody', '--on-calendar', 'Tue *-*-* 06:00:00'], env, bad.dir);
    assert.equal(good.code, 0, good.stderr);
    assert.match(fs.readFileSync(path.join(bad.units, 'nightshift.service'), 'utf8'), /^User=nobody$/m);
  });

  test('its help names every unit it writes', async () => {
    const help = await nightshift(['systemd', '--help'], { PATH: process.env.PATH }, ROOT);
    for (const unit of UNIT_FILES) assert.match(help.stdout, new RegExp(`^ {2}${unit.replace(/[.@]/g, '\\$&')} `, 'm'), unit);
  });

  test('the units find a CLI only this shell\'s PATH has; one not found (or under /tmp) renders nothing, naming why', async (t) => {
    const { dir, env } = await rendered(t);
    const units = path.join(dir, 'again');
    // Negative control: without the CLI's folder on PATH, as systemd's own PATH would be.
    const lost = await nightshift(['systemd', 'install', '--prefix', units, '--user', 'nobody'], { ...env, PATH: PATH_WITHOUT_CLAUDE }, dir);
    assert.equal(lost.code, 64, lost.stderr);
    assert.match(lost.stderr, /claude\.command: `claude` is not on this shell's PATH .*so the units could not start it either/);
    assert.equal(fs.existsSync(units), false, 'nothing written');
    // A CLI whose real file lies under /tmp: PrivateTmp= hides it from the units.
    const tmpCli = fs.mkdtempSync('/tmp/nightshift-cli-');
    t.after(() => fs.rmSync(tmpCli, { recursive: true, force: true }));
    fs.writeFileSync(path.join(tmpCli, 'claude'), '#!/bin/sh\necho 2.0.0\n', { mode: 0o755 });
    const hidden = await nightshift(['systemd', 'print', '--user', 'nobody'], { ...env, PATH: `${tmpCli}:${PATH_WITHOUT_CLAUDE}` }, dir);
    assert.equal(hidden.code, 64, hidden.stderr);
    assert.match(hidden.stderr, /claude\.command: \/tmp\/nightshift-cli-\w+\/claude is under \/tmp or \/var\/tmp, which the units' PrivateTmp= hides/);
  });

  test('print, like install, requires --user: never a silent User=root', async (t) => {
    const { dir, env } = await rendered(t);
    const ran = await nightshift(['systemd', 'print'], env, dir);
    assert.equal(ran.code, 64, ran.stderr);
    assert.match(ran.stderr, /Expected --user NAME.*or --user root explicitly/);
    assert.equal(ran.stdout, '');
  });

  test('--on-calendar that reaches no dispatch rule renders nothing, naming the rule, as doctor would', async (t) => {
    const { dir, env } = await rendered(t);
    // gardener runs at hour 6 (the budget's UTC): a timer at 07:00 and 19:00 never reaches it.
    const never = await nightshift(['systemd', 'install', '--prefix', path.join(dir, 'u'), '--user', 'nobody', '--on-calendar', '*-*-* 07,19:00:00'], env, dir);
    assert.equal(never.code, 64, never.stderr);
    assert.match(never.stderr, /under --on-calendar \*-\*-\* 07,19:00:00 rule \[0\] gardener \(hours 6\) can never fire: ticks start only at hours 7,19/);
    assert.equal(fs.existsSync(path.join(dir, 'u')), false);
    // Negative control: a spec that reaches hour 6.
    const good = await nightshift(['systemd', 'install', '--prefix', path.join(dir, 'u'), '--user', 'nobody', '--on-calendar', '*-*-* 06,19:00:00'], env, dir);
    assert.equal(good.code, 0, good.stderr);
  });

  test('next and status forecast the ticks of the timer installed in --prefix; with none there, hourly; without systemd-analyze, hourly, said', async (t) => {
    // gardener at hour 6, researcher at every tick; the timer fires at 06:00 and 19:00 only.
    const { dir, units, ran, env } = await rendered(t, ['--on-calendar', '*-*-* 06,19:00:00']);
    assert.equal(ran.code, 0, ran.stderr);
    const at = '2026-12-01T15:20:00Z';
    const next = async (prefix: string, e = env) => {
      const r = await nightshift(['next', '--json', '--at', at, '--prefix', prefix], e, dir);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    const timer = await next(units);
    assert.deepEqual(timer.calendar, { on_calendar: ['*-*-* 06,19:00:00'], source: 'timer', file: path.join(units, 'nightshift.timer'), assumed: null });
    assert.equal(timer.tick_at, '2026-12-01T19:00:00.000Z');
    assert.deepEqual([timer.agent, timer.starts], ['researcher', true]);
    assert.equal(timer.next_due.researcher, '2026-12-01T19:00:00.000Z');
    assert.equal(timer.next_due.gardener, '2026-12-02T06:00:00.000Z');
    const text = await nightshift(['next', '--at', at, '--prefix', units], env, dir);
    assert.match(text.stdout, new RegExp(`^  tick 2026-12-01 19:00 UTC \\(in 3h 40m\\): ${units}/nightshift\\.timer: OnCalendar=\\*-\\*-\\* 06,19:00:00$`, 'm'), text.stdout);
    assert.match(text.stdout, /^ {2}researcher +2026-12-01 19:00 UTC \(in 3h 40m\)$/m);
    // Control: no timer in the folder: the default, hourly (the next tick is 16:00).
    const none = path.join(dir, 'no-units');
    fs.mkdirSync(none);
    const hourly = await next(none);
    assert.deepEqual(hourly.calendar, { on_calendar: ['hourly'], source: 'default', file: path.join(none, 'nightshift.timer'), assumed: null });
    assert.equal(hourly.tick_at, '2026-12-01T16:00:00.000Z');
    assert.equal(hourly.next_due.researcher, '2026-12-01T16:00:00.000Z');
    // A drop-in that clears OnCalendar= and sets its own wins, as systemd reads it.
    fs.mkdirSync(path.join(units, 'nightshift.timer.d'));
    fs.writeFileSync(path.join(units, 'nightshift.timer.d', 'override.conf'), '[Timer]\nOnCalendar=\nOnCalendar=*-*-* 17:00:00\n');
    assert.equal((await next(units)).tick_at, '2026-12-01T17:00:00.000Z');
    fs.rmSync(path.join(units, 'nightshift.timer.d'), { recursive: true });
    // Without systemd-analyze the timer's times cannot be had: hourly is assumed, and said.
    const blind = await next(units, { ...env, PATH: path.join(dir, 'bin') });
    assert.match(blind.calendar.assumed, /^systemd-analyze is not on PATH \(.*\): hourly ticks assumed$/);
    assert.equal(blind.tick_at, '2026-12-01T16:00:00.000Z');
    const blindText = await nightshift(['next', '--at', at, '--prefix', units], { ...env, PATH: path.join(dir, 'bin') }, dir);
    assert.match(blindText.stdout, /^  tick 2026-12-01 16:00 UTC \(in 40m\): .*OnCalendar=\*-\*-\* 06,19:00:00; systemd-analyze is not on PATH .*hourly ticks assumed$/m);
    // status reads the same timer, and so does doctor (its schedule check).
    const status = JSON.parse((await nightshift(['status', '--json', '--prefix', units], env, dir)).stdout);
    assert.equal(status.next.calendar.source, 'timer');
    assert.match(status.next.tick_at, /T(06|19):00:00\.000Z$/);
    const schedule = async (prefix: string) => JSON.parse((await nightshift(['doctor', '--json', '--prefix', prefix], env, dir)).stdout).checks.find((c: any) => c.name === 'schedule');
    assert.equal((await schedule(units)).detail, 'every dispatch rule can fire under daemon.schedule and the installed timer');
    fs.writeFileSync(path.join(units, 'nightshift.timer'), fs.readFileSync(path.join(units, 'nightshift.timer'), 'utf8').replace('06,19:00:00', '07,19:00:00'));
    assert.match((await schedule(units)).detail, /rule \[0\] gardener \(hours 6\) can never fire/);
    assert.equal((await schedule(none)).detail, 'every dispatch rule can fire under daemon.schedule');
  });

  test('a site whose path holds a space: every path is quoted where systemd splits words, and verify reads each as one', async (t) => {
    const { dir, units, ran } = await rendered(t, [], 'root', 'my site');
    assert.equal(ran.code, 0, ran.stderr);
    const service = fs.readFileSync(path.join(units, 'nightshift.service'), 'utf8');
    const line = (key: string) => service.split('\n').filter((l) => l.startsWith(`${key}=`));
    assert.deepEqual(line('ExecStart'), [`ExecStart=${process.execPath} --min-semi-space-size=32 ${ROOT}/dist/cli/bin.js tick --config "${dir}/nightshift.yaml"`]);
    assert.deepEqual(line('ReadWritePaths'), [`ReadWritePaths="${dir}/vault" "${dir}/state" "${dir}/logs"`]);
    // Taken as they are, to the end of the line: quotes there would be part of the path.
    assert.deepEqual(line('WorkingDirectory'), [`WorkingDirectory=${dir}`]);
    assert.deepEqual(line('EnvironmentFile'), [`EnvironmentFile=-${dir}/nightshift.env`]);
    const expected = [...new Set([`${dir}/bin`, path.dirname(process.execPath), ...SYSTEMD_DEFAULT_PATH.split(':')])].join(':');
    assert.ok(line('Environment').includes(`Environment="PATH=${expected}"`), line('Environment').join('\n'));
    assert.ok(line('Environment').includes(`Environment="NIGHTSHIFT_CONFIG=${dir}/nightshift.yaml"`));
    assert.ok(line('Environment').includes(`Environment="CLAUDE_CONFIG_DIR=${dir}/state/claude"`));
    // doctor's unit cli check reads the PATH back as the unit will run with it.
    assert.equal(unitPathSetting(service), expected);
    const watch = fs.readFileSync(path.join(units, 'nightshift-watch.service'), 'utf8');
    assert.match(watch, new RegExp(`^ReadWritePaths="-${dir}/vault" "-${dir}/state" "-${dir}/logs"$`, 'm'));
    // The staged line copies them with the space quoted for the shell.
    assert.match(ran.stdout, new RegExp(`install -m 0644 '${units}/nightshift\\.service' `));
    const ok = verify(units);
    assert.equal(ok.status, 0, `${ok.stdout}\n${ok.stderr}`);
    assert.equal(`${ok.stdout}${ok.stderr}`.trim(), '', 'verify says nothing of any unit');
    // Negative control: the same units unquoted, as install once wrote them: verify splits the paths.
    for (const name of fs.readdirSync(units)) fs.writeFileSync(path.join(units, name), fs.readFileSync(path.join(units, name), 'utf8').replace(/"/g, ''));
    const bad = verify(units);
    assert.match(bad.stderr, /nightshift\.service:\d+: Invalid environment assignment, ignoring: site\//);
    assert.match(bad.stderr, /nightshift\.service:\d+: ReadWritePaths= path is not absolute, ignoring: site\/vault/);
  });

  test('node behind a path with a space and a %: ExecStart= still names it, verify finds it', (t) => {
    const dir = path.join(tempDir(t), 'opt dir 100%');
    fs.mkdirSync(dir);
    fs.symlinkSync(process.execPath, path.join(dir, 'node'));
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), '');
    const config = loadConfig(path.join(dir, 'nightshift.yaml'));
    const units = path.join(dir, 'units');
    fs.mkdirSync(units);
    for (const u of renderUnits(config, [], { user: 'root', node: path.join(dir, 'node'), path: '/usr/bin:/bin' })) fs.writeFileSync(path.join(units, u.name), u.text);
    const service = fs.readFileSync(path.join(units, 'nightshift.service'), 'utf8');
    assert.match(service, new RegExp(`^ExecStart="${dir.replace('%', '%%')}/node" `, 'm'));
    const ok = verify(units);
    assert.equal(`${ok.stdout}${ok.stderr}`.trim(), '', 'verify says nothing of any unit');
    // Negative control: unquoted, systemd looks for a program named by the path's first word.
    fs.writeFileSync(path.join(units, 'nightshift.service'), service.replace(/^ExecStart="([^"]*)"/m, 'ExecStart=$1'));
    assert.match(verify(units).stderr, /Command \S+\/opt is not executable/);
    // The words systemd would split or expand, quoted and escaped (systemd.syntax(7)).
    assert.equal(unitWord('/srv/site'), '/srv/site');
    assert.equal(unitWord('/srv/my site'), '"/srv/my site"');
    assert.equal(unitWord('/srv/a"b\\c'), '"/srv/a\\"b\\\\c"');
    assert.equal(unitWord('/srv/100%'), '/srv/100%%');
    assert.equal(unitWord('/srv/$HOME', true), '/srv/$$HOME');
    assert.equal(unitWord('/srv/$HOME'), '/srv/$HOME', 'only ExecStart= expands variables');
  });

  test('a path no unit file can carry (a newline) is refused at install, naming it; nothing is written', async (t) => {
    const { dir, env } = await rendered(t);
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), `vault: "${dir}/va\\nult"\n`);
    const units = path.join(dir, 'refused');
    const r = await nightshift(['systemd', 'install', '--prefix', units, '--user', 'nobody'], env, dir);
    assert.equal(r.code, 64, r.stderr);
    assert.match(r.stderr, new RegExp(`vault "${dir}/va\\\\nult" holds a control character, which a unit file cannot carry`));
    assert.equal(fs.existsSync(units), false);
    // Negative control: the same site with a space instead installs.
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), `vault: "${dir}/va ult"\n`);
    assert.equal((await nightshift(['systemd', 'install', '--prefix', units, '--user', 'nobody'], env, dir)).code, 0);
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
