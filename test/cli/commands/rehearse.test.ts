// `nightshift rehearse` (issue 35, point 7): a rehearsal runs a real session of the site's agent
// against the loopback imitation in state of its own, and leaves no trace in the real site: its
// ledger and day count, memory, log, vault and remote are as they were. The control runs the same
// agent the non-rehearsal way and shows each of those traces. A site whose env file still points
// at a rehearsal (`rehearse --serve`'s key) fails doctor and has its sessions refused.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { git, makeRepos } from '../../git-helpers.js';
import { BIN, BWRAP, configYaml, fakeApiPerFile, ledgerRows, nightshift, startNightshift, waitFor, workspace, writeAgent, type Ran, type Workspace } from '../../helpers.js';

const api = fakeApiPerFile();

const rows = (dir: string) => (fs.existsSync(path.join(dir, 'state', 'ledger.db')) ? ledgerRows(dir) : []);
const memories = (db: string) => {
  if (!fs.existsSync(db)) return [];
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare('SELECT text FROM memories').all().map((r: any) => r.text as string);
  } finally {
    d.close();
  }
};
const logFiles = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.log')) : []);
const sessionsToday = async (ws: Workspace) => JSON.parse((await nightshift(['budget', '--json'], ws.env, ws.dir)).stdout).sessions;

// What the real site holds that a session changes.
async function siteTraces(ws: Workspace, remote: string) {
  return {
    ledger: rows(ws.dir).length,
    sessions_today: await sessionsToday(ws),
    memories: memories(path.join(ws.state, 'memory.db')).length,
    logs: logFiles(ws.logs),
    vault_head: git(ws.vault, 'rev-parse', 'HEAD').trim(),
    vault_file: fs.existsSync(path.join(ws.vault, 'made.txt')),
    remote_head: git(remote, 'rev-parse', 'main').trim(),
  };
}

