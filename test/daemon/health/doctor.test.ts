// `nightshift doctor`: the pure verdicts, then the real CLI against a healthy install and against
// installs broken one way at a time, each failure caught, named and alerted to the loopback Discord.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { Ledger } from '../../../budget/ledger.js';
import { salvage } from '../../../config/config-fallback.js';
import { failuresCheck, lockCheck, NEEDS_CONFIG, networkChecks, sandboxCheck, silenceCheck } from '../../../daemon/health/doctor.js';
import { SandboxUnavailableError } from '../../../core/errors.js';
import { checkSandbox } from '../../../sessions/wall/sandbox-check.js';
import { bwrapHint } from '../../../sessions/wall/sandbox.js';
import { Outbox, outboxFile } from '../../../report/outbox.js';
import { startFakeDiscord, type FakeDiscord } from '../../fake-discord.js';
import { startFakeApi, type FakeApi } from '../../fake-api.js';
import { git, makeRepos } from '../../git-helpers.js';
import { CLAUDE, configYaml, nightshift, SANDBOX, SESSION_USER, tempDir, workspace, writeAgent, type Workspace } from '../../helpers.js';

const H = 3_600_000;
const NOW = new Date('2026-03-02T12:00:00Z');

test('silence: the last ok session must be younger than alerts.max_silence', () => {
  const table: Array<[string | null, string | null, string]> = [
    ['2026-03-02T10:00:00Z', null, 'ok'],
    ['2026-03-01T09:00:00Z', null, 'fail'], // 27h
    [null, null, 'warn'], // nothing ran yet
    [null, '2026-03-02T11:00:00Z', 'warn'], // sessions, none ok, but young
    [null, '2026-02-28T11:00:00Z', 'fail'], // sessions, none ok, for days
  ];
  for (const [lastOk, first, want] of table) assert.equal(silenceCheck(lastOk, first, NOW, 26 * H).status, want, `${lastOk} ${first}`);
  assert.match(silenceCheck('2026-03-01T09:00:00Z', null, NOW, 26 * H).detail, /27h 0m ago .*alerts.max_silence 26h/);
});

test('failures: max_consecutive_failures non-ok sessions in a row fail', () => {
  const table: Array<[string[], string]> = [
    [[], 'ok'],
    [['ok', 'error', 'error', 'error'], 'ok'],
    [['error', 'timeout', 'ok'], 'ok'],
    [['error', 'timeout', 'loop', 'ok'], 'fail'],
    [['abandoned', 'abandoned', 'abandoned'], 'fail'],
  ];
  for (const [outcomes, want] of table) assert.equal(failuresCheck(outcomes, 3).status, want, outcomes.join(','));
});

test('a broken config keeps every setting that validates on its own', () => {
  assert.deepEqual(
    salvage({ vault: '/v', claude: { timeout: 'forever', model: 'opus' }, discord: { api_base: 'http://127.0.0.1:1/api', timeout: 'x' }, nonsense: 1 }),
    { vault: '/v', claude: { model: 'opus' }, discord: { api_base: 'http://127.0.0.1:1/api' } },
  );
  assert.deepEqual(salvage('not a mapping'), {});
});

test('a lock whose owner is gone is stale', (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9');
  const file = path.join(ws.dir, 'run');
  assert.equal(lockCheck('run lock', file, NOW, H).status, 'ok');
  fs.mkdirSync(`${file}.lock`);
  fs.writeFileSync(`${file}.owner.json`, JSON.stringify({ pid: 2 ** 22 + 777, start: '1', since: '2026-03-01T00:00:00Z', purpose: 'session' }));
  const c = lockCheck('run lock', file, NOW, H);
  assert.equal(c.status, 'fail');
  assert.match(c.detail, /stale: held by pid \d+ \(gone\)/);
  fs.writeFileSync(`${file}.owner.json`, JSON.stringify({ pid: process.pid, start: null, since: '2026-03-01T00:00:00Z', purpose: 'session' }));
  assert.equal(lockCheck('run lock', file, NOW, H).status, 'warn');
});

