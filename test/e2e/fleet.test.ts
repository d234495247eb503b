// Two hosts under one budget (issue 55), through the built binary, the real CLI, the fake API and a
// real PostgreSQL named by each host's env file: `db migrate` and doctor; the same due agent
// ticked on both hosts at once runs one session, and the other host's fire is a skip naming the
// host that has it (control: without the fleet, both run); the database stopped, a tick starts
// nothing and exits 69 naming the database's host, never its password.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, workspace, writeAgent, type Workspace } from '../helpers.js';
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
  function host(t: TestContext, name: string, url: string | null): Workspace {
    const ws = workspace(t, api.url, configYaml({ top: `${gitOff}fleet:\n  host: ${name}\ndispatch:\n  - agent: gardener\n` }));
    writeAgent(ws, 'gardener', 'SCENARIO=text');
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
    assert.match(refused.stderr, /at schema version 0, and this nightshift needs 1: run `nightshift db migrate`/);
    assert.deepEqual(ledgerRows(a.dir), []);
    const m = await nightshift(['db', 'migrate', '--json'], a.env, a.dir);
    assert.equal(m.code, 0, m.stderr);
    assert.deepEqual(JSON.parse(m.stdout), { database: `127.0.0.1:${pg.port}/${new URL(url).pathname.slice(1)}`, from: 0, to: 1, applied: [{ version: 1, what: 'the day\'s reservations and the fires\' claims' }] });
    const again = await nightshift(['db', 'migrate'], a.env, a.dir);
    assert.match(again.stdout, /schema version 1, current: nothing to apply/);
    const ok = check(await nightshift(['doctor', '--json'], a.env, a.dir));
    assert.equal(ok.status, 'ok');
    assert.match(ok.detail, /reachable, schema version 1; this host is `host-a`/);
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
});
