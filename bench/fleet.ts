// `npm run bench fleet` (issue 55's goals): a reservation's round trip with 8 racing for one day's
// row on a loopback PostgreSQL (goal p50 <= 3 ms, p99 <= 15 ms), as a burst and back to back, and a tick with nothing due on
// PostgreSQL against the same tick on the embedded SQLite (goal <= 1.5x); beside them, what a start
// that does connect pays (a spooled write waiting) and `status`, which asks the fleet each time.
// The cluster is the tests' own (test/pg-cluster.ts: Debian's postgresql, as root).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { connectFleet, migrate, type FleetDb } from '../budget/fleet-db.js';
import { reserveInFleet, settleInFleet } from '../budget/fleet-reservations.js';
import { chargeFor, chargeGuard, type DayTotals, type Limits } from '../budget/policy.js';
import { NODE_FLAGS } from '../core/node-flags.js';
import { NEEDS_POSTGRES, startCluster } from '../test/pg-cluster.js';
import { rotatedMedians } from './timing.js';

const RACERS = 8;
// Each day's row holds at most this many reservations (a busy day), then the next day's is raced for.
const PER_DAY = 64;

// A day with room for every charge of the run, as session-run.ts decides and guards a charge.
const LIMITS: Limits = { maxSessionsPerDay: 1_000_000, maxUsdPerDay: 1_000_000, maxUsdPerSession: 0.01, minSessionUsd: 0.01, maxRunsPerDay: null };
const decide = (agent: string) => (today: DayTotals) => chargeFor(agent, today, LIMITS, false);
const guard = (usd: number) => chargeGuard(LIMITS, usd);
// A day near its cap: the guarded write never holds, so every charge also reads the day under its lock.
const nearCap = (usd: number) => ({ ...chargeGuard(LIMITS, usd), committedAtMostUsd: -1 });
type Guard = typeof guard;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const r2 = (n: number) => Math.round(n * 100) / 100;

// Eight connections, each reserving as fast as it can (the next as soon as its last returns), all
// against the same day: every charge locks the day's row, so they queue behind each other.
async function reservations(url: string, each: number, warm: number, racers = RACERS, g: Guard = guard): Promise<{ p50: number; p99: number; max: number; n: number; per_s: number }> {
  const dbs: FleetDb[] = await Promise.all(Array.from({ length: racers }, () => connectFleet({ url, where: 'bench' }, { connectTimeoutMs: 10_000, redact: (t) => t })));
  try {
    let started = 0;
    const times: number[] = [];
    const t0 = performance.now();
    await Promise.all(dbs.map(async (db, i) => {
      for (let k = 0; k < each + warm; k++) {
        const n = started++;
        const session = `bench-${i}-${k}`;
        const s = performance.now();
        const r = await reserveInFleet(db, { session, day: `2099-01-01+${Math.floor(n / PER_DAY)}`, agent: `agent-${i}`, host: `host-${i % 2}`, expiresInMs: 600_000 }, decide(`agent-${i}`), g);
        const ms = performance.now() - s;
        if (!r.ok) throw new Error(`Expected the bench's reservation ${session} to be taken, got ${JSON.stringify(r)}`);
        if (k >= warm) times.push(ms);
        // Settled, as a session's end does (not timed): the day holds settled rows and held ones.
        if (k % 2) await settleInFleet(db, session, 0.005);
      }
    }));
    const wall = performance.now() - t0;
    return { p50: r2(pct(times, 50)), p99: r2(pct(times, 99)), max: r2(Math.max(...times)), n: times.length, per_s: Math.round((racers * (each + warm)) / (wall / 1000)) };
  } finally {
    await Promise.all(dbs.map((d) => d.close()));
  }
}

