// The operator's day (issue 29, points 4, 5, 6, 9 and 11), driven as an operator drives them:
// the failure path reports even with a loose env file, init's advice for a folder it cannot make,
// root's unwalled bypassPermissions refused before the charge, `next`/`status` with the day's cap
// reached, and an empty remote named by init and doctor. No session reaches a CLI here.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ledger } from '../../../budget/ledger.js';
import { startFakeDiscord, type FakeDiscord } from '../../fake-discord.js';
import { configYaml, nightshift, ROOT, tempDir, workspace, writeAgent } from '../../helpers.js';
import { git } from '../../git-helpers.js';

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');

describe('alert, the OnFailure= unit', () => {
  let discord: FakeDiscord;
  before(async () => {
    discord = await startFakeDiscord();
  });
  after(() => discord.close());

  test('with a 0644 env file and its variables in the environment (as systemd gives them), warns and sends', async (t) => {
    // A timeout well above a busy machine's post: the test is about the env file, not the clock.
    const ws = workspace(t, 'http://127.0.0.1:9', configYaml({ discord: { api_base: discord.apiBase, timeout: '20s' } }));
    const envFile = path.join(ws.dir, 'nightshift.env');
    fs.writeFileSync(envFile, `DISCORD_WEBHOOK_URL=${discord.webhookUrl}\nANTHROPIC_API_KEY=sk-test-loose\n`, { mode: 0o644 });
    fs.chmodSync(envFile, 0o644);
    const env = { ...ws.env, DISCORD_WEBHOOK_URL: discord.webhookUrl, MONITOR_SERVICE_RESULT: 'exit-code', MONITOR_EXIT_STATUS: '1', MONITOR_INVOCATION_ID: 'loose-env-1' };
    const seen = discord.messages.length;
    const ran = await nightshift(['alert', '--unit', 'nightshift.service'], env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /alert for nightshift\.service: sent/);
    assert.match(ran.stderr, /nightshift\.env: its mode 0644 lets its group or others read the secrets in it .*chmod 600 .*\(alert sends anyway/);
    assert.ok(!ran.stderr.includes('sk-test-loose'), 'no secret in the warning');
    assert.equal(discord.messages.length, seen + 1);
    // Negative control: every other command still refuses the file.
    const status = await nightshift(['status'], env, ws.dir);
    assert.equal(status.code, 78, status.stderr);
    assert.match(status.stderr, /Refused env file/);
  });
});

test('init into a folder the user cannot make: exit 77 (in the table) and `install -d -o USER DIR`, never a chown -R of the system\'s folder', { skip: isRoot ? false : 'needs root to run init as another user' }, (t) => {
  const dir = tempDir(t);
  fs.chmodSync(dir, 0o755);
  // Like /srv: root's, 0755.
  const srv = path.join(dir, 'srv');
  fs.mkdirSync(srv, { mode: 0o755 });
  const site = path.join(srv, 'nightshift');
  const r = spawnSync(process.execPath, [BIN, 'init', site], { encoding: 'utf8', cwd: '/', uid: NOBODY, gid: NOBODY, env: { PATH: process.env.PATH, HOME: '/nonexistent' } });
  assert.equal(r.status, 77, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, new RegExp(`cannot write the site folder ${srv} \\(for ${site}\\), owned by root \\(uid 0\\) with mode 0755\\. Fix: sudo install -d -o nobody ${site}`));
  assert.doesNotMatch(r.stderr, /chown/);
  assert.equal(fs.existsSync(site), false);
  // The advice works: made as root for nobody, init as nobody then succeeds.
  assert.equal(spawnSync('install', ['-d', '-o', 'nobody', site]).status, 0);
  const again = spawnSync(process.execPath, [BIN, 'init', site], { encoding: 'utf8', cwd: '/', uid: NOBODY, gid: NOBODY, env: { PATH: process.env.PATH, HOME: '/nonexistent' } });
  assert.equal(again.status, 0, again.stderr);
  assert.ok(fs.existsSync(path.join(site, 'nightshift.yaml')));
  // The exit-code table (docs/exit-codes.md) names 77 for it.
  assert.match(fs.readFileSync(path.join(ROOT, 'docs', 'exit-codes.md'), 'utf8'), /^\| 77 \| permission: .*`sudo install -d -o USER DIR`/m);
});

test('root, unwalled, bypassPermissions and no allowed_tools: `run` is refused before the charge (78) with doctor\'s fix', { skip: isRoot ? false : 'the CLI refuses bypassPermissions only as root' }, async (t) => {
  // The command is never started: a file that would fail loudly if it were.
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml({ top: 'sandbox: none\n', claude: { command: '/nonexistent/claude' } }));
  fs.writeFileSync(path.join(ws.prompts, 'free.md'), 'Do the thing.\n');
  const r = await nightshift(['run', 'free'], ws.env, ws.dir);
  assert.equal(r.code, 78, r.stderr);
  assert.match(r.stderr, /claude\.permission_mode: running as root with claude\.permission_mode bypassPermissions, which the CLI refuses as root; agents without allowed_tools: free; fix: run as the service user/);
  const ledger = path.join(ws.state, 'ledger.db');
  if (fs.existsSync(ledger)) {
    const l = Ledger.open(ledger);
    assert.equal(l.recent(5).length, 0, 'nothing charged');
    l.close();
  }
  // Negative control: with allowed_tools the same agent passes the check and reaches the spawn
  // (which fails: the command does not exist), charged and recorded.
  writeAgent(ws, 'listed', 'Do the thing.', { allowed_tools: ['Read'] });
  const listed = await nightshift(['run', 'listed', '--json'], ws.env, ws.dir);
  assert.equal(JSON.parse(listed.stdout).outcome, 'spawn_failed', listed.stderr);
});