describe('nightshift rehearse <agent>', () => {
  test('runs a session in state of its own: the site\'s ledger, day count, memory, log, vault and remote are unchanged; the same run by `run` changes each', async (t) => {
    const ws = workspace(t, api.url, configYaml({ budget: { max_sessions_per_day: 1 } }));
    const repos = makeRepos(ws.dir, ws.vault);
    // A file written, a memory marked in the answer: what the session leaves, in a rehearsal or not.
    writeAgent(ws, 'worker', 'SCENARIO=write FILE=made.txt CONTENT=rehearsed', { allowed_tools: ['Bash'] });
    const before = await siteTraces(ws, repos.remote);
    assert.deepEqual({ ...before, vault_head: null, remote_head: null }, { ledger: 0, sessions_today: 0, memories: 0, logs: [], vault_head: null, vault_file: false, remote_head: null });
    const asked = api.requests.length;

    const ran = await nightshift(['rehearse', 'worker', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    const o = JSON.parse(ran.stdout);
    assert.equal(o.outcome, 'ok', ran.stderr);
    assert.equal(o.result, 'Wrote the file.');
    // The real site: nothing changed.
    assert.deepEqual(await siteTraces(ws, repos.remote), before);
    const site = path.join(ws.state, 'rehearsal', 'site');
    assert.deepEqual(o.rehearsal, { dir: site, state_dir: path.join(site, 'state'), log_dir: path.join(site, 'logs'), vault: path.join(site, 'vault'), remote: path.join(site, 'remote.git'), api_requests: o.rehearsal.api_requests });
    assert.ok(o.rehearsal.api_requests >= 1, 'the rehearsal\'s own imitation answered');
    assert.equal(api.requests.length, asked, 'the site\'s API (here the tests\' imitation) was never asked');

    // What the rehearsal wrote, in its own state: a ledger row, a log, the file committed and pushed to its throwaway remote.
    assert.deepEqual(rows(site).map((r) => [r.id, r.status]), [[o.id, 'settled']]);
    assert.ok(logFiles(path.join(site, 'logs')).length >= 1);
    assert.ok(memories(path.join(site, 'state', 'memory.db')).length >= 1, 'its memories are in its own store');
    assert.ok(o.transcript.startsWith(path.join(site, 'logs')), o.transcript);
    assert.equal(fs.readFileSync(path.join(site, 'vault', 'made.txt'), 'utf8').trim(), 'rehearsed');
    assert.equal(o.git.pushed, true, JSON.stringify(o.git));
    assert.equal(git(path.join(site, 'remote.git'), 'show', 'main:made.txt').trim(), 'rehearsed');

    // Control: the same agent run the non-rehearsal way leaves each trace the rehearsal did not.
    const real = await nightshift(['run', 'worker', '--json'], ws.env, ws.dir);
    assert.equal(real.code, 0, real.stderr);
    const after = await siteTraces(ws, repos.remote);
    assert.equal(after.ledger, 1);
    assert.equal(after.sessions_today, 1);
    assert.ok(after.logs.length >= 1);
    assert.equal(after.vault_file, true);
    assert.ok(after.memories > before.memories, `the session's memories are in the site's memory (${after.memories})`);
    assert.notEqual(after.remote_head, before.remote_head);
    assert.ok(api.requests.length > asked, 'the site\'s API was asked');

    // The site's day is now full (max_sessions_per_day: 1); a rehearsal counts against its own.
    assert.equal((await nightshift(['run', 'worker', '--json'], ws.env, ws.dir)).code, 75);
    const again = await nightshift(['rehearse', 'worker', '--json'], ws.env, ws.dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).outcome, 'ok');
    assert.equal(rows(site).length, 1, 'each rehearsal starts from empty state');
    assert.equal(rows(ws.dir).length, 1);
  });

  test('its session sees the real site\'s state, logs and vault no more than a real session sees its own state', async (t) => {
    // Under /srv: the wall hides all of /tmp, which would hide the site whatever the rehearsal did.
    const ws = workspace(t, api.url, configYaml(), { base: '/srv', prefix: 'rehearse-peek-' });
    // The session user passes through the site's folder, and may read what lies in it.
    fs.chmodSync(ws.dir, 0o755);
    fs.mkdirSync(ws.state, { recursive: true });
    fs.mkdirSync(ws.logs, { recursive: true });
    for (const [dir, name] of [[ws.state, 'state-marker'], [ws.logs, 'logs-marker'], [ws.vault, 'vault-marker']]) fs.writeFileSync(path.join(dir, name), 'x');
    // Readable by anyone, so that only the wall keeps them from the session.
    for (const d of [ws.state, ws.logs, ws.vault]) fs.chmodSync(d, 0o755);
    // What the session sees in each real folder, from inside the wall (`echo {a,b,c}/*`).
    writeAgent(ws, 'peeker', `SCENARIO=write FILE=seen.txt CONTENT={${ws.state},${ws.logs},${ws.vault}}/*`, { allowed_tools: ['Bash'] });
    const ran = await nightshift(['rehearse', 'peeker', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    const o = JSON.parse(ran.stdout);
    assert.ok(fs.existsSync(path.join(o.rehearsal.vault, 'seen.txt')), `${JSON.stringify(o)}\n${fs.readFileSync(o.transcript, 'utf8')}`);
    const seen = fs.readFileSync(path.join(o.rehearsal.vault, 'seen.txt'), 'utf8');
    assert.doesNotMatch(seen, /marker/, seen);
    // Control: the same listing of a folder the wall does not hide (the rehearsal's own vault) shows its file.
    writeAgent(ws, 'peeker', `SCENARIO=write FILE=seen.txt CONTENT=${o.rehearsal.vault}/*`, { allowed_tools: ['Bash'] });
    const own = await nightshift(['rehearse', 'peeker', '--json'], ws.env, ws.dir);
    assert.match(fs.readFileSync(path.join(JSON.parse(own.stdout).rehearsal.vault, 'seen.txt'), 'utf8'), /vault-marker/);
  });

  test('a vault with no git: the rehearsal writes in a copy of it, never in the vault', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: 'git:\n  enabled: false\n' }));
    fs.writeFileSync(path.join(ws.vault, 'notes.md'), 'mine\n');
    writeAgent(ws, 'worker', 'SCENARIO=write FILE=made.txt CONTENT=rehearsed', { allowed_tools: ['Bash'] });
    const ran = await nightshift(['rehearse', 'worker', '--json'], ws.env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    const o = JSON.parse(ran.stdout);
    assert.equal(o.outcome, 'ok');
    assert.equal(o.rehearsal.remote, null);
    assert.deepEqual(fs.readdirSync(ws.vault).sort(), ['notes.md'], 'the vault is as it was');
    assert.equal(fs.readFileSync(path.join(o.rehearsal.vault, 'made.txt'), 'utf8').trim(), 'rehearsed');
    assert.equal(fs.readFileSync(path.join(o.rehearsal.vault, 'notes.md'), 'utf8'), 'mine\n', 'the copy holds the vault\'s files');
    assert.deepEqual(rows(ws.dir), []);
  });

  test('refused, --json prints one object (an unknown agent; another rehearsal running)', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'worker', 'SCENARIO=text');
    const unknown = await nightshift(['rehearse', 'wroker', '--json'], ws.env, ws.dir);
    assert.equal(unknown.code, 64, unknown.stderr);
    const u = JSON.parse(unknown.stdout);
    assert.deepEqual([u.refused, u.agent, u.code, u.exit_code], [true, 'wroker', 'USAGE', 64]);
    assert.match(u.reason, /worker/, 'with its "did you mean"');
    const { acquireLock } = await import('../../../core/lock.js');
    fs.mkdirSync(path.join(ws.state, 'rehearsal'), { recursive: true });
    const held = await acquireLock(path.join(ws.state, 'rehearsal', 'rehearse'), { timeoutMs: 0, purpose: 'test' });
    assert.ok(held);
    t.after(() => held.release());
    const locked = await nightshift(['rehearse', 'worker', '--json'], ws.env, ws.dir);
    assert.equal(locked.code, 75, locked.stderr);
    const l = JSON.parse(locked.stdout);
    assert.deepEqual([l.refused, l.code, l.exit_code], [true, 'LOCKED', 75]);
    assert.match(l.reason, new RegExp(`another rehearsal of this site is running \\(pid ${process.pid} `));
  });
});

