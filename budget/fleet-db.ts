// The fleet's PostgreSQL (NIGHTSHIFT_DATABASE_URL), the one owner of its connection and schema:
// what several hosts must share to stay under one budget (the day's reservations, the fires'
// claims, the holds and their releases). Each host's SQLite ledger and fires stay its own record.
// pg loads only here, only when the URL is set (outside the bundle: deploy/bundle.mjs). Migrations
// are versioned and applied by `nightshift db migrate`; a host meets a version it does not know
// with a refusal that names the fix.
import type { Client } from 'pg';
import { FleetSetupError, FleetUnavailableError } from '../core/errors.js';
import { FLEET_URL_VAR, type FleetTarget } from '../config/fleet-url.js';

// What the fleet's tables are written through: one connection, statements in order. Sessions
// side by side share it, so a transaction holds it whole (`transaction`): nothing of another
// session's (a settle) can land inside it, or be rolled back with it.
// A statement a hot path sends often: parsed and planned once a connection, by its name (a
// charge's read costs a third of its planning unprepared).
export type Prepared = { name: string; text: string };
export type FleetQuery = { query<T = Record<string, unknown>>(text: string | Prepared, values?: unknown[]): Promise<{ rows: T[]; rowCount: number | null }> };
export type FleetSql = FleetQuery & { transaction<T>(fn: (tx: FleetQuery) => Promise<T>): Promise<T> };

// Each version's statements, applied once, in order, each in its own transaction. Append only:
// a version once released never changes.
export const MIGRATIONS: ReadonlyArray<{ version: number; what: string; sql: string }> = [
  {
    version: 1,
    what: 'the day\'s reservations and the fires\' claims',
    sql: `
      -- One row a day: the lock every reservation of that day takes (SELECT ... FOR UPDATE).
      CREATE TABLE fleet_days (
        day text PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      -- One row a charged session, keyed by its id (the idempotency key): held until it settles
      -- or expires; an expired one counts only what it recorded as spent.
      CREATE TABLE fleet_reservations (
        session_id text PRIMARY KEY,
        day text NOT NULL REFERENCES fleet_days (day),
        agent text NOT NULL,
        host text NOT NULL,
        reserved_usd double precision NOT NULL CHECK (reserved_usd >= 0),
        spent_usd double precision NOT NULL DEFAULT 0 CHECK (spent_usd >= 0),
        status text NOT NULL CHECK (status IN ('held', 'settled', 'expired')),
        reserved_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        settled_at timestamptz
      );
      CREATE INDEX fleet_reservations_day ON fleet_reservations (day, status);
      -- At most one fire of an agent per scheduled slot, whichever host claims it first.
      CREATE TABLE fleet_claims (
        agent text NOT NULL,
        slot timestamptz NOT NULL,
        host text NOT NULL,
        claimed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent, slot)
      );`,
  },
  {
    version: 2,
    what: 'leases on the claims, renewed by a heartbeat; the hosts seen',
    sql: `
      -- A claim is live until it ends or its lease runs out (its host died): then it is settled
      -- 'crashed' by the next host that looks. A charged claim names its session.
      ALTER TABLE fleet_claims
        ADD COLUMN session_id text,
        ADD COLUMN lease_until timestamptz,
        ADD COLUMN ended_at timestamptz,
        ADD COLUMN outcome text;
      UPDATE fleet_claims SET lease_until = claimed_at, ended_at = claimed_at, outcome = 'ended';
      ALTER TABLE fleet_claims ALTER COLUMN lease_until SET NOT NULL;
      CREATE INDEX fleet_claims_live ON fleet_claims (agent) WHERE ended_at IS NULL;
      -- Each host as it was last heard: the database's time then, and how far the host's own clock
      -- was from it (leases are the database's time; a slot is the host's).
      CREATE TABLE fleet_hosts (
        host text PRIMARY KEY,
        seen_at timestamptz NOT NULL,
        skew_ms double precision NOT NULL,
        version text NOT NULL
      );`,
  },
  {
    version: 3,
    what: 'holds and hold releases shared',
    sql: `
      -- Each host's hold on an agent as its own ledger decides it (a rate limit, a backoff), written
      -- when one of its sessions settles; every host's dispatch reads the others'. set_at is the
      -- writing host's clock, as a release's time is the releasing host's.
      CREATE TABLE fleet_holds (
        agent text NOT NULL,
        host text NOT NULL,
        kind text NOT NULL,
        until timestamptz NOT NULL,
        reason text NOT NULL,
        failures integer NOT NULL,
        session_id text NOT NULL,
        set_at timestamptz NOT NULL,
        PRIMARY KEY (agent, host)
      );
      -- The operator's last release of an agent's hold, from any host: a hold set before it is
      -- lifted on every host.
      CREATE TABLE fleet_hold_releases (
        agent text PRIMARY KEY,
        host text NOT NULL,
        released_at timestamptz NOT NULL
      );`,
  },
];

