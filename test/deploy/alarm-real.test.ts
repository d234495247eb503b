// The alarm that does not need nightshift, and the install that proves the units run, under a real
// systemd (test/nspawn.ts). Issue 35: nightshift installed under /var/tmp passed `systemd install`,
// then every tick and its alert failed under the units' PrivateTmp= ("Cannot find module"), and
// nothing reached Discord. Here: install refuses such a bin and writes nothing (control: the same
// install from /opt passes and its dry tick runs under the units); and with nightshift's bundle
// deleted after install, the alert unit and the watch still reach the loopback Discord and the
// monitor's /fail through nightshift-alert.sh (control: the alert unit as it was, without the
// script, delivers nothing). Without root or systemd-nspawn the tests skip with the reason; under
// CI=true they fail with it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeDiscord, type FakeDiscord } from '../fake-discord.js';
import { CLAUDE, ROOT, tempDir, waitFor } from '../helpers.js';
import { boot, unavailable, type Machine } from '../nspawn.js';

const missing = unavailable();
const skip: string | false = missing && process.env.CI !== 'true' ? missing : false;
const OPT = '/opt/nightshift';
// The same build where the units cannot see it (PrivateTmp= hides /var/tmp).
const HIDDEN = '/var/tmp/nightshift';
// A copy of the build whose bundle the test deletes after install.
const COPY = '/opt/nightshift-copy';
const SITE = '/srv/nightshift-alarm';
const NODE = process.execPath;
const ALERT = 'nightshift-alert@nightshift.service.service';
const UUID = '0b7d2c1e-5a4f-4e21-8c3d-9f1e2a3b4c5d';
const SYSTEMD = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const UNITS = '/etc/systemd/system';

