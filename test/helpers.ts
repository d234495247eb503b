// Shared test helpers: a temp dir per test with cleanup, the real CLI's path, a workspace with a
// vault, agents and a config, and a way to run the built nightshift binary.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { Outbox, outboxFile } from '../report/outbox.js';
import { startFakeApi, TEST_API_KEY, type FakeApi } from './fake-api.js';
import { passwdEntry, useraddCommand } from '../core/passwd.js';
import { blockedAbove, DEFAULT_SESSION_USER, vaultFix, type SessionUser } from '../config/session-user.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');
// The real CLI the tests run: the pinned one, or NIGHTSHIFT_TEST_CLAUDE (npm run compat's). From a
// clone under /tmp, /var/tmp or /dev/shm, or behind a folder other users cannot pass (a clone in
// root's 0700 home), it is a copy under /opt: the wall hides /tmp and /dev/shm from a session, the
// units /tmp and /var/tmp, bwrap started as the session user cannot reach into /root, and
// `systemd install` and the session's checks rightly refuse such a CLI.
export const PINNED_CLAUDE = path.join(ROOT, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
export const HIDDEN_FROM_UNITS = /^\/(var\/tmp|tmp|dev\/shm)(\/|$)/;
// Where reachableCli keeps its copies; a cache like CI's Node under /opt, one file per CLI build.
export const TEST_CLI_CACHE = '/opt/nightshift-test-cli';
export const CLAUDE = reachableCli(process.env.NIGHTSHIFT_TEST_CLAUDE || PINNED_CLAUDE);

// The first folder above `real` that a user who is neither its owner nor in its group cannot pass.
export function closedToOthers(real: string): string | null {
  const b = blockedAbove(real, { name: 'others', uid: -1, gid: -1 });
  return b ? b.dir : null;
}

export function reachableCli(cli: string, cache = TEST_CLI_CACHE): string {
  let real: string;
  try {
    real = fs.realpathSync(cli);
  } catch {
    return cli; // missing: the tests that run it say so
  }
  // NIGHTSHIFT_TEST_CLI_COPY=0: the CLI as it is (the first-run test's control).
  if (process.env.NIGHTSHIFT_TEST_CLI_COPY === '0' || (!HIDDEN_FROM_UNITS.test(real) && !closedToOthers(real))) return cli;
  const st = fs.statSync(real);
  const dir = path.join(cache, `${st.size}-${Math.floor(st.mtimeMs)}`);
  const copy = path.join(dir, 'claude');
  if (fs.statSync(copy, { throwIfNoEntry: false })?.size === st.size) return copy;
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  fs.chmodSync(cache, 0o755);
  fs.chmodSync(dir, 0o755);
  // A link where the file system allows one; a rename puts it in place whole (test files run in parallel).
  const part = `${copy}.${process.pid}`;
  try {
    fs.linkSync(real, part);
  } catch {
    fs.copyFileSync(real, part);
  }
  fs.chmodSync(part, 0o755);
  fs.renameSync(part, copy);
  return copy;
}
// This shell's PATH without any folder that holds a `claude` (npm test puts node_modules/.bin first):
// what a machine without the CLI on its PATH would have.
export const PATH_WITHOUT_CLAUDE = (process.env.PATH ?? '').split(':').filter((d) => d && !fs.existsSync(path.join(d, 'claude'))).join(':');
export const FIXTURES = path.join(ROOT, 'test', 'fixtures');

export function tempDir(t: TestContext | null, prefix = 'nightshift-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t?.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Run as root (CI is), walled sessions run as session_user: made here where missing, as `systemd
// install` would. Files the tests write keep group write (umask 002) and each vault is given to
// that user's group, the way an operator does it once (vaultFix).
// `made`: the command that made it, this time (the demo says so).
function testSessionUser(): { user: SessionUser | null; made: string | null } {
  if (process.getuid?.() !== 0) return { user: null, made: null };
  const there = passwdEntry(DEFAULT_SESSION_USER);
  if (there) return { user: there, made: null };
  const cmd = useraddCommand(DEFAULT_SESSION_USER);
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cannot make the session user for the tests: ${r.stderr}`);
  return { user: passwdEntry(DEFAULT_SESSION_USER), made: cmd };
}
const sessionUser = testSessionUser();
export const SESSION_USER = sessionUser.user;
export const SESSION_USER_MADE = sessionUser.made;
if (SESSION_USER) process.umask(0o002);

// The vault (or an extra dir) writable by the session user, when there is one.
export function shareWithSession(dir: string): void {
  if (!SESSION_USER) return;
  const r = spawnSync('sh', ['-c', vaultFix(dir, SESSION_USER)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cannot give ${dir} to ${SESSION_USER.name}: ${r.stderr}`);
}

export type Workspace = { dir: string; vault: string; prompts: string; config: string; logs: string; state: string; env: NodeJS.ProcessEnv };

// Discord for tests that do not test it: a closed loopback port (refused at once), never discord.com.
const DISCORD_OFFLINE = { api_base: 'http://127.0.0.1:9/api', timeout: '2s' };

// YAML for a test config: the real CLI, short limits, explicit overrides merged in.
// Whether bwrap makes a sandbox here. Under CI it must: .ci/run installs bubblewrap.
function bwrapWorks(): boolean {
  const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', '--', 'true'], { stdio: 'ignore', timeout: 10_000 });
  return r.status === 0;
}
export const BWRAP = bwrapWorks();
if (!BWRAP && process.env.CI === 'true') throw new Error('CI=true but bwrap cannot make a sandbox here: the sandbox tests must run under CI');
// Sessions in tests run sandboxed wherever bwrap works; elsewhere unwalled, and the tests that are
// about the wall skip with this reason.
export const SANDBOX = BWRAP ? 'bwrap' : 'none';
export const NEEDS_BWRAP: string | false = BWRAP ? false : 'bubblewrap cannot make a sandbox here (apt-get install bubblewrap)';

// The line configYaml gives a workspace whose vault is no repository (makeRepos replaces it).
export const GIT_OFF = 'git:\n  enabled: false # the test workspace\'s vault is no repository\n';

export function configYaml(extra: { claude?: Record<string, unknown>; budget?: Record<string, unknown>; loop?: Record<string, unknown>; discord?: Record<string, unknown>; top?: string } = {}): string {
  const claude = { command: CLAUDE, model: 'sonnet', max_turns: 10, timeout: '60s', idle_timeout: '30s', kill_grace: '3s', ...extra.claude };
  const block = (name: string, o: Record<string, unknown> | undefined) =>
    o ? `${name}:\n${Object.entries(o).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`).join('\n')}\n` : '';
  const sandbox = /^sandbox:/m.test(extra.top ?? '') ? '' : `sandbox: ${SANDBOX}\n`;
  // A workspace's vault is no repository, which git.enabled refuses (run exits 78): git is off
  // unless the test says otherwise; makeRepos (git-helpers.ts) turns it on with the clone it makes.
  const git = /^git:/m.test(extra.top ?? '') ? '' : GIT_OFF;
  return `${extra.top ?? ''}${sandbox}${git}vault: ./vault\nstate_dir: ./state\nlog_dir: ./logs\nagents_dir: ./prompts\n${block('claude', claude)}${block('budget', extra.budget)}${block('loop', extra.loop)}${block('discord', { ...DISCORD_OFFLINE, ...extra.discord })}`;
}

export function writeAgent(ws: Workspace, name: string, prompt: string, front: Record<string, unknown> = {}): void {
  const fm = { allowed_tools: ['Bash(echo:*)'], ...front };
  const yaml = Object.entries(fm).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n');
  fs.writeFileSync(path.join(ws.prompts, `${name}.md`), `---\n${yaml}\n---\n${prompt}\n`);
}

// A workspace whose sessions talk to the fake API at `apiUrl`. `base`: a folder other than the
// temp dir (the wall's tests want one outside the session's private /tmp); `share: false` leaves the
// vault for the caller to give the session user (makeRepos clones into it).
export function workspace(t: TestContext, apiUrl: string, yaml = configYaml(), o: { base?: string; prefix?: string; share?: boolean } = {}): Workspace {
  const dir = o.base ? fs.mkdtempSync(path.join(o.base, o.prefix ?? 'nightshift-')) : tempDir(t, o.prefix);
  if (o.base) t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const ws: Workspace = {
    dir,
    vault: path.join(dir, 'vault'),
    prompts: path.join(dir, 'prompts'),
    config: path.join(dir, 'nightshift.yaml'),
    logs: path.join(dir, 'logs'),
    state: path.join(dir, 'state'),
    env: claudeTestEnv(dir, apiUrl),
  };
  fs.mkdirSync(ws.vault);
  // The session user passes through the workspace (never lists it) to the vault.
  if (SESSION_USER) fs.chmodSync(dir, 0o711);
  if (o.share !== false) shareWithSession(ws.vault);
  fs.mkdirSync(ws.prompts);
  fs.writeFileSync(ws.config, yaml);
  return ws;
}

// The environment the real CLI needs to run offline against the imitation, isolated per test.
export function claudeTestEnv(dir: string, apiUrl: string): NodeJS.ProcessEnv {
  const home = path.join(dir, 'home');
  fs.mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: apiUrl,
    // The key the fake API accepts (the supervisor's real key: its proxy puts it back upstream).
    ANTHROPIC_API_KEY: TEST_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    API_TIMEOUT_MS: '20000',
    NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml'),
  };
  return env;
}

export type Ran = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

// Starts the built binary; `done` resolves when it exits. With a test context, a child still
// running when the test ends (it failed early) is killed, so it cannot hold the suite open.
export function startNightshift(args: string[], env: NodeJS.ProcessEnv, cwd: string, t?: TestContext): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, [BIN, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  t?.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  const done = new Promise<Ran>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export async function nightshift(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Ran> {
  const ran = await startNightshift(args, env, cwd).done;
  // Node warnings fail the tests.
  if (/\(node:\d+\) \w*Warning/.test(ran.stderr)) throw new Error(`node warning in nightshift's stderr:\n${ran.stderr}`);
  return ran;
}

