// The rendered units under a real systemd: a container booted over the host root (test/nspawn.ts),
// the build bound in read-only at /opt/nightshift, the site bound at /srv/nightshift-test, and the
// units installed there by `nightshift systemd install` itself. Sessions run the real Claude Code
// CLI against the loopback API and report to the loopback Discord, both in this process (the
// container shares the host's network). Without root, systemd-nspawn or a working bwrap every test
// is skipped with the reason (one by one: under Node 20 a skipped describe counts for nothing);
// under CI=true they run and fail with it instead.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeApi, type FakeApi } from '../fake-api.js';
import { startFakeDiscord, type FakeDiscord } from '../fake-discord.js';
import { BWRAP, CLAUDE, ledgerRows, NEEDS_BWRAP, ROOT, tempDir, waitFor } from '../helpers.js';
import { boot, unavailable, type Machine } from '../nspawn.js';
import { git } from '../git-helpers.js';
import { DEFAULT_SESSION_USER } from '../../config/session-user.js';

const missing = unavailable() ?? (BWRAP ? null : NEEDS_BWRAP || null);
// Under CI nothing skips: .ci/run installs what the test needs, so a missing piece is a failure.
const skip: string | false = missing && process.env.CI !== 'true' ? missing : false;
const OPT = '/opt/nightshift';
const SITE = '/srv/nightshift-test';
const NODE = process.execPath;
const BIN = `${OPT}/dist/cli/bin.js`;
const ALERT = 'nightshift-alert@nightshift.service.service';
const FAST = '[Timer]\nRandomizedDelaySec=0\nAccuracySec=1s\n';
const KEY = 'sk-test-nightshift-key';
// Run by the session's Bash tool, inside its sandbox: privileges and seccomp, the site's mounts (with
// their type, in mount order), the processes it can see and whether any of their environments holds
// the real API key, a write into the real state folder, and the env file.
const PROBE = [
  `grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status`,
  `awk '$5 ~ "^${SITE}" { for (i = 7; $i != "-"; i++); split($6, o, ","); print "mount", $5, o[1], $(i + 1) }' /proc/self/mountinfo`,
  `echo "pids $(ls /proc | grep -c '^[0-9]')"`,
  `echo "comms $(cat /proc/[0-9]*/comm | sort -u | tr '\\n' ' ')"`,
  `echo "environ-key $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ${KEY.slice(0, 12)})"`,
  `touch ${SITE}/state/x 2>&1; echo "touch-state $?"`,
  `echo "env-bytes $(cat ${SITE}/nightshift.env 2>/dev/null | wc -c)"`,
  `echo "site-has $(ls -A ${SITE} | tr '\\n' ' ')"`,
  `echo "state-has $(ls -A ${SITE}/state | tr '\\n' ' ')"`,
].join('; ');

