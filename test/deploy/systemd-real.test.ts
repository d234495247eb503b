// The rendered units under a real systemd: a container booted over the host root (test/nspawn.ts),
// the build bound in read-only at /opt/nightshift, the site bound at /srv/nightshift-test, and the
// units installed there by `nightshift systemd install` itself. Sessions run the real Claude Code
// CLI against the loopback API and report to the loopback Discord, both in this process (the
// container shares the host's network). Skips, with the reason, without root or systemd-nspawn.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeApi, type FakeApi } from '../fake-api.js';
import { startFakeDiscord, type FakeDiscord } from '../fake-discord.js';
import { CLAUDE, ledgerRows, ROOT, tempDir, waitFor } from '../helpers.js';
import { boot, unavailable, type Machine } from '../nspawn.js';

const skip = unavailable();
const OPT = '/opt/nightshift';
const SITE = '/srv/nightshift-test';
const NODE = process.execPath;
const BIN = `${OPT}/dist/daemon/bin.js`;
const ALERT = 'nightshift-alert@nightshift.service.service';
const FAST = '[Timer]\nRandomizedDelaySec=0\nAccuracySec=1s\n';
const PROBE = `grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; awk '$5 ~ "^${SITE}" { split($6, o, ","); print "mount", $5, o[1] }' /proc/self/mountinfo`;