export async function runJson(ws: Workspace, agent: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<{ ran: Ran; record: any }> {
  const ran = await nightshift(['run', agent, '--json', ...extraArgs], { ...ws.env, ...env }, ws.dir);
  let record: any = null;
  try {
    record = JSON.parse(ran.stdout);
  } catch {
    throw new Error(`run --json printed no JSON (exit ${ran.code}):\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`);
  }
  return { ran, record };
}

export async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Live (non-zombie) processes whose command line contains `needle`.
export function processesMatching(needle: string): Array<{ pid: number; state: string; cmdline: string }> {
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (cmdline.includes(needle) && Number(name) !== process.pid) out.push({ pid: Number(name), state, cmdline });
    } catch {
      // gone
    }
  }
  return out;
}

// Zombies whose parent is this test process or one of its descendants.
export function zombiesUnder(root: number): number[] {
  const procs: Array<{ pid: number; ppid: number; state: string }> = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.push({ pid: Number(name), ppid: Number(rest[1]), state: rest[0] });
    } catch {
      // gone
    }
  }
  const under = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) if (under.has(p.ppid) && !under.has(p.pid)) (under.add(p.pid), (grew = true));
  }
  return procs.filter((p) => p.state === 'Z' && under.has(p.ppid)).map((p) => p.pid);
}

