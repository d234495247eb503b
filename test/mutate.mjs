// `npm run mutate [-- NAME ...] [--list] [--check] [--baseline] [--keep]`: each guarantee in
// test/mutations.mjs switched off in a copy of the repository, one at a time; the copy rebuilt and
// the mutation's tests run (CI=true). A mutation its tests still pass is a survivor: the guarantee
// could go and nothing would say so. Exits 1 when any survives (or could not be judged).
// The working tree is never written: the copy (the sources git knows of, tracked or not, with
// node_modules linked) lives beside it, not under /tmp, which the wall gives each session fresh.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MUTATIONS } from './mutations.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const flag = (f) => args.includes(f);
const names = args.filter((a) => !a.startsWith('--'));
const say = (line) => console.log(`mutate: ${line}`);

if (flag('--list')) {
  for (const m of MUTATIONS) console.log(`${m.name.padEnd(32)} ${m.file}: ${m.guarantee} [${m.tests.join(', ')}]`);
  process.exit(0);
}
const unknown = names.filter((n) => !MUTATIONS.some((m) => m.name === n));
if (unknown.length) {
  console.error(`mutate: no mutation named ${unknown.join(', ')} (npm run mutate -- --list)`);
  process.exit(64);
}
const chosen = MUTATIONS.filter((m) => !names.length || names.includes(m.name));

// Pure: the count of `find` in `text` (a mutation applies only where it is exact and unique).
const occurrences = (text, find) => text.split(find).length - 1;

// A list gone stale (a find string edited away, or matching twice) fails before any build.
const stale = chosen.flatMap((m) => {
  const file = path.join(ROOT, m.file);
  if (!fs.existsSync(file)) return [`${m.name}: ${m.file} is not there`];
  const n = occurrences(fs.readFileSync(file, 'utf8'), m.find);
  return n === 1 ? [] : [`${m.name}: its find string occurs ${n} times in ${m.file}, expected once`];
});
if (stale.length) {
  for (const s of stale) console.error(`mutate: ${s}`);
  process.exit(2);
}
if (flag('--check')) {
  say(`${chosen.length} mutations, each find string found once`);
  process.exit(0);
}

const run = (cmd, argv, cwd, o = {}) => spawnSync(cmd, argv, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, CI: 'true' }, ...o });

// The copy: every file git would see (tracked, and untracked but not ignored), so uncommitted work is
// judged as it stands; node_modules linked, dist/ built afresh.
const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], ROOT);
if (listed.status !== 0) {
  console.error(`mutate: git ls-files failed in ${ROOT}: ${listed.stderr}`);
  process.exit(70);
}
const base = process.env.NIGHTSHIFT_MUTATE_DIR || path.dirname(ROOT);
const copy = fs.mkdtempSync(path.join(base, `.${path.basename(ROOT)}-mutate-`));
fs.chmodSync(copy, 0o755); // the session user passes through to the CLI and the vaults, as in a clone
const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-mutate-logs-'));
const cleanup = () => {
  if (!flag('--keep')) fs.rmSync(copy, { recursive: true, force: true });
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});
for (const rel of listed.stdout.split('\0').filter(Boolean)) {
  const from = path.join(ROOT, rel);
  if (rel === 'node_modules' || rel.startsWith('node_modules/') || !fs.existsSync(from)) continue;
  const to = path.join(copy, rel);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { preserveTimestamps: true, verbatimSymlinks: true });
}
fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
say(`copy of ${ROOT} in ${copy}; logs in ${logs}`);