describe('the units under a real systemd (systemd-nspawn)', { skip: skip ?? false }, () => {
  let api: FakeApi;
  let discord: FakeDiscord;
  let machine: Machine;
  let site = '';
  const sh = (args: string[], timeoutMs = 60_000) => machine.run(args, { timeoutMs });
  const show = async (unit: string, prop: string) => (await sh(['systemctl', 'show', '-p', prop, '--value', unit])).stdout.trim();
  const journal = async (args: string[]) => (await sh(['journalctl', '--no-pager', '-o', 'cat', ...args])).stdout;
  const rows = (): any[] => (fs.existsSync(path.join(site, 'state', 'ledger.db')) ? ledgerRows(site) : []);
  // The site's config: the real CLI from the bound build, git off (no remote), Discord on loopback.
  const writeConfig = (agent: string, budget = '') =>
    fs.writeFileSync(path.join(site, 'nightshift.yaml'), [
      `vault: ${SITE}/vault`, `state_dir: ${SITE}/state`, `log_dir: ${SITE}/logs`, `agents_dir: ${SITE}/prompts`,
      'claude:', `  command: ${OPT}/${path.relative(ROOT, CLAUDE)}`, '  model: sonnet', '  timeout: 90s', '  idle_timeout: 60s', '  kill_grace: 3s',
      'budget:', '  max_sessions_per_day: 100', ...(budget ? [budget] : []),
      'git:', '  enabled: false',
      'discord:', `  api_base: ${discord.apiBase}`,
      'dispatch:', `  - agent: ${agent}`, '',
    ].join('\n'));
  const agent = (name: string, prompt: string) =>
    fs.writeFileSync(path.join(site, 'prompts', `${name}.md`), `---\nallowed_tools: ["Bash"]\n---\n${prompt}\n`);
  // The alert unit's runs so far (each OnFailure= start is a new invocation).
  const invocation = () => show(ALERT, 'InvocationID');
  const settled = async (unit: string, since: string, timeoutMs = 60_000) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const [id, state] = [await show(unit, 'InvocationID'), await show(unit, 'ActiveState')];
      if (id && id !== since && ['inactive', 'failed'].includes(state)) return { result: await show(unit, 'Result'), status: await show(unit, 'ExecMainStatus') };
      if (Date.now() > end) throw new Error(`${unit} did not run and settle within ${timeoutMs} ms (${state} ${id}):\n${await journal(['-u', unit])}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  };

  before(async () => {
    api = await startFakeApi();
    discord = await startFakeDiscord();
    site = tempDir(null, 'nightshift-site-');
    for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(site, d));
    // The session looks at its own sandbox: privileges, seccomp, and which of the site's mounts it may write.
    api.script('probe', ({ turn, lastToolResult }) =>
      turn === 0
        ? { kind: 'message', stopReason: 'tool_use', blocks: [{ type: 'text', text: 'Probing.' }, { type: 'tool_use', name: 'Bash', input: { command: PROBE, description: 'probe' } }] }
        : { kind: 'message', blocks: [{ type: 'text', text: `probe: ${lastToolResult}` }] });
    agent('worker', 'SCENARIO=probe');
    agent('ticker', 'SCENARIO=text');
    agent('failing', 'SCENARIO=err500');
    writeConfig('worker');
    fs.writeFileSync(path.join(site, 'nightshift.env'), [
      `ANTHROPIC_BASE_URL=${api.url}`, 'ANTHROPIC_API_KEY=sk-test-nightshift-key', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1',
      'DISABLE_AUTOUPDATER=1', 'DISABLE_TELEMETRY=1', 'DISABLE_ERROR_REPORTING=1', 'CLAUDE_CODE_MAX_RETRIES=0', 'API_TIMEOUT_MS=20000',
      `DISCORD_WEBHOOK_URL=${discord.webhookUrl}`, '',
    ].join('\n'), { mode: 0o600 });
    machine = await boot([{ from: ROOT, to: OPT, readOnly: true }, { from: site, to: SITE }]);
    // A service user of its own (in the container's throw-away /etc), owning the site.
    const added = await sh(['useradd', '--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', 'nightshift']);
    assert.equal(added.code, 0, added.stderr);
    const [uid, gid] = (await sh(['sh', '-c', 'id -u nightshift; id -g nightshift'])).stdout.trim().split('\n').map(Number);
    const own = (p: string) => {
      fs.chownSync(p, uid, gid);
      if (fs.statSync(p).isDirectory()) for (const e of fs.readdirSync(p)) own(path.join(p, e));
    };
    own(site);
    fs.chownSync(path.join(site, 'nightshift.env'), 0, 0);
    // The units, rendered and installed by the command itself, as an operator would.
    const installed = await machine.run([NODE, BIN, 'systemd', 'install', '--user', 'nightshift', '--on-calendar', '*:*:0/5'], { env: { NIGHTSHIFT_CONFIG: `${SITE}/nightshift.yaml` } });
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, /wrote \/etc\/systemd\/system\/nightshift\.service/);
    assert.doesNotMatch(installed.stderr, /warning/, 'a site under /srv draws no PrivateTmp warning');
    // Test timing only: no random delay, and the watch every few seconds too.
    const dropIns = `for t in nightshift nightshift-watch; do mkdir -p /etc/systemd/system/$t.timer.d; printf '${FAST.replace(/\n/g, '\\n')}' > /etc/systemd/system/$t.timer.d/test.conf; done; printf '[Timer]\\nOnCalendar=\\nOnCalendar=*:*:0/5\\n' >> /etc/systemd/system/nightshift-watch.timer.d/test.conf; systemctl daemon-reload`;
    const reloaded = await sh(['sh', '-c', dropIns]);
    assert.equal(reloaded.code, 0, reloaded.stderr);
  });

  after(async () => {
    await machine?.stop();
    await api?.close();
    await discord?.close();
    if (site) fs.rmSync(site, { recursive: true, force: true });
  });

  test('systemctl start nightshift.service runs one session with the real CLI, under the units\' hardening', async () => {
    const started = await sh(['systemctl', 'start', 'nightshift.service'], 150_000);
    assert.equal(started.code, 0, `${started.stderr}\n${await journal(['-u', 'nightshift.service'])}`);
    assert.equal(await show('nightshift.service', 'Result'), 'success');
    const [row] = rows();
    assert.equal(row?.outcome, 'ok', JSON.stringify(rows()));
    assert.equal(row.agent, 'worker');
    // What the session's own tool saw: no new privileges, a seccomp filter, the site read-only
    // (ProtectSystem=strict, though the service user owns it) but for ReadWritePaths=.
    assert.match(row.result, /NoNewPrivs:\s+1/, row.result);
    assert.match(row.result, /Seccomp:\s+2/, row.result);
    assert.match(row.result, new RegExp(`mount ${SITE} ro\\b`), row.result);
    for (const d of ['vault', 'state', 'logs']) assert.match(row.result, new RegExp(`mount ${SITE}/${d} rw\\b`), row.result);
    assert.ok(fs.existsSync(path.join(site, 'logs', 'transcripts', `${row.id}.jsonl`)), 'the transcript was written');
    assert.equal(fs.statSync(path.join(site, 'state', 'ledger.db')).uid, fs.statSync(site).uid, 'written as the service user');
    // The session's report reached the loopback Discord.
    await waitFor(() => discord.messages.some((m) => JSON.stringify(m.body).includes(row.id)), 20_000, 'the session report on Discord');
  });

  test('a failed session fails the unit, fires the alert unit, and shows in journalctl -p warning', async () => {
    writeConfig('failing');
    const before = await invocation();
    const seen = discord.messages.length;
    const started = await sh(['systemctl', 'start', 'nightshift.service'], 150_000);
    assert.notEqual(started.code, 0, 'the unit failed');
    assert.equal(await show('nightshift.service', 'ExecMainStatus'), '1');
    const failed = rows().at(-1);
    assert.equal(failed.outcome, 'error');
    const alert = await settled(ALERT, before);
    assert.deepEqual(alert, { result: 'success', status: '0' }, await journal(['-u', ALERT]));
    // Priorities come from the `<N>` prefixes nightshift writes when stderr is the journal.
    const warnings = await journal(['-u', 'nightshift.service', '-p', 'warning']);
    assert.match(warnings, new RegExp(`"event":"session_end".*"outcome":"error"|${failed.id}.*error`));
    assert.doesNotMatch(warnings, /"event":"session_start"/, 'info lines stay out of -p warning');
    await waitFor(() => discord.messages.slice(seen).some((m) => JSON.stringify(m.body).includes('nightshift.service')), 20_000, 'the alert on Discord');
  });

  test('the timer fires more ticks', async () => {
    writeConfig('ticker');
    const had = rows().length;
    assert.equal((await sh(['systemctl', 'start', 'nightshift.timer'])).code, 0);
    try {
      await waitFor(() => rows().filter((r) => r.agent === 'ticker' && r.outcome === 'ok').length >= 2, 90_000, 'two ticks from the timer');
    } finally {
      await sh(['systemctl', 'stop', 'nightshift.timer']);
    }
    assert.ok(rows().length >= had + 2);
    const runs = await journal(['-u', 'nightshift.service', '-g', 'Finished|Deactivated successfully']);
    assert.ok(runs.trim().split('\n').length >= 2, runs);
  });

  test('a broken config fails the tick with 78, and the alert unit still succeeds and reaches Discord', async () => {
    // The tick may still be finishing a timer's session.
    for (let i = 0; i < 200 && (await show('nightshift.service', 'ActiveState')) === 'activating'; i++) await new Promise((r) => setTimeout(r, 300));
    // Invalid, yet its discord section still reads: `alert` keeps every setting that validates.
    writeConfig('ticker', '  max_usd_per_day: plenty');
    const before = await invocation();
    const seen = discord.messages.length;
    const started = await sh(['systemctl', 'start', 'nightshift.service']);
    assert.notEqual(started.code, 0);
    assert.equal(await show('nightshift.service', 'ExecMainStatus'), '78');
    const alert = await settled(ALERT, before);
    assert.deepEqual(alert, { result: 'success', status: '0' }, await journal(['-u', ALERT]));
    await waitFor(() => discord.messages.slice(seen).some((m) => JSON.stringify(m.body).includes('nightshift.service')), 20_000, 'the alert on Discord');
  });

  test('the watch timer runs the doctor on its own schedule', async () => {
    writeConfig('ticker');
    const before = await show('nightshift-watch.service', 'InvocationID');
    assert.equal((await sh(['systemctl', 'start', 'nightshift-watch.timer'])).code, 0);
    try {
      const ran = await settled('nightshift-watch.service', before, 60_000);
      const out = await journal(['-u', 'nightshift-watch.service']);
      assert.match(out, /doctor/);
      assert.deepEqual(ran, { result: 'success', status: '0' }, out);
    } finally {
      await sh(['systemctl', 'stop', 'nightshift-watch.timer']);
    }
  });
});