// The version this nightshift writes and reads.
export const FLEET_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

// Any constant: migrations take this advisory lock, so two hosts migrating at once take turns.
const MIGRATE_LOCK = 5_505_505;

const VERSION_TABLE = `CREATE TABLE IF NOT EXISTS nightshift_schema (
  version integer PRIMARY KEY,
  what text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

export type FleetDb = FleetSql & { where: string; close(): Promise<void> };

// One connection to the fleet's database; unreachable (refused, no such host, a timeout, a refused
// login) is FleetUnavailableError naming `where` and the variable, never the URL.
// `answerTimeoutMs`: how long a statement may wait for its answer before the connection is given
// up as unreachable (a database that drops packets mid-way never says no).
export async function connectFleet(target: FleetTarget, o: { connectTimeoutMs: number; redact: (t: string) => string; answerTimeoutMs?: number }): Promise<FleetDb> {
  let pg: typeof import('pg');
  try {
    pg = ((await import('pg')) as unknown as { default: typeof import('pg') }).default;
  } catch (err) {
    throw new FleetSetupError(`${FLEET_URL_VAR} is set, and the package pg cannot be loaded: ${o.redact((err as Error).message)} (reinstall nightshift)`, { cause: err });
  }
  // Pipelined: a transaction's statements that do not wait on each other go out together, so the
  // day's lock is held for one round trip, not one a statement (./fleet-reservations.ts).
  const client: Client = new pg.Client({ connectionString: target.url, connectionTimeoutMillis: o.connectTimeoutMs, query_timeout: o.answerTimeoutMs ?? 60_000, application_name: 'nightshift', pipeline: true } as ConstructorParameters<typeof pg.Client>[0]);
  // A connection that drops while idle is said at its next query; unheard, node would crash on it.
  let lost: Error | null = null;
  client.on('error', (err) => (lost = err));
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw unavailable(target, err, o.redact);
  }
  const raw: FleetQuery = {
    async query<T>(text: string | Prepared, values?: unknown[]) {
      try {
        const r = typeof text === 'string' ? await client.query(text, values) : await client.query({ name: text.name, text: text.text, values });
        return { rows: r.rows as T[], rowCount: r.rowCount };
      } catch (err) {
        // A statement of ours that PostgreSQL refuses (a constraint, a syntax) is no outage.
        const code = String((err as { code?: unknown }).code ?? '');
        if (!lost && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57P)/.test(code)) throw err;
        // pg's own words for its query_timeout; said as what it means.
        const silent = !lost && (err as Error)?.message === 'Query read timeout';
        throw unavailable(target, silent ? new Error(`it did not answer within ${seconds(o.answerTimeoutMs ?? 60_000)}`) : lost ?? err, o.redact);
      }
    },
  };
  // One user of the connection at a time: a statement, or a whole transaction.
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const mine = turn.then(fn, fn);
    turn = mine.catch(() => {});
    return mine;
  };
  return {
    where: target.where,
    query: <T>(text: string | Prepared, values?: unknown[]) => exclusive(() => raw.query<T>(text, values)),
    // BEGIN goes out with the transaction's first statements, and COMMIT with its last: `fn` may
    // leave its writes unawaited (they are awaited here, after the COMMIT is sent). A statement
    // that fails aborts the transaction, so the COMMIT rolls back and the failure is thrown.
    transaction: <T>(fn: (tx: FleetQuery) => Promise<T>) => exclusive(async () => {
      const sent: Promise<unknown>[] = [];
      const tx: FleetQuery = {
        query: <R>(text: string | Prepared, values?: unknown[]) => {
          const p = raw.query<R>(text, values);
          p.catch(() => {});
          sent.push(p);
          return p;
        },
      };
      tx.query('BEGIN');
      let r: T;
      try {
        r = await fn(tx);
      } catch (err) {
        await Promise.allSettled(sent);
        await raw.query('ROLLBACK').catch(() => {});
        throw err;
      }
      const commit = raw.query('COMMIT');
      commit.catch(() => {});
      const failed = (await Promise.allSettled(sent)).find((x) => x.status === 'rejected');
      await commit;
      if (failed) throw (failed as PromiseRejectedResult).reason;
      return r;
    }),
    close: () => exclusive(() => client.end()).catch(() => {}),
  };
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

function unavailable(target: FleetTarget, err: unknown, redact: (t: string) => string): FleetUnavailableError {
  const why = redact(String((err as Error)?.message ?? err));
  return new FleetUnavailableError(`the fleet's database at ${target.where} (${FLEET_URL_VAR} in the env file) cannot be reached: ${why}; nothing was claimed or charged, and no session starts until it can be. Fix: start PostgreSQL there, or correct ${FLEET_URL_VAR}`, { cause: err });
}

