// `npm run compat -- --cli VERSION`: the end-to-end subset (a session, a tool call, the watchdog,
// an interrupt, the meter, the wall) against any Claude Code release, installed once into a cache
// under /opt (a walled session cannot reach /tmp or a home), so the next upgrade is one command.
// Its last line: `compat: claude-code VERSION on node vX: N passed, N failed, N skipped`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const USAGE = `usage: npm run compat -- --cli VERSION [--only SUBSTRING ...]

Runs the end-to-end subset against @anthropic-ai/claude-code@VERSION, installed (npm install
--prefix) into $NIGHTSHIFT_COMPAT_CACHE/claude-code-VERSION (default /opt/nightshift-compat).
  --cli VERSION     a release, e.g. 2.1.332 (npm view @anthropic-ai/claude-code versions)
  --only SUBSTRING  run these test files instead of the subset (as test/run.mjs takes them)
Exit: 0 all passed, 1 a test failed, 64 usage, 69 the CLI could not be installed.`;

// The subset: a session and a tool call, the watchdog, the stall and the loop (run), an interrupt,
// the meter, the tools sent, the wall.
export const SUBSET = ['e2e/run.test', 'e2e/tools.test', 'e2e/meter.test', 'e2e/interrupt.test', 'e2e/sandbox-escape.test'];

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
let version = null;
const only = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--cli') version = args[++i] ?? null;
  else if (args[i] === '--only') only.push(args[++i]);
  else {
    console.error(`compat: unknown argument ${JSON.stringify(args[i])}\n${USAGE}`);
    process.exit(64);
  }
}
if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
  console.error(`compat: --cli needs a release number like 2.1.332 (got ${JSON.stringify(version)})\n${USAGE}`);
  process.exit(64);
}

const root = path.join(import.meta.dirname, '..');
const cache = process.env.NIGHTSHIFT_COMPAT_CACHE || '/opt/nightshift-compat';
const prefix = path.join(cache, `claude-code-${version}`);
const cli = path.join(prefix, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
const said = () => spawnSync(cli, ['--version'], { encoding: 'utf8', timeout: 60_000 }).stdout?.trim() ?? '';

if (!said().startsWith(`${version} `)) {
  console.log(`compat: installing @anthropic-ai/claude-code@${version} into ${prefix}`);
  fs.mkdirSync(prefix, { recursive: true, mode: 0o755 });
  const r = spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `@anthropic-ai/claude-code@${version}`], { stdio: 'inherit' });
  // The native binary, not the stub npm leaves when the install script did not run.
  if (r.status !== 0 || !said().startsWith(`${version} `)) {
    console.error(`compat: @anthropic-ai/claude-code@${version} did not install at ${prefix} (${cli} --version said ${JSON.stringify(said())}); check the version exists: npm view @anthropic-ai/claude-code@${version} version`);
    process.exit(69);
  }
}
// The session user walks through the cache to the CLI.
for (let d = prefix; d.startsWith(cache); d = path.dirname(d)) fs.chmodSync(d, 0o755);
console.log(`compat: ${said()} at ${cli}`);

const run = spawnSync(process.execPath, [path.join(root, 'test', 'run.mjs'), ...(only.length ? only : SUBSET)], {
  env: { ...process.env, NIGHTSHIFT_TEST_CLAUDE: cli },
  encoding: 'utf8',
  maxBuffer: 512 * 1024 * 1024,
  stdio: ['ignore', 'pipe', 'inherit'],
});
process.stdout.write(run.stdout);
const last = run.stdout.trim().split('\n').at(-1) ?? '';
console.log(`compat: claude-code ${version} on node ${process.version}: ${last.replace(/ on node \S+$/, '')}`);
process.exit(run.status ?? 1);
