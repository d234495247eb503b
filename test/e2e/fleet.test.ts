// Two hosts under one budget (issue 55), through the built binary, the real CLI, the fake API and a
// real PostgreSQL named by each host's env file: `db migrate` and doctor; the same due agent
// ticked on both hosts at once runs one session, and the other host's fire is a skip naming the
// host that has it (control: without the fleet, both run); the database stopped, a tick starts
// nothing and exits 69 naming the database's host, never its password; a hold one host's session
// set passes the agent over on the other, and a release on any host lifts it everywhere.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { spawn } from 'node:child_process';
import { configYaml, fakeApiPerFile, FIXTURES, ledgerRows, runningSessions, nightshift, processesMatching, runJson, startNightshift, waitFor, workspace, writeAgent, type Workspace } from '../helpers.js';
import { claimSlot } from '../../daemon/schedule/claim-slot.js';
import { connectFleet } from '../../budget/fleet-db.js';
import { NEEDS_POSTGRES, startCluster, type Cluster } from '../pg-cluster.js';

const api = fakeApiPerFile();
const gitOff = 'git:\n  enabled: false\n';
const PASSWORD = 'hunter2-fleet-pw';

describe('a fleet of two hosts', { skip: NEEDS_POSTGRES }, () => {
  let pg: Cluster;
  before(async () => {
    pg = await startCluster();
  });
  after(() => pg?.close());

  // A host: its own site (state, ledger, fires), its name, and the fleet's URL in its env file.
  // `rule`: more of gardener's dispatch rule; `claude`, `prompt`: its session's settings and script.
  function host(t: TestContext, name: string, url: string | null, o: { rule?: string; claude?: Record<string, unknown>; prompt?: string; fleet?: string } = {}): Workspace {
    const ws = workspace(t, api.url, configYaml({ claude: o.claude, top: `${gitOff}fleet:\n  host: ${name}\n${o.fleet ?? ''}dispatch:\n  - agent: gardener\n${o.rule ?? ''}` }));
    writeAgent(ws, 'gardener', o.prompt ?? 'SCENARIO=text');
    if (url) fs.writeFileSync(path.join(ws.dir, 'nightshift.env'), `NIGHTSHIFT_DATABASE_URL=${url}\n`, { mode: 0o600 });
    return ws;
  }
  const fires = async (ws: Workspace) => JSON.parse((await nightshift(['fires', '--json'], ws.env, ws.dir)).stdout) as any[];

  test('db migrate brings the database to its schema once; doctor checks it; a host refuses the database before it', async (t) => {
    const url = pg.url(pg.createDb(), PASSWORD);
    const a = host(t, 'host-a', url);
    const help = await nightshift(['db', '--help'], a.env, a.dir);
    assert.match(help.stdout, /^Usage: nightshift db migrate/);
    // Before the migration: doctor fails the check, and a tick refuses to run on it (78).
    const early = await nightshift(['doctor', '--json'], a.env, a.dir);
    const check = (r: { stdout: string }) => JSON.parse(r.stdout).checks.find((c: any) => c.name === 'fleet');
    assert.deepEqual([check(early).status, check(early).fix], ['fail', 'nightshift db migrate']);
    const refused = await nightshift(['tick', '--json'], a.env, a.dir);
    assert.equal(refused.code, 78, refused.stderr);
    assert.match(refused.stderr, /at schema version 0, and this nightshift needs 3: run `nightshift db migrate`/);
    assert.deepEqual(ledgerRows(a.dir), []);
    const m = await nightshift(['db', 'migrate', '--json'], a.env, a.dir);
    assert.equal(m.code, 0, m.stderr);
    assert.deepEqual(JSON.parse(m.stdout), { database: `127.0.0.1:${pg.port}/${new URL(url).pathname.slice(1)}`, from: 0, to: 3, applied: [{ version: 1, what: 'the day\'s reservations and the fires\' claims' }, { version: 2, what: 'leases on the claims, renewed by a heartbeat; the hosts seen' }, { version: 3, what: 'holds and hold releases shared' }] });
    const again = await nightshift(['db', 'migrate'], a.env, a.dir);
    assert.match(again.stdout, /schema version 3, current: nothing to apply/);
    const ok = check(await nightshift(['doctor', '--json'], a.env, a.dir));
    assert.equal(ok.status, 'ok');
    assert.match(ok.detail, /reachable, schema version 3; this host is `host-a`; hosts seen: /);
    for (const out of [help, early, refused, m, again]) assert.ok(!(out.stdout + out.stderr).includes(PASSWORD));
  });

  // mutation: fleet-claim-ignored and fleet-settle-skipped, caught here.
  test('the same due agent ticked on both hosts at once runs one session; the other fire names the host that has it', async (t) => {
    const name = pg.createDb();
    const url = pg.url(name, PASSWORD);
    const a = host(t, 'host-a', url);
    const b = host(t, 'host-b', url);
    assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
    const [ra, rb] = await Promise.all([a, b].map((ws) => nightshift(['tick', '--json'], ws.env, ws.dir)));
    assert.equal(ra.code, 0, ra.stderr);
    assert.equal(rb.code, 0, rb.stderr);
    const results = [JSON.parse(ra.stdout), JSON.parse(rb.stdout)];
    assert.deepEqual(results.map((r) => r.action).sort(), ['session', 'skip']);
    const [ranOn, skipped] = results[0].action === 'session' ? [a, b] : [b, a];
    const winner = ranOn === a ? 'host-a' : 'host-b';
    assert.equal(ledgerRows(ranOn.dir).length, 1);
    assert.deepEqual(ledgerRows(skipped.dir), []);
    const [fire] = await fires(skipped);
    assert.equal(fire.action, 'skip');
    assert.deepEqual(fire.passed_over.map((p: any) => [p.agent, p.cause]), [['gardener', 'busy']]);
    assert.match(fire.reason, new RegExp(`gardener.*its slot \\S+ was claimed by host ${winner} at `));
    // The session's reservation in the fleet is settled with what the host's own ledger counted.
    const db = await connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
    try {
      const rows = (await db.query<any>('SELECT session_id, host, status, spent_usd FROM fleet_reservations')).rows;
      const [session] = ledgerRows(ranOn.dir);
      assert.deepEqual(rows.map((r) => [r.session_id, r.host, r.status]), [[session.id, winner, 'settled']]);
      assert.ok(Math.abs(rows[0].spent_usd - session.cost_usd) < 1e-9);
      assert.ok(session.cost_usd > 0);
    } finally {
      await db.close();
    }
    // A later tick in the same hour on the winner does not run it again: the slot fired once.
    const later = JSON.parse((await nightshift(['tick', '--json'], ranOn.env, ranOn.dir)).stdout);
    assert.equal(later.action, 'skip');
    assert.match(later.reason, new RegExp(`was claimed by host ${winner} \\(this one\\)`));
  });

  // mutation: fleet-pin-ignored, caught here.
  for (const pinned of [true, false]) {
    test(pinned
      ? 'an agent whose file names host-a (where its memory is) is passed over by host-b\'s tick, which says where it runs'
      : 'the control: the same agent without `host:` runs on host-b', async (t) => {
      const url = pg.url(pg.createDb(), PASSWORD);
      const b = host(t, 'host-b', url);
      writeAgent(b, 'gardener', 'SCENARIO=text', pinned ? { host: 'host-a' } : {});
      assert.equal((await nightshift(['db', 'migrate'], b.env, b.dir)).code, 0);
      const r = await nightshift(['tick', '--json'], b.env, b.dir);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      if (!pinned) return assert.equal(out.action, 'session');
      assert.equal(out.action, 'skip');
      assert.match(out.reason, /gardener.*runs on host host-a \(host: in its file\), where its memory is/);
      assert.deepEqual(ledgerRows(b.dir), []);
    });
  }

  test('the control: the same two hosts without the fleet both run it', async (t) => {
    const a = host(t, 'host-a', null);
    const b = host(t, 'host-b', null);
    const ran = await Promise.all([a, b].map((ws) => nightshift(['tick', '--json'], ws.env, ws.dir)));
    assert.deepEqual(ran.map((r) => [r.code, JSON.parse(r.stdout).action]), [[0, 'session'], [0, 'session']]);
    assert.equal(ledgerRows(a.dir).length + ledgerRows(b.dir).length, 2);
  });

  test('the database stopped: a due tick starts nothing and exits 69, naming the database\'s host and never its password', async (t) => {
    const name = pg.createDb();
    const url = pg.url(name, PASSWORD);
    const a = host(t, 'host-a', url);
    assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
    pg.stop('immediate');
    let ran;
    try {
      ran = await nightshift(['tick', '--json'], a.env, a.dir);
    } finally {
      pg.start();
    }
    assert.equal(ran.code, 69, ran.stderr);
    assert.match(ran.stderr, new RegExp(`the fleet's database at 127\\.0\\.0\\.1:${pg.port}/${name} \\(NIGHTSHIFT_DATABASE_URL in the env file\\) cannot be reached: .*no session starts until it can be`));
    assert.ok(!(ran.stdout + ran.stderr).includes(PASSWORD));
    assert.deepEqual(ledgerRows(a.dir), []);
    const [fire] = await fires(a);
    assert.deepEqual([fire.status, fire.agent, fire.session, fire.exit_code], ['settled', null, null, 69]);
    assert.match(fire.reason, /cannot be reached/);
    assert.ok(!JSON.stringify(fire).includes(PASSWORD));
    // Control: the database back, the same tick runs the session.
    const back = await nightshift(['tick', '--json'], a.env, a.dir);
    assert.equal(back.code, 0, back.stderr);
    assert.equal(JSON.parse(back.stdout).session.outcome, 'ok');
  });
  // A host of the fleet whose gardener works `secs` in one Bash call; leases of a second.
  function worker(t: TestContext, name: string, url: string, tag: string, secs: number, extra = '', dayUsd = 1): Workspace {
    const ws = workspace(t, api.url, configYaml({ budget: { max_usd_per_day: dayUsd, max_usd_per_session: 1 }, top: `${gitOff}fleet:\n  host: ${name}\n  lease: 1s\n  grace: 1s\ndispatch:\n  - agent: gardener\n` }));
    api.script(tag, ({ turn }) => turn === 0
      ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${secs}` } }] }
      : { kind: 'message', blocks: [{ type: 'text', text: 'done' }] });
    writeAgent(ws, 'gardener', `SCENARIO=${tag}`, { allowed_tools: ['Bash'], ...(extra ? { timeout: extra } : {}) });
    fs.writeFileSync(path.join(ws.dir, 'nightshift.env'), `NIGHTSHIFT_DATABASE_URL=${url}\n`, { mode: 0o600 });
    return ws;
  }
  // The tick with the fleet's link built by the fixture: some switches off, a slot of its own.
  function fleetTick(ws: Workspace, off: string[], slot: Date): Promise<{ code: number | null; out: any; stderr: string }> {
    return new Promise((resolve, reject) => {
      const c = spawn(process.execPath, [path.join(FIXTURES, 'fleet-tick.mjs'), ws.config, off.join(','), slot.toISOString()], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d) => (stdout += d));
      c.stderr.on('data', (d) => (stderr += d));
      c.on('error', reject);
      c.on('close', (code) => resolve({ code, out: stdout.trim() ? JSON.parse(stdout) : null, stderr }));
    });
  }
  const fleetRows = async (url: string, sql: string) => {
    const db = await connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
    try {
      return (await db.query<any>(sql)).rows;
    } finally {
      await db.close();
    }
  };
  const HOUR = 3_600_000;
  const running = (ws: Workspace) => runningSessions(ws.dir) > 0;

  // mutation: fleet-history-unread, caught here.
  for (const interval of [true, false]) {
    test(interval
      ? 'a rule\'s min_interval holds across hosts: host-b\'s fire an hour after host-a ran the agent is a skip'
      : 'the control: the same rule without min_interval runs on host-b an hour after host-a (the claim alone does not stop it)', async (t) => {
      const url = pg.url(pg.createDb(), PASSWORD);
      const rule = interval ? '    min_interval: 3h\n' : '';
      const [a, b] = ['host-a', 'host-b'].map((name) => host(t, name, url, { rule }));
      assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
      const slot = claimSlot(new Date(), 'UTC');
      const first = await fleetTick(a, [], slot);
      assert.equal(first.out.action, 'session', first.stderr);
      const second = await fleetTick(b, [], new Date(slot.getTime() + HOUR));
      assert.equal(second.code, 0, second.stderr);
      if (!interval) return assert.equal(second.out.action, 'session');
      // Not due by its own terms: the rule's min_interval, read over both hosts' sessions.
      assert.deepEqual([second.out.action, second.out.reason], ['skip', 'no rule is due']);
      assert.deepEqual(ledgerRows(b.dir), []);
    });
  }

  // mutation: fleet-no-heartbeat, caught here.
  for (const control of [false, true]) {
    test(control
      ? 'the control: without the heartbeat, the other host claims the agent whose session outlived its lease, and it runs twice at once'
      : 'a session longer than the lease: its host\'s heartbeat keeps the claim, and the other host\'s fire for the next slot is a skip naming it', async (t) => {
      const url = pg.url(pg.createDb(), PASSWORD);
      const tag = control ? 'lease-off' : 'lease-on';
      // A day of $10: host-b's charge fits beside host-a's; only the claim can stop it.
      const a = worker(t, 'host-a', url, `${tag}-a`, 6, '', 10);
      const b = worker(t, 'host-b', url, `${tag}-b`, 0, '', 10);
      assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
      const slot = claimSlot(new Date(), 'UTC');
      const first = fleetTick(a, control ? ['heartbeat'] : [], slot);
      await waitFor(() => running(a), 60_000, 'host-a\'s session to start');
      // Three leases pass while host-a's session runs.
      await new Promise((r) => setTimeout(r, 3000));
      assert.ok(running(a), 'host-a\'s session still runs');
      const second = await fleetTick(b, [], new Date(slot.getTime() + HOUR));
      assert.equal(second.code, 0, second.stderr);
      const ranA = await first;
      assert.equal(ranA.code, 0, ranA.stderr);
      assert.equal(ranA.out.session.outcome, 'ok');
      if (control) {
        assert.equal(second.out.action, 'session', 'the harm: host-b ran the agent host-a was running');
        const [sa] = ledgerRows(a.dir);
        const [sb] = ledgerRows(b.dir);
        return assert.ok(sb.started_at < sa.ended_at, 'the two sessions overlapped');
      }
      assert.equal(second.out.action, 'skip');
      assert.match(second.out.reason, /gardener.*it is running on host host-a \(claimed for slot /);
      assert.deepEqual(ledgerRows(b.dir), []);
      const claims = await fleetRows(url, 'SELECT host, outcome, session_id, ended_at IS NOT NULL AS ended FROM fleet_claims ORDER BY slot');
      assert.deepEqual(claims.map((c) => [c.host, c.outcome, c.session_id, c.ended]), [['host-a', 'ok', ledgerRows(a.dir)[0].id, true]]);
    });
  }

  test('a host SIGKILLed mid-session: its claim passes its lease and its reservation its time; the next fire on the other host settles the claim crashed, gets the day\'s money back and runs', { timeout: 180_000 }, async (t) => {
    const url = pg.url(pg.createDb(), PASSWORD);
    // A timeout of 6 s: the reservation expires 6 + 3 (kill grace) + 1 (grace) s after the charge.
    const a = worker(t, 'host-a', url, 'killed-a', 781, '6s');
    const b = worker(t, 'host-b', url, 'killed-b', 0);
    assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
    const victim = startNightshift(['tick'], a.env, a.dir, t);
    await waitFor(() => running(a), 60_000, 'host-a\'s session to start');
    const [held] = await fleetRows(url, 'SELECT reserved_usd FROM fleet_reservations');
    assert.equal(held.reserved_usd, 1, 'host-a\'s session holds the whole day');
    victim.child.kill('SIGKILL');
    await victim.done;
    const slot = claimSlot(new Date(), 'UTC');
    // Before its time: the day's money is still held; host-b is refused (the harm a leak would make lasting).
    const early = await fleetTick(b, [], new Date(slot.getTime() + HOUR));
    assert.equal(early.code, 0, early.stderr);
    assert.equal(early.out.action, 'skip');
    assert.deepEqual(ledgerRows(b.dir).filter((r) => r.outcome !== 'refused').length, 0);
    const [{ left }] = await fleetRows(url, `SELECT greatest(0, extract(epoch FROM (max(expires_at) - now())) * 1000)::float8 AS left FROM fleet_reservations`);
    await new Promise((r) => setTimeout(r, left + 500));
    const late = await fleetTick(b, [], new Date(slot.getTime() + 2 * HOUR));
    assert.equal(late.code, 0, late.stderr);
    assert.equal(late.out.action, 'session', JSON.stringify(late.out));
    assert.equal(late.out.session.outcome, 'ok');
    const [killed] = ledgerRows(a.dir);
    const claims = await fleetRows(url, 'SELECT host, outcome, session_id FROM fleet_claims ORDER BY slot');
    assert.deepEqual(claims.map((c) => [c.host, c.outcome, c.session_id]), [['host-a', 'crashed', killed.id], ['host-b', late.out.session.outcome, late.out.session.id]]);
    const res = await fleetRows(url, 'SELECT host, status FROM fleet_reservations ORDER BY reserved_at');
    assert.deepEqual(res.map((r) => [r.host, r.status]), [['host-a', 'expired'], ['host-b', 'settled']]);
    await waitFor(() => processesMatching('sleep 781').length === 0, 20_000, 'the killed session\'s tool to end');
  });

  // mutation: fleet-hold-unshared and fleet-hold-unread, caught here.
  for (const control of [false, true]) {
    test(control
      ? 'the control: with the write-through off, the rate limit host-a met does not stop host-b, which runs the agent'
      : 'a rate limit met on host-a holds the agent on host-b, whose tick passes it over naming the hold and the host; a release on host-b lifts it on both', { timeout: 120_000 }, async (t) => {
      const url = pg.url(pg.createDb(), PASSWORD);
      const a = host(t, 'host-a', url);
      const b = host(t, 'host-b', url);
      writeAgent(a, 'gardener', 'SCENARIO=err429');
      assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
      const slot = claimSlot(new Date(), 'UTC');
      const at = (hours: number) => new Date(slot.getTime() + hours * HOUR);
      const limited = await fleetTick(a, control ? ['holds'] : [], at(0));
      assert.equal(limited.out?.session?.outcome, 'rate_limited', limited.stderr.slice(-2000));
      // host-b's own ledger holds nothing: only the fleet can hold it there.
      const onB = await fleetTick(b, [], at(1));
      assert.equal(onB.code, 0, onB.stderr);
      if (control) {
        assert.equal(onB.out.action, 'session', 'the harm: host-b ran the agent host-a was told to hold');
        return assert.equal(ledgerRows(b.dir).length, 1);
      }
      assert.equal(onB.out.action, 'skip');
      assert.match(onB.out.reason, /^no rule is due: rule 0 \(gardener\) is held until \S+Z: rate limited \(no reset time given: backoff after 1 rate-limited session\) \(on host host-a\)$/);
      assert.deepEqual(onB.out.passed_over.map((p: any) => [p.agent, p.cause]), [['gardener', 'held']]);
      assert.deepEqual(ledgerRows(b.dir), []);
      // host-a holds it too, from its own ledger.
      const onA = await fleetTick(a, [], at(2));
      assert.equal(onA.out.action, 'skip');
      assert.match(onA.out.reason, /rule 0 \(gardener\) is held until \S+Z: rate limited \(no reset time given: backoff after 1 rate-limited session\)$/);
      // Released on host-b, which never ran it: the fleet's hold was the one it saw.
      const released = await nightshift(['hold', 'release', 'gardener', '--json'], b.env, b.dir);
      assert.equal(released.code, 0, released.stderr);
      const r = JSON.parse(released.stdout);
      assert.deepEqual(r.released.map((x: any) => [x.agent, x.kind, x.host]), [['gardener', 'rate_limited', 'host-a']]);
      assert.equal(r.fleet, 'written');
      // Lifted on host-a, whose ledger still holds the rate-limited row, and on host-b.
      writeAgent(a, 'gardener', 'SCENARIO=text');
      const againA = await fleetTick(a, [], at(3));
      assert.equal(againA.out?.session?.outcome, 'ok', againA.stderr.slice(-2000));
      assert.match(againA.stderr, /"event":"hold_released".*"agent":"gardener".*hold released on another host of the fleet/);
      const againB = await fleetTick(b, [], at(4));
      assert.equal(againB.out?.session?.outcome, 'ok', againB.stderr.slice(-2000));
      // host-a's session that ended ok took its hold out of the fleet.
      assert.deepEqual(await fleetRows(url, 'SELECT agent, host FROM fleet_holds'), []);
    });
  }

  // mutation: fleet-max-concurrent-ignored, caught here.
  for (const max of [1, 2]) {
    test(max === 1
      ? 'fleet.max_concurrent 1 with a session running on host-a: host-b\'s tick passes its due agent over, naming the bound, and starts nothing'
      : 'the control: at fleet.max_concurrent 2 the same tick on host-b runs its agent', { timeout: 120_000 }, async (t) => {
      const url = pg.url(pg.createDb(), PASSWORD);
      const b = host(t, 'host-b', url, { fleet: `  max_concurrent: ${max}\n` });
      assert.equal((await nightshift(['db', 'migrate'], b.env, b.dir)).code, 0);
      // host-a mid-session with another agent: its claim live.
      const db = await connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
      try {
        const { claimFire } = await import('../../budget/fleet-claims.js');
        assert.equal((await claimFire(db, { agent: 'scout', slot: claimSlot(new Date(), 'UTC').toISOString(), host: 'host-a', leaseMs: 600_000 })).won, true);
      } finally {
        await db.close();
      }
      const r = await nightshift(['tick', '--json'], b.env, b.dir);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      if (max === 2) return assert.equal(out.session?.outcome, 'ok', r.stderr.slice(-2000));
      assert.equal(out.action, 'skip');
      assert.match(out.reason, /gardener.*fleet\.max_concurrent reached: 1 of 1 sessions running across the fleet/);
      assert.deepEqual(ledgerRows(b.dir), []);
      // The fire's row says so too.
      const [fire] = await fires(b);
      assert.match(JSON.stringify(fire), /fleet\.max_concurrent reached/);
    });
  }

  // mutation: fleet-streak-unread, caught here.
  for (const control of [false, true]) {
    test(control
      ? 'the control: with the other hosts\' sessions unread, host-b runs the agent a fourth time, its own streak one failure long'
      : 'failures on two hosts in turn make one streak: after host-a, host-b and host-a fail, host-b backs the agent off, naming three failures', { timeout: 180_000 }, async (t) => {
      const url = pg.url(pg.createDb(), PASSWORD);
      // backoff as by default: after 3 failures in a row, 1 h from the last.
      const [a, b] = ['host-a', 'host-b'].map((name) => host(t, name, url, { claude: { max_turns: 1 }, prompt: 'SCENARIO=endless' }));
      assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
      const off = control ? ['streak'] : [];
      const slot = claimSlot(new Date(), 'UTC');
      const at = (hours: number) => new Date(slot.getTime() + hours * HOUR);
      const told: boolean[] = [];
      for (const [ws, hours] of [[a, 0], [b, 1], [a, 2]] as const) {
        const r = await fleetTick(ws, off, at(hours));
        assert.equal(r.out?.session?.outcome, 'max_turns', r.stderr.slice(-2000));
        told.push(/"event":"backoff_started"/.test(r.stderr));
      }
      // mutation: fleet-backoff-untold, caught here. The backoff is told once, by the host whose
      // session made the fleet's streak three long (host-a's second), though its own ledger has two.
      if (!control) assert.deepEqual(told, [false, false, true]);
      else assert.deepEqual(told, [false, false, false]);
      // Neither host's own ledger reaches three, so no host's own hold is shared either.
      assert.deepEqual(await fleetRows(url, 'SELECT agent FROM fleet_holds'), []);
      const onB = await fleetTick(b, off, at(3));
      assert.equal(onB.code, 0, onB.stderr);
      if (control) {
        assert.equal(onB.out?.session?.outcome, 'max_turns', 'the harm: a fourth failing session, spent');
        return assert.equal(ledgerRows(b.dir).length, 2);
      }
      assert.equal(onB.out.action, 'skip', onB.stderr.slice(-2000));
      assert.match(onB.out.reason, /^no rule is due: rule 0 \(gardener\) is held until \S+Z: backed off after 3 failures in a row \(last: max_turns\)$/);
      assert.equal(ledgerRows(b.dir).length, 1);
    });
  }

  test('the database unreachable: hold release on a host says so (69), releases there, and spools the fleet\'s release, which the host\'s next start writes: then the other host\'s hold is lifted too', { timeout: 120_000 }, async (t) => {
    const name = pg.createDb();
    const url = pg.url(name, PASSWORD);
    const a = host(t, 'host-a', url);
    const b = host(t, 'host-b', url);
    writeAgent(a, 'gardener', 'SCENARIO=err429');
    assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
    // By hand on host-a (no claim): the rate limit it met is written through all the same.
    const { record } = await runJson(a, 'gardener');
    assert.equal(record.outcome, 'rate_limited');
    const held = await nightshift(['tick', '--json'], b.env, b.dir);
    assert.equal(held.code, 0, held.stderr);
    assert.match(JSON.parse(held.stdout).reason, /gardener\) is held until \S+Z: rate limited .*\(on host host-a\)$/);
    pg.stop('immediate');
    let out;
    try {
      out = await nightshift(['hold', 'release', 'gardener', '--json'], a.env, a.dir);
    } finally {
      pg.start();
    }
    assert.equal(out.code, 69, out.stderr);
    assert.equal(JSON.parse(out.stdout).fleet, 'spooled');
    assert.match(out.stderr, new RegExp(`the release of gardener is recorded on this host only: the fleet's database at 127\\.0\\.0\\.1:${pg.port}/${name} \\(NIGHTSHIFT_DATABASE_URL in the env file\\) cannot be reached: .*until then the other hosts keep their holds`));
    assert.ok(!(out.stdout + out.stderr).includes(PASSWORD));
    assert.equal(fs.readdirSync(path.join(a.state, 'fleet-spool')).filter((n) => n.startsWith('release-')).length, 1);
    // Before host-a starts again, host-b still holds it: the release waits in host-a's spool.
    const still = JSON.parse((await nightshift(['tick', '--json'], b.env, b.dir)).stdout);
    assert.equal(still.action, 'skip');
    // host-a's next start, with nothing due, writes it; then host-b runs the agent.
    fs.writeFileSync(a.config, fs.readFileSync(a.config, 'utf8').replace(/dispatch:\n {2}- agent: gardener\n/, 'dispatch: []\n'));
    assert.equal((await nightshift(['tick'], a.env, a.dir)).code, 0);
    assert.deepEqual(fs.readdirSync(path.join(a.state, 'fleet-spool')), []);
    const ran = await nightshift(['tick', '--json'], b.env, b.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(JSON.parse(ran.stdout).session?.outcome, 'ok', ran.stderr.slice(-2000));
  });

  // mutation: fleet-spool-dropped, caught here.
  for (const control of [false, true]) {
    test(control
      ? 'the control: without the spool, the settle the stopped database did not take is lost: the reservation stays held'
      : 'PostgreSQL stopped mid-session and started again: the settle is spooled and written by the next start, once; nothing lost, nothing counted twice', { timeout: 120_000 }, async (t) => {
      const url = pg.url(pg.createDb(), PASSWORD);
      const a = worker(t, 'host-a', url, control ? 'spool-off' : 'spool-on', 4);
      assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
      const off = control ? ['spool'] : [];
      const first = fleetTick(a, off, claimSlot(new Date(), 'UTC'));
      await waitFor(() => running(a), 60_000, 'the session to start');
      pg.stop('fast');
      let ran;
      try {
        ran = await first;
      } finally {
        pg.start();
      }
      assert.equal(ran.out?.session?.outcome, 'ok', ran.stderr);
      const [session] = ledgerRows(a.dir);
      assert.ok(session.cost_usd > 0);
      // The next start, with nothing due, writes what waits; and a start after it writes nothing more.
      fs.writeFileSync(a.config, fs.readFileSync(a.config, 'utf8').replace(/dispatch:\n {2}- agent: gardener\n/, 'dispatch: []\n'));
      for (let i = 0; i < 2; i++) assert.equal((await fleetTick(a, off, new Date())).code, 0);
      const rows = await fleetRows(url, 'SELECT session_id, status, spent_usd FROM fleet_reservations');
      if (control) return assert.equal(rows[0].status, 'held', 'the harm: the settle is lost, the rest of the reservation held');
      assert.deepEqual(rows.map((r) => [r.session_id, r.status]), [[session.id, 'settled']]);
      assert.ok(Math.abs(rows[0].spent_usd - session.cost_usd) < 1e-9, `${rows[0].spent_usd} against ${session.cost_usd}`);
      assert.deepEqual(fs.readdirSync(path.join(a.state, 'fleet-spool')), []);
      const [claim] = await fleetRows(url, 'SELECT outcome FROM fleet_claims');
      assert.equal(claim.outcome, 'ok');
    });
  }
});