const tsc = path.join(copy, 'node_modules', 'typescript', 'bin', 'tsc');
const build = () => {
  const steps = [[tsc, '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', '.mutate.tsbuildinfo'], ['deploy/landlock-prefix.mjs'], ['deploy/bundle.mjs']];
  for (const s of steps) {
    const r = run(process.execPath, s, copy);
    if (r.status !== 0) return `${path.basename(s[0])} exited ${r.status ?? r.signal}:\n${r.stdout}${r.stderr}`.trim();
  }
  return null;
};
// The named tests, through test/run.mjs (its closing line: `N passed, N failed, N skipped`).
const test = (m, label) => {
  const r = run(process.execPath, ['test/run.mjs', ...m.tests], copy, { timeout: 30 * 60_000 });
  fs.writeFileSync(path.join(logs, `${label}.log`), `${r.stdout}${r.stderr}`);
  const count = /(\d+) passed, (\d+) failed, (\d+) skipped/.exec(r.stdout.split('\n').filter(Boolean).at(-1) ?? '');
  const failing = [...r.stdout.matchAll(/^test at (\S+)\n✖ (.*?)(?: \(\d[\d.]*ms\))?$/gm)].map((x) => x[2]);
  return { code: r.status, signal: r.signal, passed: count ? Number(count[1]) : 0, failed: count ? Number(count[2]) : 0, failing };
};

const results = [];
let dirty = true; // dist/ not yet built from the sources as they stand
const started = Date.now();
try {
  if (flag('--baseline')) {
    const broken = build();
    if (broken) throw new Error(`the unmutated copy does not build: ${broken}`);
    dirty = false;
    for (const m of chosen) {
      const r = test(m, `baseline-${m.name}`);
      if (r.code !== 0 || r.failed > 0) throw new Error(`baseline: ${m.tests.join(', ')} fail${r.failing.length ? `s (${r.failing.join('; ')})` : 's'} without any mutation: see ${logs}/baseline-${m.name}.log`);
    }
    say(`baseline: every named test passes unmutated`);
  }
  // What runs as written goes first, while dist/ is the sources' own.
  for (const m of [...chosen.filter((x) => x.build === false), ...chosen.filter((x) => x.build !== false)]) {
    const file = path.join(copy, m.file);
    const original = fs.readFileSync(file, 'utf8');
    const t0 = Date.now();
    let verdict;
    try {
      if (m.build === false && dirty) {
        const broken = build();
        if (broken) throw new Error(`the unmutated copy does not build: ${broken}`);
        dirty = false;
      }
      fs.writeFileSync(file, original.replace(m.find, () => m.replace));
      const broken = m.build === false ? null : build();
      if (m.build !== false) dirty = true;
      if (broken) verdict = { name: m.name, status: 'error', why: `the mutated copy does not build: ${broken.split('\n').slice(0, 5).join(' / ')}` };
      else {
        const r = test(m, m.name);
        if (r.failed > 0 || (r.code !== 0 && r.code !== null)) verdict = { name: m.name, status: 'caught', why: r.failing.length ? r.failing.join('; ') : `exit ${r.code}` };
        else if (r.signal) verdict = { name: m.name, status: 'error', why: `the tests were ended (${r.signal}): see ${logs}/${m.name}.log` };
        else if (r.passed === 0) verdict = { name: m.name, status: 'error', why: 'no test ran' };
        else verdict = { name: m.name, status: 'survived', why: `${r.passed} passed: ${m.tests.join(', ')}` };
      }
    } finally {
      fs.writeFileSync(file, original);
    }
    results.push(verdict);
    say(`${verdict.status.padEnd(8)} ${m.name} (${Math.round((Date.now() - t0) / 1000)} s): ${verdict.why}`);
  }
} catch (err) {
  console.error(`mutate: ${err.message}`);
  cleanup();
  process.exit(70);
}
cleanup();
const n = (s) => results.filter((r) => r.status === s).length;
say(`${n('caught')} caught, ${n('survived')} survived, ${n('error')} not judged, of ${results.length} (${Math.round((Date.now() - started) / 60_000)} min)`);
for (const r of results.filter((x) => x.status !== 'caught')) say(`${r.status}: ${r.name}: ${r.why}`);
process.exit(n('survived') + n('error') > 0 ? 1 : 0);