// The sandbox check and the tick's refusal, without a real bwrap: a PATH without one, and a stand-in
// that fails the way bwrap does where namespaces are forbidden.
test('sandbox: no bwrap on PATH fails the doctor check and refuses the tick, each naming why', async (t) => {
  const empty = tempDir(t);
  const lenient = { config: { sandbox: 'bwrap', file: '/srv/site/nightshift.yaml' }, problems: [], exact: true } as any;
  const c = await sandboxCheck(lenient, { env: { PATH: empty } });
  assert.equal(c.status, 'fail');
  assert.equal(c.detail, '`bwrap` not found on PATH (Debian: apt-get install bubblewrap)');
  assert.match(c.fix!, /apt-get install bubblewrap/);
  await assert.rejects(checkSandbox({ sandbox: 'bwrap' } as any, { PATH: empty }), (err: Error) =>
    err instanceof SandboxUnavailableError && /^Refused: sandbox: bwrap is configured and `bwrap` not found on PATH .*set `sandbox: none`/.test(err.message));
  // `sandbox: none` is a choice: a warning, and no refusal.
  assert.equal((await sandboxCheck({ ...lenient, config: { ...lenient.config, sandbox: 'none' } }, { env: { PATH: empty } })).status, 'warn');
  await checkSandbox({ sandbox: 'none' } as any, { PATH: empty });
});

test('sandbox: a bwrap that cannot make its namespaces fails with its own words and the likely cause', async (t) => {
  const dir = tempDir(t);
  const said = 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.';
  fs.writeFileSync(path.join(dir, 'bwrap'), `#!/bin/sh\necho '${said}' >&2\nexit 1\n`, { mode: 0o755 });
  const env = { PATH: `${dir}:/usr/bin:/bin` };
  const c = await sandboxCheck({ config: { sandbox: 'bwrap', file: '/x.yaml' }, problems: [], exact: true } as any, { env });
  assert.equal(c.status, 'fail');
  assert.ok(c.detail.startsWith(`bwrap cannot create a sandbox here: ${said} (user namespaces are forbidden here: the unit's RestrictNamespaces= must allow user mnt pid ipc uts net`), c.detail);
  await assert.rejects(checkSandbox({ sandbox: 'bwrap' } as any, env), /Refused: sandbox: bwrap is configured and bwrap cannot create a sandbox here: bwrap: No permissions/);
});

test('sandbox: each refusal measured under the shipped units maps to the setting behind it', () => {
  const table: Array<[string, RegExp]> = [
    ['bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.', /RestrictNamespaces= must allow user mnt pid ipc uts net/],
    ["bwrap: Can't read /proc/sys/kernel/overflowuid: No such file or directory", /ProcSubset=pid/],
    ["bwrap: Can't mount proc on /newroot/proc: Operation not permitted", /ProtectKernelTunables=, ProtectKernelLogs= or ProtectHostname=/],
    ['bwrap: Failed to make / slave: Operation not permitted', /SystemCallFilter= must allow mount umount2 pivot_root/],
    ['bwrap: pivot_root: Operation not permitted', /SystemCallFilter=/],
    ['bwrap: unmount old root: Operation not permitted', /SystemCallFilter=/],
    ['bwrap: loopback: Failed to create NETLINK_ROUTE socket: Address family not supported by protocol', /RestrictAddressFamilies= must allow AF_NETLINK/],
    ['bwrap: something new', /max_user_namespaces/],
  ];
  for (const [error, want] of table) assert.match(bwrapHint(error), want, error);
});

// A ledger row, written through the ledger's own module as a session would leave it.
function addSession(ws: Workspace, outcome: string, endedAgoMs: number, n: number): void {
  const ledger = Ledger.open(path.join(ws.state, 'ledger.db'));
  try {
    const ended = new Date(Date.now() - endedAgoMs);
    const started = new Date(ended.getTime() - 60_000);
    const open = { id: `s${n}-${outcome}`, agent: 'gardener', day: started.toISOString().slice(0, 10), started_at: started.toISOString(), transcript: null, model: 'sonnet', supervisor_pid: null, supervisor_start: null };
    ledger.open(open);
    ledger.settle(open, { outcome, ended_at: ended.toISOString(), duration_ms: 60_000, cost_usd: 0.01, cost_estimated: false, turns: 1, exit_code: outcome === 'ok' ? 0 : 1, result: 'r', error: null, input_tokens: 1, output_tokens: 1 });
  } finally {
    ledger.close();
  }
}