// The imitation API for one test file: started before its tests, closed after them. The returned
// object forwards to the running server. `keys`: the credentials it accepts (TEST_API_KEY).
export function fakeApiPerFile(o: { keys?: string[] } = {}): FakeApi {
  let api: FakeApi | null = null;
  before(async () => {
    api = await startFakeApi(o);
  });
  after(async () => {
    await api?.close();
  });
  return new Proxy({} as FakeApi, { get: (_, key) => (api as unknown as Record<PropertyKey, unknown>)[key] });
}

// A loopback HTTP endpoint for one test file that keeps each request it is sent (a webhook, an
// ntfy topic) and answers 200 with `reply`. `base` is its URL once started; empty `got` between tests.
export type Received = { url: string; headers: http.IncomingHttpHeaders; body: string; bytes: Buffer };
// `strictJson`: a post sent as application/json that is not UTF-8 JSON is answered 400 (as a JSON
// webhook's server would) and kept in `refused`, not in `got`.
export function recorderPerFile(reply = 'ok', opts: { strictJson?: boolean } = {}): { got: Received[]; refused: Received[]; readonly base: string } {
  const refused: Received[] = [];
  const got: Received[] = [];
  let server: http.Server | null = null;
  let base = '';
  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const r = { url: req.url!, headers: req.headers, body: bytes.toString('utf8'), bytes };
        if (opts.strictJson && /^application\/json/.test(req.headers['content-type'] ?? '')) {
          try {
            JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
          } catch (err) {
            refused.push(r);
            return void res.writeHead(400).end(JSON.stringify({ error: `invalid JSON: ${(err as Error).message}` }));
          }
        }
        got.push(r);
        res.writeHead(200).end(reply);
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));
  return { got, refused, get base() { return base; } };
}