test('`next` and `status` with the day\'s cap reached: nothing starts now, the agent runs tomorrow', async (t) => {
  const ws = workspace(t, 'http://127.0.0.1:9', `${configYaml({ budget: { max_sessions_per_day: 1 } })}dispatch:\n  - agent: gardener\n`);
  writeAgent(ws, 'gardener', 'tend');
  fs.mkdirSync(ws.state);
  const now = new Date();
  const day = now.toISOString().slice(0, 10);
  const l = Ledger.open(path.join(ws.state, 'ledger.db'));
  const open = { id: 'S1', agent: 'gardener', day, started_at: now.toISOString(), transcript: null, model: null, supervisor_pid: null, supervisor_start: null } as any;
  l.open(open);
  l.settle(open, { outcome: 'ok', ended_at: now.toISOString(), duration_ms: 1000, cost_usd: 0.1, turns: 1, exit_code: 0, result: 'ok', error: null, input_tokens: 1, output_tokens: 1, cost_estimated: false });
  l.close();
  // The default timer ticks at each hour's start: the tick of this hour, the same budget day.
  const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000).toISOString();
  const next = await nightshift(['next', '--at', hour], ws.env, ws.dir);
  assert.equal(next.code, 0, next.stderr);
  assert.match(next.stdout, /^next: nothing \(rule 0 \(gardener\) is due, but nothing starts: budget\.max_sessions_per_day reached: 1 of 1 sessions today\)$/m);
  assert.match(next.stdout, new RegExp(`^  gardener +${new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)} 00:00 UTC \\(in `, 'm'), 'the one time form: local, with its zone label');
  assert.doesNotMatch(next.stdout, / now$/m);
  const json = JSON.parse((await nightshift(['next', '--json', '--at', hour], ws.env, ws.dir)).stdout);
  assert.equal(json.starts, false);
  assert.equal(json.next_due.gardener, new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString());
  const status = await nightshift(['status'], ws.env, ws.dir);
  // status speaks of the next tick from now: after 23:00 UTC that is tomorrow's first, which starts it.
  const nextTick = new Date(Math.ceil(now.getTime() / 3_600_000) * 3_600_000);
  if (nextTick.toISOString().slice(0, 10) === day) assert.match(status.stdout, /^next +nothing \(rule 0 \(gardener\) is due, but nothing starts: budget\.max_sessions_per_day reached/m);
  else assert.match(status.stdout, /^next +gardener \(rule 0 \(gardener\) is due\)$/m);
  assert.match(status.stdout, new RegExp(`^next at +${nextTick.toISOString().slice(0, 10)} ${nextTick.toISOString().slice(11, 16)} UTC \\(OnCalendar=hourly, the default`, 'm'));
  // The tick does what next said.
  const tick = await nightshift(['tick', '--json'], ws.env, ws.dir);
  assert.match(JSON.parse(tick.stdout).reason, /budget\.max_sessions_per_day reached: 1 of 1/);
});

