// An operator's install, as docs/install-and-upgrade.md does it: `npm pack` (which builds),
// `npm install -g` of the tarball into a prefix, then the installed `nightshift` on PATH runs a
// real session (the real Claude Code CLI against the loopback API) and renders units pointing at
// itself. The pack happens in a copy of the tree, so its clean build never touches this dist/.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLAUDE, configYaml, fakeApiPerFile, ROOT, SESSION_USER, shareWithSession, tempDir, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

// Never spawnSync here: the loopback API runs in this process and must keep answering.
function sh(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', timeout: opts.timeout ?? 60_000, cwd: opts.cwd, env: opts.env ?? process.env, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr: `${stderr}${err && typeof err.code !== 'number' ? `\n${err.message}` : ''}` }));
  });
}

// The files a clean clone has, minus what the pack must make itself; node_modules is linked, so
// the pack's build uses the tree's own TypeScript.
function copyTree(to: string): void {
  fs.mkdirSync(to);
  for (const e of fs.readdirSync(ROOT)) {
    if (['node_modules', 'dist', '.git'].includes(e)) continue;
    fs.cpSync(path.join(ROOT, e), path.join(to, e), { recursive: true });
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(to, 'node_modules'));
}

describe('operator install: npm pack, npm install -g, nightshift on PATH', () => {
  let dir = '';
  let tarball = '';
  let prefix = '';
  let env: NodeJS.ProcessEnv = {};
  const installed = () => path.join(prefix, 'lib', 'node_modules', pkg.name);
  after(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  before(async () => {
    dir = tempDir(null, 'nightshift-install-');
    copyTree(path.join(dir, 'src'));
    const packed = await sh('npm', ['pack', '--pack-destination', dir], { cwd: path.join(dir, 'src'), timeout: 300_000 });
    assert.equal(packed.code, 0, `npm pack:\n${packed.stdout}\n${packed.stderr}`);
    tarball = path.join(dir, packed.stdout.trim().split('\n').at(-1)!);
    prefix = path.join(dir, 'prefix');
    // Dependencies come from the registry (better-sqlite3 builds from source here); none of the
    // tree's node_modules is used. The bound is for a hung install, not a speed: compiling
    // SQLite on two busy cores has taken over ten minutes.
    const inst = await sh('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: dir, timeout: 1_500_000 });
    assert.equal(inst.code, 0, `npm install -g:\n${inst.stdout}\n${inst.stderr}`);
    env = { PATH: `${path.join(prefix, 'bin')}:${process.env.PATH}` };
  });

  test('the tarball holds the built runtime with a runnable bin, and no tests, benches or sources', async () => {
    const list = await sh('tar', ['-tvzf', tarball], { cwd: dir });
    assert.equal(list.code, 0, list.stderr);
    const files = list.stdout.trim().split('\n').map((l) => ({ mode: l.split(/\s+/)[0], name: l.split(/\s+/).at(-1)! }));
    const names = files.map((f) => f.name);
    const bin = files.find((f) => f.name === `package/${pkg.bin.nightshift}`);
    assert.ok(bin, `${pkg.bin.nightshift} missing from ${names.join(' ')}`);
    assert.match(bin.mode, /^-rwx/, 'the bin has its run bit');
    assert.match(fs.readFileSync(path.join(installed(), pkg.bin.nightshift), 'utf8'), /^#!\/usr\/bin\/env -S node --min-semi-space-size=32\n/);
    for (const need of ['package/package.json', 'package/README.md', 'package/docs/install-and-upgrade.md', 'package/docs/nightshift.schema.json', 'package/deploy/systemd/nightshift.service', 'package/deploy/systemd/nightshift-watch.timer', 'package/dist/cli/main.js', 'package/dist/memory/mcp/server.js']) {
      assert.ok(names.includes(need), `${need} missing`);
    }
    const stray = names.filter((n) => /^package\/(dist\/(test|bench)\/|test\/|bench\/|node_modules\/)|\.ts$|\.map$|tsconfig/.test(n));
    assert.deepEqual(stray, []);
  });

  test('docs/install-and-upgrade.md states the tarball\'s size as npm pack makes it', () => {
    const said = /install of the ([\d.]+) MB tarball/.exec(fs.readFileSync(path.join(ROOT, 'docs', 'install-and-upgrade.md'), 'utf8'));
    assert.ok(said, 'docs/install-and-upgrade.md names the tarball size');
    const mb = fs.statSync(tarball).size / 1e6;
    assert.ok(Math.abs(mb - Number(said[1])) <= 0.15 * mb, `docs/install-and-upgrade.md says ${said[1]} MB, the tarball is ${mb.toFixed(2)} MB`);
  });

  test('the installed rehearse --serve serves the API imitation (nothing it needs is left in test/)', async () => {
    const child = execFile(path.join(prefix, 'bin', 'nightshift'), ['rehearse', '--serve'], { env });
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    const end = Date.now() + 20_000;
    while (!/^ANTHROPIC_API_KEY=/m.test(out) && Date.now() < end && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
    const url = /^ANTHROPIC_BASE_URL=(\S+)$/m.exec(out)?.[1];
    const key = /^ANTHROPIC_API_KEY=(\S+)$/m.exec(out)?.[1];
    assert.ok(url && key, out);
    const r = await fetch(`${url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'x-api-key': key!, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: '{"model":"m","messages":[]}' });
    assert.equal(r.status, 200);
    child.kill('SIGINT');
    await new Promise((r) => child.on('close', r));
  });

  test('the install holds runtime dependencies only', async () => {
    const has = (name: string) => fs.existsSync(path.join(installed(), 'node_modules', name));
    for (const dev of ['typescript', '@anthropic-ai/claude-code', '@modelcontextprotocol/server-memory']) assert.ok(!has(dev), `devDependency ${dev} installed`);
    for (const dep of Object.keys(pkg.dependencies)) assert.ok(has(dep), `dependency ${dep} missing`);
    // A plain install keeps the optional features (the lighter install, docs/install-and-upgrade.md, is an opt-in).
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) assert.ok(has(dep), `optional dependency ${dep} missing`);
    // better-sqlite3's native part was built for this node.
    const r = await sh(process.execPath, ['-e', "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"], { cwd: installed() });
    assert.equal(r.code, 0, r.stderr);
  });

  test('`nightshift --help` and `--version` run from PATH', async () => {
    const help = await sh('nightshift', ['--help'], { cwd: dir, env });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: nightshift <command>/m);
    assert.equal((await sh('nightshift', ['--version'], { cwd: dir, env })).stdout.trim(), pkg.version);
  });

  test('a scripted session runs through the installed command with the real CLI', async (t) => {
    const site = tempDir(t);
    const ws: Workspace = {
      dir: site, vault: path.join(site, 'vault'), prompts: path.join(site, 'prompts'), config: path.join(site, 'nightshift.yaml'),
      logs: path.join(site, 'logs'), state: path.join(site, 'state'), env: {},
    };
    fs.mkdirSync(ws.vault);
    // Run as root, the session runs as session_user: through the site, and the vault its group's.
    if (SESSION_USER) fs.chmodSync(site, 0o711);
    shareWithSession(ws.vault);
    fs.mkdirSync(ws.prompts);
    fs.writeFileSync(ws.config, configYaml());
    writeAgent(ws, 'worker', 'SCENARIO=write FILE=made.txt CONTENT=installed', { allowed_tools: ['Bash'] });
    const home = path.join(site, 'home');
    fs.mkdirSync(home);
    const runEnv = {
      ...env, HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'), ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: 'sk-test-nightshift-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_MAX_RETRIES: '0', NIGHTSHIFT_CONFIG: ws.config,
    };
    const ran = await sh('nightshift', ['run', 'worker', '--json'], { cwd: site, env: runEnv, timeout: 120_000 });
    assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}`);
    const record = JSON.parse(ran.stdout);
    assert.equal(record.outcome, 'ok');
    assert.equal(record.turns, 2);
    assert.equal(fs.readFileSync(path.join(ws.vault, 'made.txt'), 'utf8').trim(), 'installed');
    // The session's memory server was the installed one, started by the installed bin.
    const init = JSON.parse(fs.readFileSync(record.transcript, 'utf8').split('\n')[0]);
    const memory = (init.mcp_servers ?? []).find((s: any) => s.name === 'nightshift_memory');
    // Missing from the list is the failure this checks for, not a reason to skip it.
    assert.ok(memory, `no nightshift_memory among the session's MCP servers: ${JSON.stringify(init.mcp_servers)}`);
    assert.equal(memory.status, 'connected', JSON.stringify(init.mcp_servers));
    const status = await sh('nightshift', ['sessions', '--json'], { cwd: site, env: runEnv });
    assert.equal(JSON.parse(status.stdout)[0].id, record.id);
  });

  test('`nightshift systemd install` renders units that run the installed command', async (t) => {
    const site = tempDir(t);
    fs.mkdirSync(path.join(site, 'prompts'));
    fs.writeFileSync(path.join(site, 'prompts', 'gardener.md'), 'tend\n');
    // A site under /srv (so no PrivateTmp warning) of this test's own, never the README's
    // /srv/nightshift: on a host with a real install that is a real vault (its git remote read),
    // state and logs. Staging makes none of it, so it is never made (control: /srv/nightshift is
    // there on such a host, and the first assertion fails).
    const own = `/srv/nightshift-test-${randomBytes(6).toString('hex')}`;
    assert.ok(!fs.existsSync(own), `${own} is not this test's own`);
    // The CLI by its absolute path: the units must be able to start it (install checks).
    fs.writeFileSync(path.join(site, 'nightshift.yaml'), `vault: ${own}/vault\nstate_dir: ${own}/state\nlog_dir: ${own}/logs\nclaude:\n  command: ${CLAUDE}\n`);
    const units = path.join(site, 'units');
    const ran = await sh('nightshift', ['systemd', 'install', '--prefix', units, '--user', 'root'], { cwd: site, env: { ...env, NIGHTSHIFT_CONFIG: path.join(site, 'nightshift.yaml') } });
    assert.equal(ran.code, 0, ran.stderr);
    assert.doesNotMatch(ran.stderr, /warning: (vault|state_dir|log_dir)/, 'a site under /srv draws no PrivateTmp warning');
    // The npm prefix is under /tmp here: staging warns that the units could not load it (a real
    // install refuses: test/deploy/systemd-real.test.ts).
    assert.match(ran.stderr, /warning: nightshift \S+ is under \/tmp, which the units' PrivateTmp= hides from them/);
    const service = fs.readFileSync(path.join(units, 'nightshift.service'), 'utf8');
    const bin = fs.realpathSync(path.join(prefix, 'bin', 'nightshift'));
    assert.equal(bin, path.join(installed(), 'dist', 'cli', 'bin.js'));
    assert.match(service, new RegExp(`^ExecStart=${process.execPath} --min-semi-space-size=32 ${bin} tick --config ${site}/nightshift.yaml$`, 'm'));
    assert.match(service, new RegExp(`^Documentation=file://${installed()}/README.md$`, 'm'));
    assert.ok(!fs.existsSync(own), 'staging made nothing of the site');
    assert.match(service, new RegExp(`^ReadWritePaths=.*${own}/vault`, 'm'), 'the units are for this test\'s site');
    const verify = await sh('systemd-analyze', ['verify', '--man=no', ...fs.readdirSync(units).filter((f) => /\.(service|timer)$/.test(f)).map((f) => path.join(units, f))], { cwd: units });
    assert.equal(verify.code, 0, verify.stderr);
  });
});
