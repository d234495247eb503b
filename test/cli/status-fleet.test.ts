// The fleet seen from any host (issue 55, item 6), through the built binary and a real PostgreSQL:
// `status` and `status --json` list every host (last heartbeat, sessions running, the day's spend
// and reservations), `fires --fleet` every host's claims (a crashed one too), the page the hosts'
// table. A database that cannot be reached breaks neither status nor the page: they say so naming
// host:port/database, never the password, and exit as before (control: `fires --fleet`, which
// asks for the fleet, exits 69 on the same site). Without the URL, pg is never loaded (control:
// with it, status loads it).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { configYaml, fakeApiPerFile, ledgerRows, nightshift, tempDir, workspace, writeAgent, type Workspace } from '../helpers.js';
import { checkSchema, connectFleet, migrate } from '../../budget/fleet-db.js';
import { claimCharged, claimFire, settleCrashed } from '../../budget/fleet-claims.js';
import { heardFrom } from '../../budget/fleet-hosts.js';
import { renewReservation, reserveInFleet } from '../../budget/fleet-reservations.js';
import { connectForLook, fleetLook } from '../../daemon/tick/fleet-look.js';
import { fleetCheck } from '../../daemon/health/fleet-check.js';
import { fleetLines } from '../../cli/commands/status.js';
import { fleetSection, renderPage, type PageData } from '../../cli/web/page.js';
import { pageData } from '../../cli/web/page-data.js';
import { loadConfig } from '../../config/config.js';
import { silentLogger } from '../../logs/logger.js';
import { makeRedactor, secretValues } from '../../core/redact.js';
import { FleetUnavailableError } from '../../core/errors.js';
import { freePort, NEEDS_POSTGRES, startCluster, type Cluster } from '../pg-cluster.js';

const api = fakeApiPerFile();
const PASSWORD = 'hunter2-seen-pw';

// A host: its own site, its name, and the fleet's URL in its env file (none: one host).
function host(t: TestContext, name: string, url: string | null): Workspace {
  const ws = workspace(t, api.url, configYaml({ top: `fleet:\n  host: ${name}\n  connect_timeout: 3s\ndispatch:\n  - agent: gardener\n` }));
  writeAgent(ws, 'gardener', 'SCENARIO=text');
  if (url) fs.writeFileSync(path.join(ws.dir, 'nightshift.env'), `NIGHTSHIFT_DATABASE_URL=${url}\n`, { mode: 0o600 });
  return ws;
}


// A page of the status --json data alone (the page is pure over it).
const pageOf = (status: any): PageData => ({ at: new Date().toISOString(), timezone: 'UTC', status, days: [], month: [], fires: [], sessions: [], memory: { error: 'not read here' } });