test('an empty remote: init --remote and doctor name the branch the first session\'s push creates', async (t) => {
  const dir = tempDir(t);
  const remote = path.join(dir, 'remote.git');
  git(dir, 'init', '--quiet', '--bare', '--initial-branch=trunk', remote);
  // The clone's unborn branch: the remote's HEAD or the cloning git's init.defaultBranch, by version.
  const env = { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_GLOBAL: path.join(dir, 'gitconfig'), GIT_CONFIG_NOSYSTEM: '1' };
  fs.writeFileSync(env.GIT_CONFIG_GLOBAL, '[init]\n\tdefaultBranch = nightly\n');
  const site = path.join(dir, 'site');
  const init = await nightshift(['init', site, '--remote', remote], env, dir);
  assert.equal(init.code, 0, init.stderr);
  const branch = git(path.join(site, 'vault'), 'symbolic-ref', '--short', 'HEAD');
  assert.ok(['trunk', 'nightly'].includes(branch), branch);
  assert.match(init.stdout, new RegExp(`note: ${remote} is empty: the first session's push creates branch \`${branch}\` there`));
  const doctor = await nightshift(['doctor', '--json'], { ...env, NIGHTSHIFT_CONFIG: path.join(site, 'nightshift.yaml') }, site);
  const check = JSON.parse(doctor.stdout).checks.find((c: any) => c.name === 'remote');
  assert.ok(check.detail.startsWith(`origin reachable and empty: the first session's push creates branch \`${branch}\` (the vault's HEAD; set git.branch`), check.detail);
  // Negative control: a remote with a branch draws no such note.
  const full = path.join(dir, 'full.git');
  git(dir, 'clone', '--quiet', remote, path.join(dir, 'seed'));
  fs.writeFileSync(path.join(dir, 'seed', 'a.md'), 'a\n');
  git(path.join(dir, 'seed'), 'add', '.');
  git(path.join(dir, 'seed'), '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'seed');
  git(path.join(dir, 'seed'), 'push', '--quiet', remote, 'HEAD:refs/heads/trunk');
  git(dir, 'clone', '--quiet', '--bare', remote, full);
  const other = await nightshift(['init', path.join(dir, 'site2'), '--remote', full], env, dir);
  assert.equal(other.code, 0, other.stderr);
  assert.doesNotMatch(other.stdout, /is empty/);
});

test('status: one time form with its zone, "12m ago" not "0h ago", "1 turn", cents, aligned columns', async (t) => {
  const { Ledger } = await import('../../../budget/ledger.js');
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml({ budget: { timezone: 'Europe/Berlin' } }));
  writeAgent(ws, 'gardener', 'SCENARIO=text');
  const started = new Date(Date.now() - 13 * 60_000);
  const l = Ledger.open(path.join(ws.state, 'ledger.db'));
  for (const [id, turns, cost] of [['s-one', 1, 0.0135], ['s-two', 12, 1.5]] as const) {
    const open = { id, agent: 'gardener', day: started.toISOString().slice(0, 10), started_at: started.toISOString(), transcript: null, model: 'sonnet', supervisor_pid: null, supervisor_start: null };
    l.open(open);
    l.settle(open, { outcome: 'ok', ended_at: new Date(started.getTime() + 60_000).toISOString(), duration_ms: 60_000, cost_usd: cost, cost_estimated: false, turns, exit_code: 0, result: null, error: null, input_tokens: 0, output_tokens: 0 });
  }
  l.close();
  const r = await (await import('../../helpers.js')).nightshift(['status'], ws.env, ws.dir);
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout;
  assert.match(out, /^last ok +12m \d\ds ago \(\d{4}-\d\d-\d\d \d\d:\d\d (CET|CEST|GMT\+1|GMT\+2)\)$/m, out);
  assert.doesNotMatch(out, /\b0h ago|\d{4}-\d\d-\d\dT\d\d:/, 'no hours rounded to 0, no ISO instant');
  assert.match(out, /\$\d+\.\d\d of \$20\.00/, 'the day in cents beside the limit');
  assert.doesNotMatch(out, /\$\d+\.\d{3}/, 'never four places');
  assert.match(out, / 1 turn /);
  assert.match(out, / 12 turns /);
  // Aligned: every value of the top block starts at one column.
  const top = out.split('\n\n')[0].split('\n');
  assert.equal(new Set(top.map((line) => /^\S+(?: \S+)? +/.exec(line)![0].length)).size, 1, out);
  const rows = out.split('\n').filter((line) => /s-(one|two)/.test(line));
  assert.equal(new Set(rows.map((line) => line.indexOf('s-'))).size, 1, out);
});