// `nightshift run` with the egress proxy's resolver injected (the test-only fixture
// run-with-egress-net.mjs): `names` answer the proxy's lookups, every connection goes to `redirect`.
export function runWithEgressNet(ws: Workspace, agent: string, names: Record<string, string[]>, redirect: number): Promise<{ code: number | null; stdout: string; stderr: string; record: any }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [path.join(FIXTURES, 'run-with-egress-net.mjs'), ws.config, agent, JSON.stringify(names), String(redirect)], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d));
    c.stderr.on('data', (d: Buffer) => (stderr += d));
    c.on('close', (code) => {
      let record = null;
      try {
        record = JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null');
      } catch {
        // printed none
      }
      resolve({ code, stdout, stderr, record });
    });
  });
}

// The outbox's rows, read as another process would.
export function outboxRows(stateDir: string) {
  const box = Outbox.open(outboxFile(stateDir));
  try {
    return box.rows();
  } finally {
    box.close();
  }
}

// Reads a workspace's ledger directly, read-only, as another process would.
function readLedger<T>(dir: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path.join(dir, 'state', 'ledger.db'), { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export const ledgerRows = (dir: string): any[] => readLedger(dir, (db) => db.prepare('SELECT * FROM sessions ORDER BY started_at').all());
// A racer fixture (test/fixtures/*-racer.mjs) run to its end: the JSON it printed, or a rejection
// with its stderr (`n` names it).
export function racer(fixture: string, args: string[], n: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [path.join(FIXTURES, fixture), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout!.on('data', (d) => (out += d));
    c.stderr!.on('data', (d) => (err += d));
    c.on('error', reject);
    c.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`racer ${n} exited ${code}: ${err}`))));
  });
}

// Sessions the ledger shows running now; 0 while the ledger is still being made (a start's first looks).
export function runningSessions(dir: string): number {
  try {
    return ledgerRows(dir).filter((r) => r.status === 'running').length;
  } catch {
    return 0;
  }
}
export const ledgerIntegrity = (dir: string): string => readLedger(dir, (db) => String(db.pragma('integrity_check', { simple: true })));

// The most sessions whose lifetimes (started_at .. ended_at in the ledger) overlap at one moment.
export function mostAtOnce(rows: Array<{ started_at: string; ended_at: string }>): number {
  const edges = rows.flatMap((r) => [[Date.parse(r.started_at), 1], [Date.parse(r.ended_at), -1]] as Array<[number, number]>);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (now += d));
  return most;
}