// Eight connections charging at one instant, as eight hosts' ticks do at the top of the hour, then
// quiet until the next round: the round trip a real race sees (the loop above never lets the row
// go idle, so it measures the queue at full throughput instead).
async function bursts(url: string, rounds: number, racers = RACERS, g: Guard = guard): Promise<{ p50: number; p99: number; max: number; n: number }> {
  const dbs: FleetDb[] = await Promise.all(Array.from({ length: racers }, () => connectFleet({ url, where: 'bench' }, { connectTimeoutMs: 10_000, redact: (t) => t })));
  try {
    const times: number[] = [];
    for (let k = 0; k < rounds + 3; k++) {
      const day = `2099-02-01+${k}`;
      const ms = await Promise.all(dbs.map(async (db, i) => {
        const s = performance.now();
        const r = await reserveInFleet(db, { session: `burst-${k}-${i}`, day, agent: `agent-${i}`, host: `host-${i}`, expiresInMs: 600_000 }, decide(`agent-${i}`), g);
        if (!r.ok) throw new Error(`Expected the bench's reservation burst-${k}-${i} to be taken, got ${JSON.stringify(r)}`);
        return performance.now() - s;
      }));
      if (k >= 3) times.push(...ms);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { p50: r2(pct(times, 50)), p99: r2(pct(times, 99)), max: r2(Math.max(...times)), n: times.length };
  } finally {
    await Promise.all(dbs.map((d) => d.close()));
  }
}

function timedCli(args: string[], env: NodeJS.ProcessEnv, cwd: string, check: (stdout: string) => void): Promise<number> {
  const bin = path.join(import.meta.dirname, '..', 'cli', 'bin.js');
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [...NODE_FLAGS, bin, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('error', reject);
    c.on('close', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`nightshift ${args.join(' ')} exited ${code}: ${err}`));
      try {
        check(out);
      } catch (e) {
        return reject(e);
      }
      resolve(ms);
    });
  });
}