describe('nightshift doctor', () => {
  let discord: FakeDiscord;
  let api: FakeApi;
  before(async () => {
    discord = await startFakeDiscord();
    api = await startFakeApi();
  });
  after(async () => {
    await discord.close();
    await api.close();
  });

  const yaml = (extra: { claude?: Record<string, unknown>; top?: string } = {}) => configYaml({ claude: { command: CLAUDE, ...extra.claude }, discord: { api_base: discord.apiBase, timeout: '5s' }, top: extra.top });

  // A healthy install: a vault cloned from its remote, an agent, the real CLI, an ok session an hour ago.
  function healthy(t: TestContext): Workspace {
    const ws = workspace(t, api.url, yaml());
    makeRepos(ws.dir, ws.vault);
    writeAgent(ws, 'gardener', 'SCENARIO=text');
    addSession(ws, 'ok', H, 0);
    // The ledger and the memory are the operator's alone (doctor warns of a state_dir others may read).
    fs.chmodSync(ws.state, 0o700);
    ws.env.DISCORD_WEBHOOK_URL = discord.webhookUrl;
    return ws;
  }

  async function doctor(ws: Workspace, args: string[] = []) {
    const ran = await nightshift(['doctor', '--json', ...args], ws.env, ws.dir);
    let out: any;
    try {
      out = JSON.parse(ran.stdout);
    } catch {
      throw new Error(`doctor printed no JSON (exit ${ran.code}):\n${ran.stdout}\n${ran.stderr}`);
    }
    return { ran, out };
  }

  test('a healthy install passes every check and posts nothing', async (t) => {
    const ws = healthy(t);
    discord.messages.length = 0;
    const { ran, out } = await doctor(ws, ['--alert']);
    assert.equal(ran.code, 0, ran.stdout);
    // Where bwrap cannot run, the workspace runs `sandbox: none`, which the doctor warns of.
    assert.deepEqual(out.checks.filter((c: any) => c.status !== 'ok').map((c: any) => `${c.name} ${c.status}`), SANDBOX === 'bwrap' ? [] : ['sandbox warn']);
    assert.deepEqual(out.checks.map((c: any) => c.name), [
      'config', 'node', 'env', 'credential', 'api', 'agents', 'permission', 'tools', 'cli', 'sandbox', 'access', ...(SESSION_USER && SANDBOX === 'bwrap' ? ['session user'] : []), 'bounds', 'concurrency', 'disk', 'ledger', 'memory', 'vault', 'remote', 'unpushed', 'run lock', 'git lock', 'schedule', 'discord', 'outbox', 'silence', 'failures', 'recurring',
    ]);
    assert.equal(out.alert, null);
    assert.equal(discord.messages.length, 0);
    // The node that ran it, and the pinned CLI inside the tested range.
    assert.match(out.checks.find((c: any) => c.name === 'node').detail, new RegExp(`^node ${process.version.replace(/\./g, '\\.')} \\(Node\\.js \\d+, supported until \\d{4}-\\d\\d-\\d\\d\\)$`));
    assert.match(out.checks.find((c: any) => c.name === 'cli').detail, /: Claude Code \d+\.\d+\.\d+ \(tested: \S+ to \S+\)$/);
    const text = await nightshift(['doctor'], ws.env, ws.dir);
    assert.match(text.stdout, /^ok {4}config/m);
  });

  // Each way to break an install, and the check that must name it.
  const breakages: Array<[string, string, (ws: Workspace) => void]> = [
    ['config', 'an invalid field', (ws) => fs.writeFileSync(ws.config, `${yaml()}budget:\n  max_usd_per_day: lots\n`)],
    ['api', 'a key the API refuses', (ws) => void (ws.env.ANTHROPIC_API_KEY = 'sk-ant-refused')],
    ['agents', 'an invalid agent file', (ws) => fs.writeFileSync(path.join(ws.prompts, 'broken.md'), '---\nmax_turns: many\n---\nhi\n')],
    ['cli', 'a claude command that does not exist', (ws) => fs.writeFileSync(ws.config, yaml({ claude: { command: '/nonexistent/claude' } }))],
    ['ledger', 'a corrupt ledger', (ws) => fs.writeFileSync(path.join(ws.state, 'ledger.db'), 'this is not a database '.repeat(500))],
    ['memory', 'a corrupt memory database', (ws) => fs.writeFileSync(path.join(ws.state, 'memory.db'), 'this is not a database '.repeat(500))],
    ['vault', 'a missing vault', (ws) => fs.rmSync(ws.vault, { recursive: true })],
    ['remote', 'an unreachable remote', (ws) => git(ws.vault, 'remote', 'set-url', 'origin', path.join(ws.dir, 'gone.git'))],
    ['run lock', 'a lock left by a dead supervisor', (ws) => {
      fs.mkdirSync(path.join(ws.state, 'run.lock'));
      fs.writeFileSync(path.join(ws.state, 'run.owner.json'), JSON.stringify({ pid: 2 ** 22 + 4321, start: '1', since: new Date().toISOString(), purpose: 'session' }));
    }],
    ['disk', 'less free space than limits.disk_free', (ws) => fs.writeFileSync(ws.config, `${yaml()}limits:\n  disk_free: 1000T\n`)],
    ['silence', 'no ok session for longer than alerts.max_silence', (ws) => {
      fs.rmSync(path.join(ws.state, 'ledger.db'));
      addSession(ws, 'ok', 30 * H, 1);
    }],
    ...(SESSION_USER && SANDBOX === 'bwrap' ? [['session user', 'a vault file the session user cannot write (root\'s, 0644)', (ws: Workspace) => {
      fs.writeFileSync(path.join(ws.vault, 'locked.md'), 'x');
      fs.chmodSync(path.join(ws.vault, 'locked.md'), 0o644);
    }] as [string, string, (ws: Workspace) => void]] : []),
    ['failures', 'three failed sessions in a row', (ws) => {
      addSession(ws, 'error', 50 * 60_000, 2);
      addSession(ws, 'timeout', 40 * 60_000, 3);
      addSession(ws, 'loop', 30 * 60_000, 4);
    }],
  ];
  for (const [name, how, breakIt] of breakages) {
    test(`${how} fails the ${name} check, exits 1, and --alert posts it to Discord`, async (t) => {
      const ws = healthy(t);
      breakIt(ws);
      discord.messages.length = 0;
      const { ran, out } = await doctor(ws, ['--alert']);
      assert.equal(ran.code, 1);
      const failing = out.checks.filter((c: any) => c.status === 'fail');
      assert.deepEqual(failing.map((c: any) => c.name), [name], JSON.stringify(out.checks, null, 1));
      assert.ok(failing[0].fix, 'a failing check names its fix');
      assert.equal(out.alert, 'sent');
      assert.equal(discord.messages.length, 1);
      const embed = discord.messages[0].body.embeds[0];
      assert.equal(embed.title, 'doctor: 1 check failing');
      assert.equal(embed.fields[0].name, `✗ ${name}`);
      assert.match(embed.fields[0].value, /\nfix: /);
      // Logged at error level too (journald -p err shows it).
      assert.match(ran.stderr, new RegExp(`"level":50[^\\n]*"check":"${name}"`));
    });
  }

  test('NIGHTSHIFT_WEBHOOK_URL, when set, is checked without a post: a URL passes, anything else fails naming the env file', async (t) => {
    const ws = healthy(t);
    ws.env.NIGHTSHIFT_WEBHOOK_URL = 'ntfy.sh/no-scheme-topic';
    const bad = await doctor(ws);
    const check = bad.out.checks.find((c: any) => c.name === 'webhook');
    assert.equal(check?.status, 'fail', bad.ran.stdout);
    assert.match(check.fix, /nightshift\.env/);
    assert.ok(!bad.ran.stdout.includes('no-scheme-topic'), 'the value is never printed');
    ws.env.NIGHTSHIFT_WEBHOOK_URL = 'https://ntfy.sh/some-topic';
    const good = await doctor(ws);
    const names = good.out.checks.map((c: any) => c.name);
    assert.equal(names[names.indexOf('discord') + 1], 'webhook');
    assert.equal(good.out.checks.find((c: any) => c.name === 'webhook').status, 'ok');
  });

  test('an unreachable Discord fails the discord check; the alert waits in the outbox and goes with the next start', async (t) => {
    const ws = healthy(t);
    discord.messages.length = 0;
    await discord.down();
    let first;
    try {
      first = await doctor(ws, ['--alert']);
    } finally {
      await discord.up();
    }
    assert.equal(first.ran.code, 1);
    assert.deepEqual(first.out.checks.filter((c: any) => c.status === 'fail').map((c: any) => c.name), ['discord']);
    assert.match(first.out.alert, /^queued/);
    const box = Outbox.open(outboxFile(ws.state));
    assert.deepEqual(box.rows().map((r) => [r.kind, r.state]), [['doctor', 'queued']]);
    box.close();
    // The next start (here: doctor again) sends it first.
    const second = await doctor(ws);
    assert.equal(second.ran.code, 0);
    assert.equal(discord.messages.length, 1);
    assert.match(discord.messages[0].body.embeds[0].fields[0].name, /✗ discord/);
  });

  test('with broken YAML, the checks that need the config are skipped, not failed from the defaults', async (t) => {
    const ws = healthy(t);
    fs.writeFileSync(ws.config, `${yaml()}budget:\n  max_usd_per_day: [1\n`);
    const { ran, out } = await doctor(ws);
    assert.equal(ran.code, 1);
    assert.deepEqual(out.checks.filter((c: any) => c.status === 'fail').map((c: any) => c.name), ['config'], JSON.stringify(out.checks, null, 1));
    assert.match(out.checks[0].detail, /the checks that need the config are skipped/);
    const skipped = out.checks.filter((c: any) => c.status === 'skip');
    assert.deepEqual(skipped.map((c: any) => c.name), [...NEEDS_CONFIG]);
    for (const c of skipped) assert.equal(c.detail, 'skipped: config unreadable');
    const text = await nightshift(['doctor'], ws.env, ws.dir);
    assert.match(text.stdout, /^skip {2}remote|^skip {2}vault/m);
    assert.doesNotMatch(text.stdout, /^FAIL {2}(vault|remote|discord)/m);
  });

  test('a missing config is reported, not fatal', async (t) => {
    const ws = healthy(t);
    fs.rmSync(ws.config);
    const { ran, out } = await doctor(ws);
    assert.equal(ran.code, 1);
    assert.equal(out.checks[0].name, 'config');
    assert.equal(out.checks[0].status, 'fail');
    assert.match(out.checks[0].detail, /file not found/);
  });
});

describe('doctor shows each agent\'s network', () => {
  test('one line per agent with a network, a warning for open, nothing for none', () => {
    const agents = [
      { name: 'gardener', network: 'none' as const, file: '/p/gardener.md' },
      { name: 'fetcher', network: ['api.github.com', '*.wikipedia.org'], file: '/p/fetcher.md' },
      { name: 'roamer', network: 'open' as const, file: '/p/roamer.md' },
    ];
    const checks = networkChecks(agents, 'bwrap');
    assert.deepEqual(checks.map((c) => [c.status, c.detail.split(':')[0]]), [['ok', 'fetcher'], ['warn', 'roamer']]);
    assert.match(checks[0].detail, /api\.github\.com, \*\.wikipedia\.org/);
    assert.match(checks[1].detail, /open: any public host/);
    assert.match(checks[1].fix!, /network: \[api\.example\.com\] in \/p\/roamer\.md/);
    assert.equal(networkChecks(agents, 'none')[0].status, 'warn', 'unwalled, a list is only advice');
  });
});