describe('a site whose env file still points at a rehearsal', () => {
  test('fails doctor with the fix, and its session is refused (78) before the charge; the same site with a real key runs', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'worker', 'SCENARIO=text');
    const served = startNightshift(['rehearse', '--serve', '--json'], { PATH: process.env.PATH }, ws.dir, t);
    let out = '';
    served.child.stdout!.on('data', (c) => (out += c));
    await waitFor(() => out.includes('\n'), 10_000, 'rehearse --serve to print its object');
    const { base_url: url, api_key: key } = JSON.parse(out);
    assert.match(key, /^sk-rehearsal-\w+$/);
    // The site's own environment names neither: only the env file points it at the rehearsal.
    const env = { ...ws.env };
    delete env.ANTHROPIC_BASE_URL;
    delete env.ANTHROPIC_API_KEY;
    const envFile = path.join(ws.dir, 'nightshift.env');
    fs.writeFileSync(envFile, `ANTHROPIC_BASE_URL=${url}\nANTHROPIC_API_KEY=${key}\n`, { mode: 0o600 });

    const doctor = await nightshift(['doctor', '--json'], env, ws.dir);
    const credential = JSON.parse(doctor.stdout).checks.find((c: any) => c.name === 'credential');
    assert.equal(credential.status, 'fail', JSON.stringify(credential));
    assert.match(credential.detail, new RegExp(`ANTHROPIC_API_KEY in ${envFile.replace(/[.]/g, '\\.')} is a rehearsal's key .*points at ${url.replace(/[.]/g, '\\.')}`));
    assert.match(credential.fix, /take the ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY lines of the rehearsal out of .*nightshift\.env and put the real key back/);
    assert.equal(doctor.code, 1);

    const ran = await nightshift(['run', 'worker', '--json'], env, ws.dir);
    assert.equal(ran.code, 78, ran.stderr);
    assert.match(ran.stderr, /ANTHROPIC_API_KEY is a rehearsal's key .*nothing was started or charged/);
    assert.equal(JSON.parse(ran.stdout).code, 'ENV_FILE');
    assert.deepEqual(rows(ws.dir), [], 'nothing reserved');

    // Control: the same site, the env file holding a key the (tests') API takes, passes doctor's
    // credential check and runs, counted.
    fs.writeFileSync(envFile, `ANTHROPIC_BASE_URL=${api.url}\nANTHROPIC_API_KEY=${ws.env.ANTHROPIC_API_KEY}\n`, { mode: 0o600 });
    const fixed = await nightshift(['doctor', '--json'], env, ws.dir);
    assert.equal(JSON.parse(fixed.stdout).checks.find((c: any) => c.name === 'credential').status, 'ok');
    const control = await nightshift(['run', 'worker', '--json'], env, ws.dir);
    assert.equal(JSON.parse(control.stdout).outcome, 'ok', control.stderr);
    assert.equal(rows(ws.dir).length, 1);

    served.child.kill('SIGINT');
    const done = await served.done;
    assert.equal(done.code, 0, done.stderr);
    // The imitation was never asked: the refused session never started.
    assert.match(done.stderr, /stopped \(SIGINT\): 0 message requests answered/);
    assert.equal(done.stdout.trim().split('\n').length, 1, 'with --json, stdout held the one object');
  });
});