// A site with nothing due (no dispatch rule, a claude that does not exist); `url`: its env file's.
function site(root: string, name: string, url: string | null): { dir: string; env: NodeJS.ProcessEnv; spool: string } {
  const dir = path.join(root, name);
  fs.mkdirSync(path.join(dir, 'vault'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'prompts'));
  fs.writeFileSync(path.join(dir, 'prompts', 'idle.md'), 'never due\n');
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), `claude:\n  command: ${JSON.stringify(path.join(dir, 'no-such-claude'))}\ngit:\n  enabled: false\nvault: ./vault\nstate_dir: ./state\nlog_dir: ./logs\nagents_dir: ./prompts\nfleet:\n  host: ${name}\ndispatch: []\n`);
  if (url) fs.writeFileSync(path.join(dir, 'nightshift.env'), `NIGHTSHIFT_DATABASE_URL=${url}\n`, { mode: 0o600 });
  return { dir, env: { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') }, spool: path.join(dir, 'state', 'fleet-spool') };
}

export async function fleetBench(runs = 20) {
  if (NEEDS_POSTGRES) {
    console.log(`fleet: not measured: ${NEEDS_POSTGRES}`);
    return { skipped: NEEDS_POSTGRES };
  }
  const load = [os.loadavg()[0]];
  const pg = await startCluster();
  const root = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-fleet-'));
  try {
    const url = pg.url(pg.createDb());
    const db = await connectFleet({ url, where: 'bench' }, { connectTimeoutMs: 10_000, redact: (t) => t });
    await migrate(db);
    await db.close();

    const each = Number(process.env.BENCH_RESERVATIONS) || 200;
    const res = await reservations(url, each, 10);
    // The same round trip alone (one connection): what a charge costs when no other waits for the row.
    const one = await reservations(url, each, 10, 1);
    const burst = await bursts(url, Number(process.env.BENCH_BURSTS) || 100);
    const nearOne = await reservations(url, each, 10, 1, nearCap);
    const nearBurst = await bursts(url, Number(process.env.BENCH_BURSTS) || 100, RACERS, nearCap);
    console.log(`fleet reservation, alone: p50 ${one.p50} ms, p99 ${one.p99} ms (${one.n} timed)`);
    console.log(`fleet reservation, ${RACERS} at one instant for one day's row (a burst, then quiet): p50 ${burst.p50} ms, p99 ${burst.p99} ms, max ${burst.max} ms (${burst.n} timed)`);
    console.log(`fleet reservation, ${RACERS} racing back to back for one day's row on loopback: p50 ${res.p50} ms, p99 ${res.p99} ms, max ${res.max} ms (${res.n} timed; ${res.per_s} reservations/s in all)`);

    console.log(`fleet reservation, a day near its cap (the guarded write, then the day read under its lock): alone p50 ${nearOne.p50} ms, p99 ${nearOne.p99} ms; ${RACERS} at one instant p50 ${nearBurst.p50} ms, p99 ${nearBurst.p99} ms`);

    const alone = site(root, 'sqlite', null);
    const fleet = site(root, 'fleet', url);
    const skip = (out: string) => {
      const r = JSON.parse(out);
      if (r.action !== 'skip' || r.session !== null) throw new Error(`Expected the bench tick to be a skip, got ${out}`);
    };
    // A start that connects: a spooled settle (of no session: it writes nothing) waits for it.
    const spooled = () => {
      fs.mkdirSync(fleet.spool, { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(fleet.spool, 'settle-bench-none.json'), `${JSON.stringify({ kind: 'settle', session: 'bench-none', spent_usd: 0 })}\n`, { mode: 0o600 });
    };
    const connected = (out: string) => {
      skip(out);
      if (fs.readdirSync(fleet.spool).length) throw new Error('Expected the tick to connect and write the spool, and it is still there');
    };
    const statusOf = (fleetWanted: boolean) => (out: string) => {
      const f = JSON.parse(out).fleet;
      if (fleetWanted ? !f || f.error : f !== null) throw new Error(`Expected status's fleet to be ${fleetWanted ? 'answered' : 'null'}, got ${JSON.stringify(f)}`);
    };
    // One of each first: the sites' ledgers and caches made outside the timing.
    for (const s of [alone, fleet]) {
      await timedCli(['tick', '--json'], s.env, s.dir, skip);
      await timedCli(['status', '--json'], s.env, s.dir, () => {});
    }
    const m = await rotatedMedians([
      ['tick_sqlite', () => timedCli(['tick', '--json'], alone.env, alone.dir, skip)],
      ['tick_pg', () => timedCli(['tick', '--json'], fleet.env, fleet.dir, skip)],
      ['tick_pg_connected', () => (spooled(), timedCli(['tick', '--json'], fleet.env, fleet.dir, connected))],
      ['status_sqlite', () => timedCli(['status', '--json'], alone.env, alone.dir, statusOf(false))],
      ['status_pg', () => timedCli(['status', '--json'], fleet.env, fleet.dir, statusOf(true))],
    ], runs);
    load.push(os.loadavg()[0]);
    const ratio = (a: number, b: number) => +(a / b).toFixed(2);
    console.log(`fleet tick, nothing due: PostgreSQL ${m.tick_pg.toFixed(0)} ms vs SQLite ${m.tick_sqlite.toFixed(0)} ms (median of ${runs}): ratio ${ratio(m.tick_pg, m.tick_sqlite)}`);
    console.log(`fleet tick, nothing due but connecting (a spooled write waits): ${m.tick_pg_connected.toFixed(0)} ms: ratio ${ratio(m.tick_pg_connected, m.tick_sqlite)} to SQLite's`);
    console.log(`fleet status --json: with the fleet's hosts ${m.status_pg.toFixed(0)} ms vs one host ${m.status_sqlite.toFixed(0)} ms: ratio ${ratio(m.status_pg, m.status_sqlite)}`);
    console.log(`fleet: load average ${load.map((l) => l.toFixed(1)).join(' -> ')} (1 min, at start and end)`);
    return {
      reservation: { racers: RACERS, ...res, alone: one, burst, near_cap: { alone: nearOne, burst: nearBurst } },
      tick: { runs, sqlite_median_ms: Math.round(m.tick_sqlite), pg_median_ms: Math.round(m.tick_pg), ratio: ratio(m.tick_pg, m.tick_sqlite), pg_connected_median_ms: Math.round(m.tick_pg_connected), connected_ratio: ratio(m.tick_pg_connected, m.tick_sqlite) },
      status: { sqlite_median_ms: Math.round(m.status_sqlite), pg_median_ms: Math.round(m.status_pg), ratio: ratio(m.status_pg, m.status_sqlite) },
      load,
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
    pg.close();
  }
}