describe('the alarm without nightshift, and install\'s checks, under a real systemd (systemd-nspawn)', () => {
  let discord: FakeDiscord;
  let monitor: http.Server;
  const pings: Array<{ url: string; body: string; title?: string }> = [];
  // The second channel (NIGHTSHIFT_WEBHOOK_URL, ntfy's form) on the monitor's server, its own path.
  const HOOK = '/ntfy-topic-0b7d2c1e5a4f4e21';
  const hookPosts = () => pings.filter((p) => p.url === HOOK);
  let machine: Machine;
  let site = '';
  let copy = '';
  const sh = (args: string[], timeoutMs = 60_000) => machine.run(args, { timeoutMs });
  const show = async (unit: string, prop: string) => (await sh(['systemctl', 'show', '-p', prop, '--value', unit])).stdout.trim();
  const journal = async (unit: string) => (await sh(['journalctl', '--no-pager', '-o', 'cat', '-u', unit])).stdout;
  const install = (from: string) =>
    machine.run([NODE, `${from}/dist/cli/bin.js`, 'systemd', 'install', '--user', 'nightshift', '--on-calendar', 'hourly'], { env: { NIGHTSHIFT_CONFIG: `${SITE}/nightshift.yaml`, PATH: SYSTEMD }, timeoutMs: 180_000 });
  const settled = async (unit: string, since: string, timeoutMs = 60_000) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const [id, state] = [await show(unit, 'InvocationID'), await show(unit, 'ActiveState')];
      if (id && id !== since && ['inactive', 'failed'].includes(state)) return { result: await show(unit, 'Result'), status: await show(unit, 'ExecMainStatus') };
      if (Date.now() > end) throw new Error(`${unit} did not run and settle within ${timeoutMs} ms (${state} ${id}):\n${await journal(unit)}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  };

  before(async () => {
    if (skip) return;
    if (missing) throw new Error(`CI=true: the real-systemd test must run here, but ${missing}`);
    discord = await startFakeDiscord();
    monitor = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        pings.push({ url: req.url!, body, title: req.headers.title as string | undefined });
        res.writeHead(200).end('OK');
      });
    });
    await new Promise<void>((r) => monitor.listen(0, '127.0.0.1', r));
    const pingUrl = `http://127.0.0.1:${(monitor.address() as AddressInfo).port}/${UUID}`;
    site = tempDir(null, 'nightshift-alarm-');
    for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(site, d));
    fs.writeFileSync(path.join(site, 'prompts', 'worker.md'), 'SCENARIO=text\n');
    fs.writeFileSync(path.join(site, 'nightshift.yaml'), [
      `vault: ${SITE}/vault`, `state_dir: ${SITE}/state`, `log_dir: ${SITE}/logs`, `agents_dir: ${SITE}/prompts`,
      'claude:', `  command: ${OPT}/${path.relative(ROOT, CLAUDE)}`, 'git:', '  enabled: false',
      'discord:', `  api_base: ${discord.apiBase}`, 'monitor:', `  ping_url: ${pingUrl}`, 'webhook:', '  format: ntfy', 'dispatch:', '  - agent: worker', '',
    ].join('\n'));
    fs.writeFileSync(path.join(site, 'nightshift.env'), `ANTHROPIC_API_KEY=sk-test-alarm-key-0123\nDISCORD_WEBHOOK_URL=${discord.webhookUrl}\nNIGHTSHIFT_WEBHOOK_URL=http://127.0.0.1:${(monitor.address() as AddressInfo).port}${HOOK}\n`, { mode: 0o600 });
    // The copy: the build and its templates, node_modules from the bound tree.
    copy = tempDir(null, 'nightshift-copy-');
    for (const d of ['dist', 'deploy']) fs.cpSync(path.join(ROOT, d), path.join(copy, d), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(copy, 'package.json'));
    fs.symlinkSync(`${OPT}/node_modules`, path.join(copy, 'node_modules'));
    fs.chmodSync(copy, 0o755);
    machine = await boot([{ from: ROOT, to: OPT, readOnly: true }, { from: ROOT, to: HIDDEN, readOnly: true }, { from: copy, to: COPY, readOnly: true }, { from: site, to: SITE }]);
    const added = await sh(['useradd', '--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', 'nightshift']);
    assert.equal(added.code, 0, added.stderr);
    const [uid, gid] = (await sh(['sh', '-c', 'id -u nightshift; id -g nightshift'])).stdout.trim().split('\n').map(Number);
    const own = (p: string) => {
      fs.chownSync(p, uid, gid);
      if (fs.statSync(p).isDirectory()) for (const e of fs.readdirSync(p)) own(path.join(p, e));
    };
    own(site);
    fs.chownSync(path.join(site, 'nightshift.env'), 0, 0);
  });

  after(async () => {
    await machine?.stop();
    await discord?.close();
    await new Promise((r) => (monitor ? monitor.close(r) : r(null)));
    for (const d of [site, copy]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  test('install refuses a nightshift the units\' PrivateTmp= hides, writing nothing; control: the same build from /opt installs and its dry tick runs under the units', { skip }, async () => {
    const refused = await install(HIDDEN);
    assert.equal(refused.code, 64, `${refused.stdout}\n${refused.stderr}`);
    assert.match(refused.stderr, /systemd install: nothing written\./);
    assert.match(refused.stderr, new RegExp(`nightshift ${HIDDEN}/dist/cli/bin\\.js is under /var/tmp, which the units' PrivateTmp= hides from them .*install it elsewhere`));
    const written = (await sh(['sh', '-c', `ls ${UNITS} | grep nightshift; ls ${SITE}`])).stdout;
    assert.doesNotMatch(written, /nightshift\.service|nightshift-alert|nightshift-monitor\.env|state|logs/, written);

    const ok = await install(OPT);
    assert.equal(ok.code, 0, `${ok.stdout}\n${ok.stderr}`);
    assert.match(ok.stdout, new RegExp(`^wrote ${UNITS}/nightshift\\.service$`, 'm'));
    assert.match(ok.stdout, new RegExp(`^wrote ${UNITS}/nightshift-alert\\.sh$`, 'm'));
    assert.match(ok.stdout, new RegExp(`^wrote ${SITE}/nightshift-monitor\\.env \\(0600\\)$`, 'm'));
    assert.match(ok.stdout, /dry tick under the units \(nightshift-check\.service in \/etc\/systemd\/system\): ok/, ok.stdout);
    assert.equal(await show('nightshift-check.service', 'Result'), 'success');
    assert.match(await journal('nightshift-check.service'), /worker/, 'the dry tick listed the agents, as the units\' user');
    const monitorEnv = fs.statSync(path.join(site, 'nightshift-monitor.env'));
    assert.equal(monitorEnv.mode & 0o777, 0o600);
    assert.equal(monitorEnv.uid, 0);
    // The ping URL is in no unit's text (units are 0644).
    assert.ok(!(await sh(['sh', '-c', `cat ${UNITS}/nightshift*`])).stdout.includes(UUID));
    // doctor --prefix runs the same checks on what is installed.
    const doctor = await machine.run([NODE, `${OPT}/dist/cli/bin.js`, 'doctor', '--json', '--prefix', UNITS], { env: { NIGHTSHIFT_CONFIG: `${SITE}/nightshift.yaml`, PATH: SYSTEMD } });
    const units = JSON.parse(doctor.stdout).checks.find((c: any) => c.name === 'units');
    assert.equal(units?.status, 'ok', doctor.stdout);
  });

  test('with the bundle deleted, the alert unit and the watch still reach Discord and the monitor\'s /fail; control: the alert unit without the script delivers nothing', { skip }, async () => {
    const installed = await install(COPY);
    assert.equal(installed.code, 0, `${installed.stdout}\n${installed.stderr}`);
    assert.match(installed.stdout, /dry tick under the units .*: ok/);
    // The bundle goes (a failed upgrade, a cleaned folder): node cannot load nightshift at all.
    fs.rmSync(path.join(copy, 'dist'), { recursive: true, force: true });

    let seen = discord.messages.length;
    let pinged = pings.length;
    let before = await show(ALERT, 'InvocationID');
    const tick = await sh(['systemctl', 'start', 'nightshift.service']);
    assert.notEqual(tick.code, 0, 'the tick fails');
    assert.match(await journal('nightshift.service'), /Cannot find module/);
    const alert = await settled(ALERT, before);
    const alertLog = await journal(ALERT);
    assert.match(alertLog, /nightshift-alert\.sh: nightshift could not report \(nightshift\.service, exit 1\): sent a plain alarm to Discord/, alertLog);
    assert.deepEqual(alert, { result: 'exit-code', status: '1' }, 'the alert unit fails too: its own path is broken, and says so');
    await waitFor(() => discord.messages.length > seen, 20_000, 'the plain alarm on Discord');
    const [msg] = discord.messages.slice(seen);
    assert.match(msg.body.content, /nightshift alarm on .*\n```\nunit nightshift\.service failed: result=exit-code code=exited status=1\nnightshift itself could not report it \(exit 1\):\n[\s\S]*Cannot find module/);
    assert.ok(!JSON.stringify(msg.body).includes('sk-test-alarm-key'), 'no secret in the alarm');
    await waitFor(() => pings.some((p, i) => i >= pinged && p.url === `/${UUID}/fail`), 20_000, 'the monitor\'s /fail');
    assert.deepEqual(pings.slice(pinged).map((p) => p.url), [HOOK, `/${UUID}/fail`]);
    assert.match(pings.find((p, i) => i >= pinged && p.url === `/${UUID}/fail`)!.body, /^unit nightshift\.service failed: [\s\S]*Cannot find module/);
    // The second channel, in the form the config names (copied by install into the monitor env file).
    const posted = pings.slice(pinged).find((p) => p.url === HOOK)!;
    assert.match(posted.title ?? '', /^nightshift alarm on .+: nightshift\.service$/);
    assert.match(posted.body, /^unit nightshift\.service failed: [\s\S]*Cannot find module[\s\S]*\(plain: nightshift could not send its own report\)$/);
    assert.ok(!posted.body.includes('sk-test-alarm-key'), 'no secret in the webhook\'s alarm');
    assert.match(alertLog, /sent a plain alarm to the webhook \(ntfy\)/);

    // The watch: the same shell path when its doctor cannot run.
    seen = discord.messages.length;
    pinged = pings.length;
    const watchBefore = await show('nightshift-watch.service', 'InvocationID');
    await sh(['systemctl', 'start', 'nightshift-watch.service']);
    await settled('nightshift-watch.service', watchBefore);
    await waitFor(() => discord.messages.length > seen, 20_000, 'the watch\'s plain alarm on Discord');
    assert.match(discord.messages[seen].body.content, /the watch \(nightshift-watch\.service\) could not run nightshift doctor\nnightshift itself could not report it/);
    await waitFor(() => pings.some((p, i) => i >= pinged && p.url === `/${UUID}/fail`), 20_000, 'the watch\'s /fail');
    assert.deepEqual(pings.slice(pinged).map((p) => p.url), [HOOK, `/${UUID}/fail`]);

    // Control: the alert unit as it was before the script (nightshift's own alert alone).
    const dropIn = `${UNITS}/${ALERT.replace('nightshift.service.service', '.service')}.d`;
    const old = `[Service]\\nExecStart=\\nExecStart=${NODE} ${COPY}/dist/cli/bin.js alert --unit %%i --config ${SITE}/nightshift.yaml\\n`;
    const set = await sh(['sh', '-c', `mkdir -p ${dropIn} && printf '${old}' > ${dropIn}/old.conf && systemctl daemon-reload`]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(await show(ALERT, 'ExecStart'), new RegExp(`path=${NODE} .*alert --unit nightshift\\.service`));
    seen = discord.messages.length;
    pinged = pings.length;
    before = await show(ALERT, 'InvocationID');
    await sh(['systemctl', 'start', 'nightshift.service']);
    const bare = await settled(ALERT, before);
    assert.equal(bare.result, 'exit-code');
    assert.match(await journal(ALERT), /Cannot find module/);
    // Given the time the script's path took above, nothing arrives.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(discord.messages.length, seen, 'nothing reached Discord');
    assert.equal(pings.length, pinged, 'nothing reached the monitor, nor the webhook');
    assert.ok(hookPosts().length >= 2, 'the webhook had the two alarms above');
  });
});