// Issue 50 item 7: root's rehearsal in the service user's site changed the group and mode of its
// state/ and left state/rehearsal root's, so the owner's next rehearsal was denied. Root there is
// refused up front with the run-as-owner advice: its session would be walled as session_user, not
// as the site's sessions run, and it would need state/ opened to that user's group.
// control: without rehearse.ts's refusal, root's rehearsal exits 0, state/ turns group
// nightshift-session with mode 0710 or more, state/rehearsal is root's, and nobody's rehearsal then
// exits 77 (cannot write state/rehearsal) (verified).
describe('root\'s rehearsal in the service user\'s site', { skip: process.getuid?.() === 0 ? false : 'needs root (to be root, then the service user)' }, () => {
  const NOBODY = 65534;
  const asNobody = (args: string[], ws: Workspace) => new Promise<Ran>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: ws.env, cwd: ws.dir, uid: NOBODY, gid: NOBODY, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  const chownR = (p: string): void => {
    fs.lchownSync(p, NOBODY, NOBODY);
    if (fs.lstatSync(p).isDirectory()) for (const e of fs.readdirSync(p)) chownR(path.join(p, e));
  };

  test('is refused before anything is made, naming the owner and runuser; the state folder is as it was and the owner\'s rehearsal runs', async (t) => {
    const ws = workspace(t, api.url, configYaml({ top: `sandbox: ${BWRAP ? 'bwrap' : 'none'}\ngit:\n  enabled: false\n` }), { base: '/srv' });
    writeAgent(ws, 'worker', 'SCENARIO=text');
    fs.mkdirSync(ws.state, { mode: 0o700 });
    chownR(ws.dir);
    const before = fs.statSync(ws.state);
    const root = await nightshift(['rehearse', 'worker'], ws.env, ws.dir);
    const after = fs.statSync(ws.state);
    // The owner's rehearsal first: what the control shows is its denial.
    const own = await asNobody(['rehearse', 'worker', '--json'], ws);
    assert.equal(own.code, 0, own.stderr);
    assert.equal(JSON.parse(own.stdout).outcome, 'ok', own.stderr);
    assert.equal(root.code, 77, root.stderr);
    assert.match(root.stderr, new RegExp(`Refused: nightshift rehearse runs as root in a site that is not root's: state_dir ${ws.state} is owned by nobody \\(uid ${NOBODY}\\), not root: it belongs to nobody: run nightshift as them \\(runuser -u nobody -- nightshift …\\)`));
    assert.deepEqual([after.uid, after.gid, after.mode], [before.uid, before.gid, before.mode], 'state/ keeps its owner, group and mode');
    const made = fs.readdirSync(path.join(ws.state, 'rehearsal', 'site'), { recursive: true }).map(String);
    const notNobodys = made.filter((f) => fs.lstatSync(path.join(ws.state, 'rehearsal', 'site', f)).uid !== NOBODY);
    assert.deepEqual(notNobodys, [], 'the rehearsal\'s site is the owner\'s');
  });
});
