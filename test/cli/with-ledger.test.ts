// A look never makes or takes state (issue 50, item 3): root's `status` on a fresh site of the
// service user's once made state/ledger.db root's, and every tick of the service user then died on
// "attempt to write a readonly database" (exit 70, a stack, no file named). Driven through the
// built CLI: root's looks, then the service user's tick (nobody, a real unprivileged user), in a
// site under /srv that both can reach.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { Ledger } from '../../budget/ledger.js';
import { BIN, configYaml, fakeApiPerFile, nightshift, workspace, writeAgent, type Ran, type Workspace } from '../helpers.js';

const ROOT_ONLY = process.getuid?.() === 0 ? false : 'needs root (to be root, then the service user)';
const NOBODY = 65534;
const api = fakeApiPerFile();

// A site of nobody's, as `runuser -u nobody -- nightshift init` leaves it: state/ made, empty.
function serviceSite(t: TestContext, top = ''): Workspace {
  const ws = workspace(t, api.url, configYaml({ top: `sandbox: none\ngit:\n  enabled: false\n${top}` }), { base: '/srv' });
  fs.mkdirSync(ws.state);
  writeAgent(ws, 'worker', 'SCENARIO=text');
  chownR(ws.dir, NOBODY);
  return ws;
}

function chownR(p: string, uid: number): void {
  fs.lchownSync(p, uid, uid);
  if (fs.lstatSync(p).isDirectory()) for (const e of fs.readdirSync(p)) chownR(path.join(p, e), uid);
}

// The built binary as nobody, the way `runuser -u nobody -- nightshift …` runs it.
function asNobody(args: string[], ws: Workspace): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: ws.env, cwd: ws.dir, uid: NOBODY, gid: NOBODY, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

// What in state/ is not nobody's.
const notNobodys = (ws: Workspace) => fs.readdirSync(ws.state).filter((f) => fs.statSync(path.join(ws.state, f)).uid !== NOBODY);

describe('root\'s looks at the service user\'s site', { skip: ROOT_ONLY }, () => {
  // control: with lookAtLedger back on Ledger.open and wal-file.ts's write check taken out (today's
  // code), root's status makes a root-owned ledger.db and this tick exits 70 with "nightshift:
  // internal error: SqliteError: attempt to write a readonly database" and its stack (verified).
  test('root\'s status on a fresh site makes no ledger and says "no sessions yet"; the service user\'s tick then runs', async (t) => {
    const ws = serviceSite(t, 'dispatch:\n  - agent: worker\n');
    const ledger = path.join(ws.state, 'ledger.db');
    const made: string[] = [];
    for (const args of [['status'], ['status', '--json'], ['sessions'], ['next'], ['budget'], ['fires'], ['state']]) {
      const r = await nightshift(args, ws.env, ws.dir);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      if (fs.existsSync(ledger) && !made.length) made.push(`${args.join(' ')} made ${ledger}`);
    }
    const status = await nightshift(['status'], ws.env, ws.dir);
    const rootsFiles = notNobodys(ws);

    // The tick first: what the operator meets (the control's readonly failure) before the cause.
    const tick = await asNobody(['tick', '--json'], ws);
    assert.equal(tick.code, 0, tick.stderr);
    assert.equal(JSON.parse(tick.stdout).session?.outcome, 'ok', tick.stdout);
    assert.equal(fs.statSync(ledger).uid, NOBODY);
    assert.deepEqual(made, [], 'no look made the ledger');
    assert.deepEqual(rootsFiles, [], 'root\'s looks left nothing of root\'s in state/');
    assert.match(status.stdout, new RegExp(`^sessions +no sessions yet \\(${ledger} is made by the first tick or run\\)$`, 'm'));

    // Root looks again, now at the service user's WAL files: read-only, and what SQLite makes for a
    // reader (-shm) is the file's owner's; the next tick still runs.
    const again = await nightshift(['status', '--json'], ws.env, ws.dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).last_sessions.length, 1);
    assert.deepEqual(notNobodys(ws), []);
    const second = await asNobody(['tick', '--json'], ws);
    assert.equal(second.code, 0, second.stderr);
  });

  // control: without wal-file.ts's write check, this tick exits 70: "internal error: SqliteError:
  // attempt to write a readonly database" with a stack, at reconcile's first write (verified).
  test('a tick that meets root\'s ledger in its state_dir names the file, its owner and mode and the chown back; exit 77, no stack', async (t) => {
    const ws = serviceSite(t);
    const file = path.join(ws.state, 'ledger.db');
    // Root's leftover, holding a session of a dead supervisor, which the tick must write to settle.
    const l = Ledger.open(file);
    l.open({ id: 'orphan-1', agent: 'worker', day: '2026-01-01', started_at: '2026-01-01T00:00:00.000Z', transcript: null, model: null, supervisor_pid: 2 ** 22 + 1, supervisor_start: null });
    l.close();
    fs.chmodSync(file, 0o644);
    const tick = await asNobody(['tick'], ws);
    assert.equal(tick.code, 77, tick.stderr);
    assert.match(tick.stderr, new RegExp(`nightshift runs as nobody \\(uid ${NOBODY}\\) and cannot write the ledger file ${file}, owned by root \\(uid 0\\) with mode 0644\\. The file is not damaged; fix the access: sudo chown nobody ${file}`));
    assert.doesNotMatch(tick.stderr, /SqliteError|readonly database|\n\s+at /);
    // The advice works: given back, the tick settles the orphan and exits 0.
    fs.chownSync(file, NOBODY, NOBODY);
    const fixed = await asNobody(['tick'], ws);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.match(fixed.stderr, /settled orphan-1 as abandoned/);
  });
});
