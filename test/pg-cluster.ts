// A throwaway PostgreSQL cluster for the fleet's tests (/work/shared/postgres.md): Debian's
// server binaries, initdb as the postgres user into a folder under /srv, listening on loopback at
// a free port with its socket in its own folder (nothing of a host's cluster is touched), fsync
// off. Stopped and removed when the test file ends. Needs root (initdb runs as postgres).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const BIN = (() => {
  try {
    const majors = fs.readdirSync('/usr/lib/postgresql').filter((d) => fs.existsSync(path.join('/usr/lib/postgresql', d, 'bin', 'initdb'))).sort((a, b) => Number(a) - Number(b));
    return majors.length ? path.join('/usr/lib/postgresql', majors[majors.length - 1], 'bin') : null;
  } catch {
    return null;
  }
})();

// Why the fleet's tests cannot run here (false: they can). Under CI it fails them (test/run.mjs PROOFS).
export const NEEDS_POSTGRES: string | false = !BIN
  ? 'PostgreSQL is not installed (apt-get install postgresql)'
  : process.getuid?.() !== 0 ? 'a throwaway PostgreSQL cluster is made as root (initdb runs as the postgres user)' : false;

export type Cluster = { port: number; dir: string; url: (db: string, password?: string) => string; createDb: () => string; stop: (mode?: 'fast' | 'immediate') => void; start: () => void; close: () => void };

// A loopback port nothing listens on once this returns (a cluster's, or a database that cannot be
// reached).
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const asPostgres = (args: string[]) => {
  const r = spawnSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr || r.stdout}`);
};

let dbs = 0;

export async function startCluster(): Promise<Cluster> {
  if (NEEDS_POSTGRES) throw new Error(NEEDS_POSTGRES);
  fs.mkdirSync('/srv', { recursive: true });
  const dir = fs.mkdtempSync('/srv/nightshift-pg-');
  fs.chmodSync(dir, 0o755);
  execFileSync('chown', ['postgres', dir]);
  asPostgres([path.join(BIN!, 'initdb'), '-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const start = () => asPostgres([path.join(BIN!, 'pg_ctl'), '-D', path.join(dir, 'data'), '-l', path.join(dir, 'pg.log'), '-w', 'start', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`]);
  const stop = (mode: 'fast' | 'immediate' = 'fast') => asPostgres([path.join(BIN!, 'pg_ctl'), '-D', path.join(dir, 'data'), '-m', mode, '-w', 'stop']);
  start();
  let running = true;
  return {
    port,
    dir,
    url: (db, password) => `postgres://postgres${password ? `:${password}` : ''}@127.0.0.1:${port}/${db}`,
    createDb: () => {
      const name = `fleet_${process.pid}_${++dbs}`;
      asPostgres([path.join(BIN!, 'psql'), '-h', dir, '-p', String(port), '-U', 'postgres', '-q', '-c', `CREATE DATABASE ${name}`]);
      return name;
    },
    stop: (mode) => {
      stop(mode);
      running = false;
    },
    start: () => {
      start();
      running = true;
    },
    close: () => {
      try {
        if (running) stop('immediate');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
