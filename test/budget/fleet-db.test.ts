// The fleet's database (budget/fleet-db.ts) on a real PostgreSQL: versioned migrations applied
// once, a host that refuses a schema it does not know (behind: migrate; ahead: upgrade), and an
// unreachable database said by its host, never its password.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkSchema, connectFleet, FLEET_SCHEMA_VERSION, migrate, schemaProblem, schemaVersion } from '../../budget/fleet-db.js';
import { fleetTarget } from '../../config/fleet-url.js';
import { FleetSetupError, FleetUnavailableError } from '../../core/errors.js';
import { makeRedactor, secretValues } from '../../core/redact.js';
import { NEEDS_POSTGRES, startCluster, type Cluster } from '../pg-cluster.js';

test('NIGHTSHIFT_DATABASE_URL: unset is no fleet; a PostgreSQL URL is named by host, port and database only; anything else is refused', () => {
  assert.equal(fleetTarget({}), null);
  assert.equal(fleetTarget({ NIGHTSHIFT_DATABASE_URL: ' ' }), null);
  assert.deepEqual(fleetTarget({ NIGHTSHIFT_DATABASE_URL: 'postgres://ns:hunter2-pw@db.example:6543/nightshift' }), { url: 'postgres://ns:hunter2-pw@db.example:6543/nightshift', where: 'db.example:6543/nightshift' });
  assert.equal(fleetTarget({ NIGHTSHIFT_DATABASE_URL: 'postgresql://db.example/ns' })!.where, 'db.example:5432/ns');
  assert.throws(() => fleetTarget({ NIGHTSHIFT_DATABASE_URL: 'mysql://u:p@db/x' }), (e: Error) => e instanceof FleetSetupError && /is a mysql URL: expected `postgres:\/\//.test(e.message) && !e.message.includes('u:p'));
  assert.throws(() => fleetTarget({ NIGHTSHIFT_DATABASE_URL: 'db.example' }), FleetSetupError);
});

test('the URL is a secret: its password and the whole URL are redacted, its host is not', () => {
  const url = 'postgres://ns:hunter2-pw@db.example:6543/nightshift';
  const redact = makeRedactor(secretValues({ NIGHTSHIFT_DATABASE_URL: url }));
  assert.equal(redact(`at ${url} with hunter2-pw on db.example:6543/nightshift`), 'at [redacted] with [redacted] on db.example:6543/nightshift');
});

test('a schema behind this nightshift asks for `db migrate`; one ahead asks for an upgrade; its own is fine', () => {
  assert.equal(schemaProblem(FLEET_SCHEMA_VERSION, 'h:1/d'), null);
  assert.match(schemaProblem(0, 'h:1/d')!, /at schema version 0, and this nightshift needs \d+: run `nightshift db migrate`/);
  assert.match(schemaProblem(FLEET_SCHEMA_VERSION + 1, 'h:1/d')!, /does not know: a newer nightshift migrated it; upgrade nightshift on this host/);
});

describe('the fleet\'s database', { skip: NEEDS_POSTGRES }, () => {
  let pg: Cluster;
  before(async () => {
    pg = await startCluster();
  });
  after(() => pg?.close());
  const open = (db: string) => connectFleet({ url: pg.url(db), where: `127.0.0.1:${pg.port}/${db}` }, { connectTimeoutMs: 10_000, redact: (t) => t });

  test('migrate applies every version once; a host refuses the database before it and after a newer nightshift migrated it', async () => {
    const db = await open(pg.createDb());
    try {
      await assert.rejects(checkSchema(db), (e: Error) => e instanceof FleetSetupError && /run `nightshift db migrate`/.test(e.message));
      const first = await migrate(db);
      assert.deepEqual([first.from, first.to, first.applied.map((a) => a.version)], [0, FLEET_SCHEMA_VERSION, [1, 2, 3]]);
      const again = await migrate(db);
      assert.deepEqual([again.from, again.to, again.applied], [FLEET_SCHEMA_VERSION, FLEET_SCHEMA_VERSION, []]);
      assert.equal(await checkSchema(db), FLEET_SCHEMA_VERSION);
      // A newer nightshift's version: refused by this host, and left as it is by its migrate.
      await db.query(`INSERT INTO nightshift_schema (version, what) VALUES (99, 'from the future')`);
      await assert.rejects(checkSchema(db), (e: Error) => e instanceof FleetSetupError && /schema version 99, which this nightshift \(schema \d+\) does not know.*upgrade nightshift on this host/.test(e.message));
      await assert.rejects(migrate(db), FleetSetupError);
      assert.equal(await schemaVersion(db), 99);
    } finally {
      await db.close();
    }
  });

  test('two hosts migrating at once apply each version once', async () => {
    const name = pg.createDb();
    const [a, b] = await Promise.all([open(name), open(name)]);
    try {
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      assert.deepEqual([...ra.applied, ...rb.applied].map((x) => x.version).sort(), [1, 2, 3]);
      const rows = await a.query<{ n: number }>('SELECT count(*)::int AS n FROM nightshift_schema');
      assert.equal(rows.rows[0].n, FLEET_SCHEMA_VERSION);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  // The transaction is pipelined: BEGIN goes out with its first statements and COMMIT right behind
  // a write it left unawaited. A write that fails there must still roll the whole back and throw.
  test('a write left unawaited that fails behind the COMMIT rolls the transaction back and throws its error; a statement sent meanwhile lands outside it', async () => {
    const db = await open(pg.createDb());
    try {
      await migrate(db);
      let outside: Promise<unknown> | null = null;
      await assert.rejects(db.transaction(async (tx) => {
        await tx.query(`INSERT INTO fleet_days (day) VALUES ('d1')`);
        outside = db.query(`INSERT INTO fleet_days (day) VALUES ('d-outside')`);
        void tx.query(`INSERT INTO fleet_reservations (session_id, day, agent, host, reserved_usd, status, expires_at) VALUES ('s', 'd1', 'a', 'h', -1, 'held', now())`);
        return 'done';
      }), (e: Error & { code?: string }) => e.code === '23514' && /reserved_usd/.test(e.message));
      await outside;
      const days = (await db.query<{ day: string }>('SELECT day FROM fleet_days ORDER BY day')).rows.map((r) => r.day);
      assert.deepEqual(days, ['d-outside'], 'the day written inside the failed transaction is gone; the one outside it stays');
      // Control: the same transaction with a valid write commits both.
      assert.equal(await db.transaction(async (tx) => {
        await tx.query(`INSERT INTO fleet_days (day) VALUES ('d2')`);
        void tx.query(`INSERT INTO fleet_reservations (session_id, day, agent, host, reserved_usd, status, expires_at) VALUES ('s', 'd2', 'a', 'h', 1, 'held', now())`);
        return 'done';
      }), 'done');
      assert.equal((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fleet_reservations WHERE day = 'd2'`)).rows[0].n, 1);
    } finally {
      await db.close();
    }
  });

  test('an unreachable database is FleetUnavailableError naming its host and port, never the password', async () => {
    const name = pg.createDb();
    const url = pg.url(name, 'hunter2-pw');
    const target = fleetTarget({ NIGHTSHIFT_DATABASE_URL: url })!;
    // Control: reachable, with the same URL (the throwaway cluster trusts loopback).
    const up = await connectFleet(target, { connectTimeoutMs: 10_000, redact: (t) => t });
    await up.close();
    pg.stop('immediate');
    try {
      await assert.rejects(connectFleet(target, { connectTimeoutMs: 10_000, redact: makeRedactor(secretValues({ NIGHTSHIFT_DATABASE_URL: url })) }), (e: Error) => {
        assert.ok(e instanceof FleetUnavailableError, String(e));
        assert.equal(e.exitCode, 69);
        assert.match(e.message, new RegExp(`^the fleet's database at 127\\.0\\.0\\.1:${pg.port}/${name} \\(NIGHTSHIFT_DATABASE_URL in the env file\\) cannot be reached: .*ECONNREFUSED`));
        assert.ok(!e.message.includes('hunter2-pw'));
        return true;
      });
    } finally {
      pg.start();
    }
  });
});
