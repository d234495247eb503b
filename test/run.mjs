// Runs every compiled test file with node's own test runner, then prints our own closing line,
// `N passed, N failed, N skipped on node vX.Y.Z`, last (CI reads it): node 20's summary drops the tests of a
// skipped suite, so the count comes from test/reporter.mjs's records (test/summary.mjs).
// NIGHTSHIFT_TEST_ROOT runs another folder of *.test.js / *.test.mjs (the runner's own fixtures).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closingLines, summarize } from './summary.mjs';

// Where a clone others cannot reach is mirrored for its tests (beside the tests' CLI copies).
const MIRRORS = '/opt/nightshift-test-clone';

// The first folder above `p` without search for others, or null.
function closedToOthers(p) {
  const parts = p.split('/').filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const dir = `/${parts.slice(0, i).join('/')}`;
    if (!(fs.statSync(dir).mode & 0o001)) return dir;
  }
  return null;
}

// The suites docs/development.md calls proofs: under CI=true their skips are failures. CI runs as
// root with python3, perl, bubblewrap, iproute2 and the kernel headers (.ci/run), so a proof that
// skips for want of one of them there has lost what it proves.
const PROOFS = [
  'deploy/systemd-real', 'deploy/install', 'e2e/sandbox-escape', 'e2e/stream-forgery', 'e2e/network', 'e2e/egress', 'e2e/git-nested',
  'e2e/limits', 'e2e/seccomp', 'sessions/wall/seccomp', 'sessions/wall/landlock', 'sessions/wall/bridge',
  'e2e/session-user', 'e2e/disk-full', 'e2e/disk-inodes', 'e2e/root-logs', 'config/session-user',
  // Each skips where its part is missing (a non-x64 forger, a CLI without the messaging socket, no
  // nspawn): under CI that is a failure with its reason, never a silent pass.
  'e2e/wall-redteam', 'e2e/turns', 'e2e/messaging-socket', 'deploy/alarm-real',
  // The fleet's guarantees need a real PostgreSQL (.ci/run installs it; the tests make their own cluster).
  'budget/fleet-db', 'budget/fleet-reservations', 'budget/fleet-claims', 'e2e/fleet',
];

// On an older Node (Debian's 20) better-sqlite3, built for the clone's Node, would fail every
// test that opens a database: say which Node to use instead.
if (Number(process.versions.node.split('.')[0]) < 22) {
  const bin = path.join(import.meta.dirname, '..', 'node_modules', '.bin', 'node');
  console.error(`test/run.mjs: nightshift's tests run on Node 22 or later, and this is ${process.version}: run \`npm test\`${fs.existsSync(bin) ? `, or ${path.relative(process.cwd(), bin) || bin} test/run.mjs` : ' on Node 22 or 24'}`);
  process.exit(69);
}
// A clone behind a folder other users cannot pass (root's 0700 home, ~/src/nightshift): the tests
// run its build and its Node as other users too (the session user, nobody, the units' user), who
// could not reach them there. They run from a mirror of the clone under /opt instead: the same
// files, hard-linked (a copy where links cannot be made), remade for each run.
const CLONE = path.resolve(import.meta.dirname, '..');
const closed = closedToOthers(CLONE);
if (closed && process.getuid?.() === 0 && !process.env.NIGHTSHIFT_TEST_MIRRORED && !process.env.NIGHTSHIFT_TEST_ROOT) {
  const mirror = path.join(MIRRORS, `${path.basename(CLONE)}-${createHash('sha256').update(CLONE).digest('hex').slice(0, 8)}`);
  fs.mkdirSync(MIRRORS, { recursive: true });
  fs.chmodSync(MIRRORS, 0o755);
  fs.rmSync(mirror, { recursive: true, force: true });
  if (spawnSync('cp', ['-al', CLONE, mirror], { stdio: 'ignore' }).status !== 0) {
    fs.rmSync(mirror, { recursive: true, force: true });
    const c = spawnSync('cp', ['-a', CLONE, mirror], { encoding: 'utf8' });
    if (c.status !== 0) throw new Error(`test/run.mjs: cannot mirror ${CLONE} to ${mirror}: ${c.stderr}`);
  }
  const moved = (p) => (p === CLONE || p.startsWith(`${CLONE}/`) ? mirror + p.slice(CLONE.length) : p);
  console.error(`test/run.mjs: this clone lies in ${closed} (mode 0${(fs.statSync(closed).mode & 0o777).toString(8)}), which the users the tests run as cannot pass through: running them from ${mirror}, the same files hard-linked`);
  const r = spawnSync(moved(fs.realpathSync(process.execPath)), [path.join(mirror, 'test', 'run.mjs'), ...process.argv.slice(2)], {
    stdio: 'inherit', cwd: moved(process.cwd()),
    env: { ...process.env, NIGHTSHIFT_TEST_MIRRORED: CLONE, PATH: (process.env.PATH ?? '').split(':').map(moved).join(':') },
  });
  process.exit(r.status ?? 1);
}

const root = path.resolve(process.env.NIGHTSHIFT_TEST_ROOT || path.join(import.meta.dirname, '..', 'dist', 'test'));
const files = [];
const walk = (dir) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.test\.m?js$/.test(e.name)) files.push(p);
  }
};
if (fs.existsSync(root)) walk(root);
const only = process.argv.slice(2);
const chosen = only.length ? files.filter((f) => only.some((o) => f.includes(o))) : files;
// With no paths `node --test` would run everything it finds, fixtures and this script included.
if (chosen.length === 0) {
  console.error(only.length
    ? `test/run.mjs: no compiled test file under ${path.relative(process.cwd(), root) || '.'} matches ${only.map((o) => JSON.stringify(o)).join(' or ')}`
    : `test/run.mjs: no compiled test files under ${root} (run npm run build first)`);
  process.exit(64);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-run-'));
const results = path.join(tmp, 'results.jsonl');
const env = { ...process.env };
delete env.NODE_TEST_CONTEXT; // run from inside a test, the inner runner must still report here
const r = spawnSync(process.execPath, [
  '--test', '--test-concurrency=2',
  '--test-reporter=spec', '--test-reporter-destination=stdout',
  `--test-reporter=${path.join(import.meta.dirname, 'reporter.mjs')}`, `--test-reporter-destination=${results}`,
  ...chosen.sort(),
], { stdio: 'inherit', env });
const records = fs.existsSync(results) ? fs.readFileSync(results, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
fs.rmSync(tmp, { recursive: true, force: true });
const summary = summarize(records, { root, ci: process.env.CI === 'true', proofs: PROOFS });
// A runner that died before reporting anything still fails the run.
if (r.status !== 0 && summary.failed === 0) {
  console.log(`node --test exited ${r.status ?? r.signal} with no failed test reported`);
  summary.failed = 1;
}
for (const line of closingLines(summary, process.version)) console.log(line);
process.exit(summary.failed > 0 ? 1 : 0);