describe('the fleet seen from any host', { skip: NEEDS_POSTGRES }, () => {
  let pg: Cluster;
  before(async () => {
    pg = await startCluster();
  });
  after(() => pg?.close());

  test('status lists every host with its heartbeat, its running sessions and its spend; fires --fleet every host\'s claims, a crashed one too; the page the hosts\' table', async (t) => {
    const name = pg.createDb();
    const url = pg.url(name, PASSWORD);
    const a = host(t, 'host-a', url);
    assert.equal((await nightshift(['db', 'migrate'], a.env, a.dir)).code, 0);
    // host-a runs a session for real: its claim ends ok, its reservation is settled.
    const tick = await nightshift(['tick', '--json'], a.env, a.dir);
    assert.equal(tick.code, 0, tick.stderr);
    assert.equal(JSON.parse(tick.stdout).action, 'session');
    const [session] = ledgerRows(a.dir);
    const first = JSON.parse((await nightshift(['status', '--json'], a.env, a.dir)).stdout);
    const day = first.budget.date;
    // host-b is mid-session (a live claim, $0.25 spent of $0.75 reserved); host-c died holding a claim.
    const db = await connectFleet({ url, where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
    try {
      await heardFrom(db, 'host-b', Date.now(), '9.9.9');
      const slot = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
      assert.equal((await claimFire(db, { agent: 'scout', slot, host: 'host-b', leaseMs: 600_000 })).won, true);
      await claimCharged(db, { agent: 'scout', slot, host: 'host-b' }, 'sess-b1');
      assert.equal((await reserveInFleet(db, { session: 'sess-b1', day, agent: 'scout', host: 'host-b', expiresInMs: 600_000 }, () => ({ ok: true as const, usd: 0.75 }), null)).ok, true);
      await renewReservation(db, 'sess-b1', 0.25, 600_000);
      await heardFrom(db, 'host-c', Date.now(), '9.9.9');
      assert.equal((await claimFire(db, { agent: 'dead', slot, host: 'host-c', leaseMs: 1 })).won, true);
      await new Promise((r) => setTimeout(r, 50));
      // As the next host that connects would.
      assert.equal((await settleCrashed(db)).length, 1);
    } finally {
      await db.close();
    }

    const out = await nightshift(['status', '--json'], a.env, a.dir);
    assert.equal(out.code, 0, out.stderr);
    const s = JSON.parse(out.stdout);
    assert.equal(s.fleet.database, `127.0.0.1:${pg.port}/${name}`);
    assert.deepEqual([s.fleet.error, s.fleet.this_host], [null, 'host-a']);
    assert.deepEqual(s.fleet.hosts.map((h: any) => [h.host, h.running, +h.spent_today_usd.toFixed(6), +h.reserved_today_usd.toFixed(6)]), [
      ['host-a', 0, +session.cost_usd.toFixed(6), 0], ['host-b', 1, 0.25, 0.5], ['host-c', 0, 0, 0],
    ]);
    for (const h of s.fleet.hosts) assert.ok(h.age_ms >= 0 && h.age_ms < 600_000 && typeof h.seen_at === 'string', JSON.stringify(h));
    assert.deepEqual(s.fleet.running.map((c: any) => [c.agent, c.host, c.session, c.live]), [['scout', 'host-b', 'sess-b1', true]]);
    assert.deepEqual([s.fleet.day.date, s.fleet.day.sessions], [day, 2]);
    assert.ok(Math.abs(s.fleet.day.cost_usd - (session.cost_usd + 0.25)) < 1e-9);
    assert.ok(Math.abs(s.fleet.day.reserved_usd - 0.5) < 1e-9);

    const text = await nightshift(['status'], a.env, a.dir);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`fleet 127\\.0\\.0\\.1:${pg.port}/${name}: 3 hosts; the fleet's day ${day}: 2 sessions, \\$`));
    assert.match(text.stdout, /host-a \(this one\)\s+heard \d+s ago\s+0 running/);
    assert.match(text.stdout, /host-b\s+heard \d+s ago\s+1 running\s+\$0\.25 spent\s+\$0\.50 reserved\s+clock [+-]\d+\.\d s\s+v9\.9\.9/);
    assert.match(text.stdout, /running\s+scout on host-b since .* \(sess-b1\)/);

    const fires = await nightshift(['fires', '--fleet', '--json'], a.env, a.dir);
    assert.equal(fires.code, 0, fires.stderr);
    const claims = JSON.parse(fires.stdout);
    assert.deepEqual(claims.map((c: any) => [c.agent, c.host, c.session, c.outcome, c.live]).sort(), [
      ['dead', 'host-c', null, 'crashed', false], ['gardener', 'host-a', session.id, 'ok', false], ['scout', 'host-b', 'sess-b1', null, true],
    ]);
    const firesText = await nightshift(['fires', '--fleet'], a.env, a.dir);
    assert.match(firesText.stdout, /^claimed\s+agent\s+slot\s+host\s+session\s+outcome\s+ended/);
    assert.match(firesText.stdout, /dead\s+\S+ \S+ \S+\s+host-c\s+-\s+crashed/);
    assert.match(firesText.stdout, /scout\s+\S+ \S+ \S+\s+host-b\s+sess-b1\s+running\s+-/);
    assert.match(firesText.stdout, new RegExp(`gardener\\s+\\S+ \\S+ \\S+\\s+host-a\\s+${session.id}\\s+ok`));
    // --agent narrows it; this host's own fires are as before.
    assert.deepEqual(JSON.parse((await nightshift(['fires', '--fleet', '--agent', 'scout', '--json'], a.env, a.dir)).stdout).map((c: any) => c.agent), ['scout']);
    assert.equal(JSON.parse((await nightshift(['fires', '--json'], a.env, a.dir)).stdout)[0].action, 'session');

    // The page, over the same status --json data.
    const page = fleetSection(pageOf(s));
    assert.match(page, /<table id="fleet-hosts">/);
    assert.deepEqual([...page.matchAll(/<tr class="host" data-host="([^"]+)">.*?data-running="(\d+)"/g)].map((m) => [m[1], m[2]]), [['host-a', '0'], ['host-b', '1'], ['host-c', '0']]);
    assert.match(page, /<tr class="claim" data-agent="scout" data-host="host-b">/);
    assert.match(renderPage(pageOf(s)), /<section id="fleet">/);
    for (const r of [out, text, fires, firesText, tick]) assert.ok(!(r.stdout + r.stderr).includes(PASSWORD));
  });
});

// A relay to PostgreSQL whose connection goes silent, its sockets open, once a statement naming
// `marker` passes through it: a database that drops packets mid-look, which never says no.
async function silencingRelay(pgPort: number, marker: string): Promise<{ url: (db: string) => string; close: () => void }> {
  const socks = new Set<net.Socket>();
  const server = net.createServer((down) => {
    let silent = false;
    const up = net.connect(pgPort, '127.0.0.1');
    socks.add(down).add(up);
    down.on('data', (d) => {
      if (d.includes(marker)) silent = true;
      if (!silent) up.write(d);
    });
    up.on('data', (d) => {
      if (!silent) down.write(d);
    });
    for (const s of [down, up]) s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return { url: (db) => `postgres://postgres@127.0.0.1:${port}/${db}`, close: () => {
    for (const s of socks) s.destroy();
    server.close();
  } };
}

describe('the fleet\'s database silent mid-look', { skip: NEEDS_POSTGRES }, () => {
  let pg: Cluster;
  before(async () => {
    pg = await startCluster();
  });
  after(() => pg?.close());

  // mutation: fleet-look-unbounded, caught here.
  test('a look (status, the page, doctor) says the database did not answer within fleet.connect_timeout; control: a look without that bound is still waiting at three times it', async () => {
    const name = pg.createDb();
    const m = await connectFleet({ url: pg.url(name), where: 'test' }, { connectTimeoutMs: 10_000, redact: (x) => x });
    await migrate(m);
    await m.close();
    // The look connects and checks the schema, then its first read of the hosts goes unanswered.
    const relay = await silencingRelay(pg.port, 'fleet_hosts');
    try {
      const env = { NIGHTSHIFT_DATABASE_URL: relay.url(name) };
      const config = { fleet: { host: 'host-a', connect_timeout: 1000, grace: 0, lease: 1000 }, budget: { timezone: 'UTC' } } as any;
      const look = await fleetLook(config, env, (x) => x, new Date());
      assert.match(look!.error ?? '', /cannot be reached: it did not answer within 1 s/);
      assert.deepEqual([look!.hosts, look!.day], [[], null]);
      // Control: the same look, connected without the answer's bound (pg's 60 s).
      const unbounded = async (c: any, e: NodeJS.ProcessEnv, redact: (t: string) => string) => {
        const db = await connectFleet({ url: e.NIGHTSHIFT_DATABASE_URL!, where: 'test' }, { connectTimeoutMs: c.fleet.connect_timeout, redact });
        await checkSchema(db);
        return db;
      };
      const relay2 = await silencingRelay(pg.port, 'fleet_hosts');
      try {
        const waiting = fleetLook(config, { NIGHTSHIFT_DATABASE_URL: relay2.url(name) }, (x) => x, new Date(), unbounded);
        const first = await Promise.race([waiting.then(() => 'answered'), new Promise((r) => setTimeout(r, 3000, 'still waiting'))]);
        assert.equal(first, 'still waiting');
        relay2.close();
        assert.match((await waiting)!.error ?? '', /cannot be reached/);
      } finally {
        relay2.close();
      }
      // connectForLook is the look's own connection: its bound is fleet.connect_timeout.
      const db = await connectForLook(config, env, (x) => x);
      await assert.rejects(db.query('SELECT 1 FROM fleet_hosts'), /did not answer within 1 s/);
      await db.close();
      // doctor's check: its first read, of the schema's version, unanswered.
      const relay3 = await silencingRelay(pg.port, 'to_regclass');
      try {
        const check = await fleetCheck(config, { NIGHTSHIFT_DATABASE_URL: relay3.url(name) }, (x) => x);
        assert.equal(check!.status, 'fail');
        assert.match(check!.detail, /cannot be reached: it did not answer within 1 s/);
      } finally {
        relay3.close();
      }
    } finally {
      relay.close();
    }
  });
});

describe('the fleet\'s database unreachable', () => {
  // mutation: fleet-look-throws, caught here.
  test('status and status --json exit 0 as before and say so naming host:port/database, never the password; the page too; control: fires --fleet exits 69', async (t) => {
    const port = await freePort();
    const url = `postgres://fleet:${PASSWORD}@127.0.0.1:${port}/fleet`;
    const a = host(t, 'host-a', url);
    const one = host(t, 'host-a', null);
    const [down, alone] = await Promise.all([a, one].map((ws) => nightshift(['status', '--json'], ws.env, ws.dir)));
    assert.equal(down.code, 0, down.stderr);
    assert.equal(alone.code, 0, alone.stderr);
    const s = JSON.parse(down.stdout);
    assert.equal(s.fleet.database, `127.0.0.1:${port}/fleet`);
    assert.match(s.fleet.error, new RegExp(`the fleet's database at 127\\.0\\.0\\.1:${port}/fleet \\(NIGHTSHIFT_DATABASE_URL in the env file\\) cannot be reached: .*ECONNREFUSED`));
    assert.deepEqual([s.fleet.hosts, s.fleet.running, s.fleet.day], [[], [], null]);
    // This host's own state, as it is without a fleet.
    const own = JSON.parse(alone.stdout);
    assert.equal(own.fleet, null);
    assert.deepEqual(Object.keys(s).sort(), Object.keys(own).sort());
    assert.deepEqual([s.budget, s.next.agent, s.running], [own.budget, own.next.agent, own.running]);

    const text = await nightshift(['status'], a.env, a.dir);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^budget\s+0 of \d+ sessions/m);
    assert.match(text.stdout, new RegExp(`^fleet\\s+127\\.0\\.0\\.1:${port}/fleet: the fleet's database at .* cannot be reached: .*\\(this host's own state above; nothing from the other hosts\\)$`, 'm'));

    // The page: gathered as `nightshift web` gathers it, the env as the env file gives it.
    const env = { ...a.env, NIGHTSHIFT_DATABASE_URL: url };
    const html = renderPage(await pageData(loadConfig(a.config), { logger: silentLogger(), env, redact: makeRedactor(secretValues(env)) }));
    assert.match(html, new RegExp(`<p id="fleet-error" class="bad">the fleet's database cannot be seen: the fleet&#39;s database at 127\\.0\\.0\\.1:${port}/fleet `));
    assert.match(html, /<section id="now">/);

    // Control: the outage is real, and a command that asks for the fleet fails on it.
    const fires = await nightshift(['fires', '--fleet'], a.env, a.dir);
    assert.equal(fires.code, 69, fires.stderr);
    assert.match(fires.stderr, new RegExp(`127\\.0\\.0\\.1:${port}/fleet`));
    for (const r of [down, text, fires]) assert.ok(!(r.stdout + r.stderr).includes(PASSWORD), r.stdout + r.stderr);
    assert.ok(!html.includes(PASSWORD));
  });

  // mutation: fleet-look-unredacted, caught here.
  // A driver whose error carried its connection string (pg's does not today): the look's words go
  // through the redactor. Control: without it, the password is there.
  test('an outage whose cause names the URL is said without the password; control: an identity redactor leaves it', async () => {
    const url = `postgres://fleet:${PASSWORD}@db.internal:5432/fleet`;
    const env = { NIGHTSHIFT_DATABASE_URL: url };
    const config = { fleet: { host: 'host-a', connect_timeout: 1000, grace: 0, lease: 1000 }, budget: { timezone: 'UTC' } } as any;
    const connect = async () => {
      throw new FleetUnavailableError(`the fleet's database at db.internal:5432/fleet cannot be reached: refused ${url}; nothing was claimed`);
    };
    const at = (iso: string) => iso;
    const kept = await fleetLook(config, env, makeRedactor(secretValues(env)), new Date(), connect);
    const bare = await fleetLook(config, env, (x) => x, new Date(), connect);
    assert.equal(kept!.database, 'db.internal:5432/fleet');
    assert.ok(!fleetLines(kept!, at).join('\n').includes(PASSWORD), fleetLines(kept!, at).join('\n'));
    assert.ok(!fleetSection(pageOf({ fleet: kept })).includes(PASSWORD));
    assert.ok(fleetLines(bare!, at).join('\n').includes(PASSWORD));
    assert.ok(fleetSection(pageOf({ fleet: bare })).includes(PASSWORD));
  });
});

describe('no fleet', () => {
  // A resolve hook that notes each import of pg.
  function hooked(t: TestContext): { env: NodeJS.ProcessEnv; loaded: () => boolean } {
    const dir = tempDir(t);
    const marker = path.join(dir, 'pg-loaded');
    const hook = path.join(dir, 'hook.mjs');
    fs.writeFileSync(hook, `import { registerHooks } from 'node:module';\nimport fs from 'node:fs';\nregisterHooks({ resolve(spec, ctx, next) { if (spec === 'pg' || spec.startsWith('pg/')) fs.writeFileSync(${JSON.stringify(marker)}, spec); return next(spec, ctx); } });\n`);
    return { env: { NODE_OPTIONS: `--import=${hook}` }, loaded: () => fs.existsSync(marker) };
  }

  test('without the URL, status and the page say nothing of a fleet and pg is never loaded; control: with the URL, status loads it', async (t) => {
    const one = host(t, 'host-a', null);
    const h = hooked(t);
    const r = await nightshift(['status', '--json'], { ...one.env, ...h.env }, one.dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).fleet, null);
    assert.equal((await nightshift(['status'], { ...one.env, ...h.env }, one.dir)).stdout.includes('fleet'), false);
    assert.equal(h.loaded(), false);
    assert.equal(fleetSection(pageOf(JSON.parse(r.stdout))), '');
    // --fleet without the URL: said, with where this host's fires are.
    const f = await nightshift(['fires', '--fleet'], one.env, one.dir);
    assert.equal(f.code, 64);
    assert.match(f.stderr, /NIGHTSHIFT_DATABASE_URL is not set in the env file: this host's own fires are `nightshift fires`/);

    const withUrl = host(t, 'host-a', `postgres://fleet:${PASSWORD}@127.0.0.1:${await freePort()}/fleet`);
    const c = hooked(t);
    assert.equal((await nightshift(['status', '--json'], { ...withUrl.env, ...c.env }, withUrl.dir)).code, 0);
    assert.equal(c.loaded(), true);
  });
});