describe('the units under a real systemd (systemd-nspawn)', () => {
  let api: FakeApi;
  let discord: FakeDiscord;
  let machine: Machine;
  let site = '';
  const sh = (args: string[], timeoutMs = 60_000) => machine.run(args, { timeoutMs });
  const show = async (unit: string, prop: string) => (await sh(['systemctl', 'show', '-p', prop, '--value', unit])).stdout.trim();
  const journal = async (args: string[]) => (await sh(['journalctl', '--no-pager', '-o', 'cat', ...args])).stdout;
  const rows = (): any[] => (fs.existsSync(path.join(site, 'state', 'ledger.db')) ? ledgerRows(site) : []);
  // The site's config: the real CLI from the bound build as a bare `claude`, found in a folder of the
  // installing shell's PATH that systemd's own lacks (an nvm or --prefix install), git off (no
  // remote), Discord on loopback.
  // `hooks: false` takes the guardrail hook away, so what stops the probe is the sandbox itself.
  const writeConfig = (agent: string, budget = '', hooks = true) =>
    fs.writeFileSync(path.join(site, 'nightshift.yaml'), [
      `vault: ${SITE}/vault`, `state_dir: ${SITE}/state`, `log_dir: ${SITE}/logs`, `agents_dir: ${SITE}/prompts`,
      'claude:', '  command: claude', '  model: sonnet', '  timeout: 90s', '  idle_timeout: 60s', '  kill_grace: 3s',
      'budget:', '  max_sessions_per_day: 100', ...(budget ? [budget] : []),
      'git:', '  enabled: false', ...(hooks ? [] : ['hooks:', '  enabled: false']),
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
    if (skip) return;
    if (missing) throw new Error(`CI=true: the real-systemd test must run here, but ${missing}`);
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
    writeConfig('worker', '', false);
    fs.writeFileSync(path.join(site, 'nightshift.env'), [
      `ANTHROPIC_BASE_URL=${api.url}`, `ANTHROPIC_API_KEY=${KEY}`, 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1',
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
    // The CLI's folder: a link into the bound build (dangling on the host, so made after the chown).
    fs.mkdirSync(path.join(site, 'bin'));
    fs.symlinkSync(`${OPT}/${path.relative(ROOT, CLAUDE)}`, path.join(site, 'bin', 'claude'));
    // The units, rendered and installed by the command itself, as an operator would, from a shell
    // whose PATH has the CLI's folder.
    const installed = await machine.run([NODE, BIN, 'systemd', 'install', '--user', 'nightshift', '--on-calendar', '*:*:0/5'], { env: { NIGHTSHIFT_CONFIG: `${SITE}/nightshift.yaml`, PATH: `${SITE}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` } });
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, /wrote \/etc\/systemd\/system\/nightshift\.service/);
    assert.match(installed.stdout, /^Now run:\n  systemctl daemon-reload && systemctl enable --now nightshift\.timer nightshift-watch\.timer$/m);
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

  test('systemctl start nightshift.service runs one session with the real CLI, sandboxed, under the units\' hardening', { skip }, async () => {
    const started = await sh(['systemctl', 'start', 'nightshift.service'], 150_000);
    const log = await journal(['-u', 'nightshift.service']);
    assert.equal(started.code, 0, `${started.stderr}\n${log}`);
    assert.equal(await show('nightshift.service', 'Result'), 'success');
    const [row] = rows();
    assert.equal(row?.outcome, 'ok', `${JSON.stringify(rows())}\n${log}`);
    assert.equal(row.agent, 'worker');
    assert.match(log, /"event":"session_end"[^\n]*"sandboxed":true/, log);
    // Under a cgroup v2 systemd, the session's own cgroup in the subtree the unit delegates
    // (Delegate=pids memory); in a container on a cgroup v1 host (read-only there), rlimits.
    const unified = (await sh(['stat', '-fc', '%T', '/sys/fs/cgroup'])).stdout.trim() === 'cgroup2fs';
    assert.match(log, new RegExp(`"event":"bounds","mechanism":"${unified ? 'cgroup2' : 'rlimit'}"`), log);
    // The bare `claude` was found on the unit's Environment=PATH= (systemd's own lacks its folder),
    // and the unit's lines carry SyslogIdentifier=nightshift.
    assert.match(await show('nightshift.service', 'Environment'), new RegExp(`PATH=${SITE}/bin:`));
    assert.match(await journal(['-t', 'nightshift', '-u', 'nightshift.service']), /"event":"session_end"/);
    // What the session's own tool saw, inside bwrap inside the unit. The unit's no-new-privileges
    // and seccomp filter reach into the sandbox (neither can be shed).
    assert.match(row.result, /NoNewPrivs:\s+1/, row.result);
    assert.match(row.result, /Seccomp:\s+2/, row.result);
    // The mount on top at each of the site's paths (mountinfo lists them in mount order): of the
    // site the session's view of the host holds the vault (writable) and its own session folder,
    // nothing else: the site is only folders of bwrap's read-only root on the way to them, and the
    // state and log folders, the config and the env file are not there at all.
    const top = new Map([...row.result.matchAll(/^mount (\S+) (\S+) (\S+)$/gm)].map((m: string[]) => [m[1], `${m[2]} ${m[3]}`]));
    const paths = [SITE, ...['vault', 'state', 'logs', 'nightshift.yaml', 'nightshift.env'].map((d) => `${SITE}/${d}`)];
    assert.deepEqual(paths.map((p) => top.get(p)), [undefined, 'rw ext4', undefined, undefined, undefined, undefined], row.result);
    assert.match(row.result, /^site-has state vault ?$/m, row.result);
    assert.match(row.result, /^state-has sessions ?$/m, row.result);
    // Its own PID namespace: a handful of processes (bwrap, the CLI, its shell, the probe's own
    // commands), no supervisor, and the real key in none of their environments (the CLI holds a
    // per-session token for the supervisor's API proxy).
    const pids = Number(/pids (\d+)/.exec(row.result)?.[1]);
    assert.ok(pids >= 2 && pids <= 12, row.result);
    assert.match(row.result, /comms [^\n]*\bclaude/, row.result);
    assert.doesNotMatch(/comms ([^\n]*)/.exec(row.result)![1], /\bnode\b/, row.result);
    assert.match(row.result, /environ-key 0\b/, row.result);
    assert.ok(!row.result.includes(KEY), row.result);
    // No write outside the vault, nothing read from the env file.
    assert.match(row.result, /touch[^\n]*Read-only file system\ntouch-state 1\b/, row.result);
    assert.ok(!fs.existsSync(path.join(site, 'state', 'x')), 'nothing written in the real state folder');
    assert.match(row.result, /env-bytes 0\b/, row.result);
    assert.ok(fs.existsSync(path.join(site, 'logs', 'transcripts', `${row.id}.jsonl`)), 'the transcript was written');
    assert.equal(fs.statSync(path.join(site, 'state', 'ledger.db')).uid, fs.statSync(site).uid, 'written as the service user');
    // The session's report reached the loopback Discord.
    await waitFor(() => discord.messages.some((m) => JSON.stringify(m.body).includes(row.id)), 20_000, 'the session report on Discord');
  });

  test('negative control: the same unit with systemd\'s own PATH cannot start the bare `claude` (spawn_failed)', { skip }, async () => {
    const dropIn = '/etc/systemd/system/nightshift.service.d/path.conf';
    const set = await sh(['sh', '-c', `mkdir -p ${path.dirname(dropIn)} && printf '[Service]\\nEnvironment=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\\n' > ${dropIn} && systemctl daemon-reload`]);
    assert.equal(set.code, 0, set.stderr);
    try {
      const had = rows().length;
      const alerted = await invocation();
      const started = await sh(['systemctl', 'start', 'nightshift.service'], 150_000);
      assert.notEqual(started.code, 0, 'the unit failed');
      const row = rows().at(-1);
      assert.equal(rows().length, had + 1);
      assert.equal(row.outcome, 'spawn_failed', JSON.stringify(row));
      assert.match(row.error, /cannot start `claude`: not found \(claude\.command\)/);
      // Its alert runs to the end before the next test counts alerts.
      await settled(ALERT, alerted);
    } finally {
      await sh(['sh', '-c', `rm -f ${dropIn} && systemctl daemon-reload`]);
    }
  });

  test('a failed session fails the unit, fires the alert unit, and shows in journalctl -p warning', { skip }, async () => {
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

  test('the timer fires more ticks', { skip }, async () => {
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

  test('a broken config fails the tick with 78, and the alert unit still succeeds and reaches Discord', { skip }, async () => {
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

  test('the watch timer runs the doctor on its own schedule', { skip }, async () => {
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

// Units written by `systemd install --user root`: before session_user they failed every tick with
// 78 (bwrap as uid 0 without CAP_SYS_ADMIN: "Creating new namespace failed"). Now the session runs
// as session_user, which install makes (the container's own /etc: deleted there first), is not
// root inside, reads neither /etc/shadow nor a 0600 file of root's, and its work is committed and
// pushed by the root supervisor.
describe('the units for --user root under a real systemd (systemd-nspawn)', () => {
  const ROOT_SITE = '/srv/nightshift-root';
  const ROOT_KEY = 'root-only-key-5e6f';
  let api: FakeApi;
  let machine: Machine;
  let site = '';
  const sh = (args: string[], timeoutMs = 60_000) => machine.run(args, { timeoutMs });
  const journal = async (args: string[]) => (await sh(['journalctl', '--no-pager', '-o', 'cat', ...args])).stdout;
  const rootProbe = [
    'echo "uid $(id -u) groups $(id -G)"',
    'cat /etc/shadow >/dev/null 2>&1 && echo shadow-read || echo shadow-closed',
    `cat ${ROOT_SITE}/secret.key 2>/dev/null || echo key-closed`,
    'echo "the session wrote this" > made-by-session.md && echo vault-written',
  ].join('; ');

  before(async () => {
    if (skip) return;
    if (missing) throw new Error(`CI=true: the real-systemd test must run here, but ${missing}`);
    api = await startFakeApi();
    site = tempDir(null, 'nightshift-rootsite-');
    // An operator's site of root's: anyone may pass through it, the key is root's alone.
    fs.chmodSync(site, 0o755);
    fs.mkdirSync(path.join(site, 'prompts'));
    fs.writeFileSync(path.join(site, 'secret.key'), `${ROOT_KEY}\n`, { mode: 0o600 });
    api.script('rootprobe', ({ turn, lastToolResult }) =>
      turn === 0
        ? { kind: 'message', stopReason: 'tool_use', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: rootProbe, description: 'probe' } }] }
        : { kind: 'message', blocks: [{ type: 'text', text: `probe: ${lastToolResult}` }] });
    fs.writeFileSync(path.join(site, 'prompts', 'worker.md'), '---\nallowed_tools: ["Bash"]\n---\nSCENARIO=rootprobe\n');
    // The vault, a clone of a bare remote beside it (the unit may write there: a drop-in below).
    const remote = path.join(site, 'remote.git');
    git(site, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
    git(site, 'clone', '--quiet', remote, path.join(site, 'vault'));
    fs.writeFileSync(path.join(site, 'vault', 'notes.md'), 'line one\n');
    git(path.join(site, 'vault'), 'add', '.');
    git(path.join(site, 'vault'), 'commit', '--quiet', '-m', 'seed');
    git(path.join(site, 'vault'), 'push', '--quiet', 'origin', 'main');
    git(path.join(site, 'vault'), 'remote', 'set-url', 'origin', `${ROOT_SITE}/remote.git`);
    fs.writeFileSync(path.join(site, 'nightshift.yaml'), [
      `vault: ${ROOT_SITE}/vault`, `state_dir: ${ROOT_SITE}/state`, `log_dir: ${ROOT_SITE}/logs`, `agents_dir: ${ROOT_SITE}/prompts`,
      'claude:', `  command: ${OPT}/${path.relative(ROOT, CLAUDE)}`, '  model: sonnet', '  timeout: 90s', '  idle_timeout: 60s', '  kill_grace: 3s',
      'hooks:', '  enabled: false', 'dispatch:', '  - agent: worker', '',
    ].join('\n'));
    fs.writeFileSync(path.join(site, 'nightshift.env'), [
      `ANTHROPIC_BASE_URL=${api.url}`, `ANTHROPIC_API_KEY=${KEY}`, 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1',
      'DISABLE_AUTOUPDATER=1', 'DISABLE_TELEMETRY=1', 'DISABLE_ERROR_REPORTING=1', 'CLAUDE_CODE_MAX_RETRIES=0', 'API_TIMEOUT_MS=20000', '',
    ].join('\n'), { mode: 0o600 });
    machine = await boot([{ from: ROOT, to: OPT, readOnly: true }, { from: site, to: ROOT_SITE }]);
  });

  after(async () => {
    await machine?.stop();
    await api?.close();
    if (site) fs.rmSync(site, { recursive: true, force: true });
  });

  test('install --user root makes session_user and names the vault fix; the tick runs the session as that user, walled, and pushes its work', { skip }, async () => {
    // The host may have the user already (the tests make it): the container starts without it.
    await sh(['sh', '-c', `userdel ${DEFAULT_SESSION_USER} 2>/dev/null; true`]);
    const installed = await machine.run([NODE, BIN, 'systemd', 'install', '--user', 'root', '--on-calendar', 'hourly'], { env: { NIGHTSHIFT_CONFIG: `${ROOT_SITE}/nightshift.yaml` } });
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, new RegExp(`made user ${DEFAULT_SESSION_USER} \\(uid \\d+, gid \\d+\\)`), installed.stdout);
    assert.match(fs.readFileSync(path.join(site, 'nightshift.yaml'), 'utf8'), /vault:/);
    // The vault was there before: named, with the command, never changed.
    const named = /is not writable by session_user nightshift-session: `([^`]+)`/.exec(installed.stderr);
    assert.ok(named, installed.stderr);
    const fixed = await sh(['sh', '-c', named[1]]);
    assert.equal(fixed.code, 0, fixed.stderr);
    const dropIn = `mkdir -p /etc/systemd/system/nightshift.service.d && printf '[Service]\\nReadWritePaths=${ROOT_SITE}/remote.git\\n' > /etc/systemd/system/nightshift.service.d/test.conf && systemctl daemon-reload`;
    assert.equal((await sh(['sh', '-c', dropIn])).code, 0);
    const started = await sh(['systemctl', 'start', 'nightshift.service'], 150_000);
    const log = await journal(['-u', 'nightshift.service']);
    assert.equal(started.code, 0, `${started.stderr}\n${log}`);
    const [row] = ledgerRows(site);
    assert.equal(row?.outcome, 'ok', `${JSON.stringify(row)}\n${log}`);
    assert.match(log, /"event":"session_end"[^\n]*"sandboxed":true/, log);
    // Under a cgroup v2 systemd, the session's own cgroup in the subtree the unit delegates
    // (Delegate=pids memory); in a container on a cgroup v1 host (read-only there), rlimits.
    const unified = (await sh(['stat', '-fc', '%T', '/sys/fs/cgroup'])).stdout.trim() === 'cgroup2fs';
    assert.match(log, new RegExp(`"event":"bounds","mechanism":"${unified ? 'cgroup2' : 'rlimit'}"`), log);
    const uid = Number((await sh(['id', '-u', DEFAULT_SESSION_USER])).stdout.trim());
    const gid = Number((await sh(['id', '-g', DEFAULT_SESSION_USER])).stdout.trim());
    assert.match(row.result, new RegExp(`uid ${uid} groups ${gid}\\b`), row.result);
    assert.notEqual(uid, 0);
    assert.match(row.result, /shadow-closed/, row.result);
    assert.match(row.result, /key-closed/, row.result);
    assert.ok(!row.result.includes(ROOT_KEY), row.result);
    assert.match(row.result, /vault-written/, row.result);
    assert.equal(git(remote(site), 'show', 'main:made-by-session.md'), 'the session wrote this');
    assert.equal(fs.statSync(path.join(site, 'vault', 'made-by-session.md')).uid, uid);
  });
});

const remote = (site: string) => path.join(site, 'remote.git');