// The schema's version (0: never migrated).
export async function schemaVersion(db: FleetQuery): Promise<number> {
  const t = await db.query<{ t: string | null }>(`SELECT to_regclass('nightshift_schema')::text AS t`);
  if (!t.rows[0]?.t) return 0;
  const r = await db.query<{ v: number | null }>('SELECT max(version) AS v FROM nightshift_schema');
  return r.rows[0]?.v ?? 0;
}

// Pure: why this host cannot run on a database at `version` (null: it can).
export function schemaProblem(version: number, where: string, known = FLEET_SCHEMA_VERSION): string | null {
  if (version === known) return null;
  if (version < known) return `the fleet's database at ${where} is at schema version ${version}, and this nightshift needs ${known}: run \`nightshift db migrate\``;
  return `the fleet's database at ${where} is at schema version ${version}, which this nightshift (schema ${known}) does not know: a newer nightshift migrated it; upgrade nightshift on this host`;
}

// Refuses a database this host does not know; returns its version.
export async function checkSchema(db: FleetDb): Promise<number> {
  const v = await schemaVersion(db);
  const problem = schemaProblem(v, db.where);
  if (problem) throw new FleetSetupError(problem);
  return v;
}

export type Migrated = { where: string; from: number; to: number; applied: Array<{ version: number; what: string }> };

// Applies what is missing, each version in its own transaction under the advisory lock; a database
// ahead of this nightshift is refused, never touched.
export async function migrate(db: FleetDb): Promise<Migrated> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK]);
    await tx.query(VERSION_TABLE);
  });
  const from = await schemaVersion(db);
  if (from > FLEET_SCHEMA_VERSION) throw new FleetSetupError(schemaProblem(from, db.where)!);
  const applied: Migrated['applied'] = [];
  for (const m of MIGRATIONS) {
    const did = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK]);
      // Another host may have applied it while this one waited for the lock.
      if ((await tx.query('SELECT 1 FROM nightshift_schema WHERE version = $1', [m.version])).rows.length) return false;
      await tx.query(m.sql);
      await tx.query('INSERT INTO nightshift_schema (version, what) VALUES ($1, $2)', [m.version, m.what]);
      return true;
    });
    if (did) applied.push({ version: m.version, what: m.what });
  }
  return { where: db.where, from, to: await schemaVersion(db), applied };
}
