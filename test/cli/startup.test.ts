// Start-up: what `nightshift --help` loads before it answers. The bin's static import graph must
// hold only our own light modules and node builtins; everything else loads on the path that needs
// it (the figure itself is in `npm run bench`: `--help` against `node -e 0`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { BIN, nightshift, ROOT, tempDir } from '../helpers.js';

// Static `import … from '…'`, `import '…'` and `export … from '…'` of a compiled module; a dynamic
// `import('…')` is not one.
function staticImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const re = /^\s*(?:import|export)\s+(?:[\w*{][\s\S]*?\sfrom\s*)?['"]([^'"]+)['"]/gm;
  return [...text.matchAll(re)].map((m) => m[1]);
}

function staticGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.add(`${path.relative(ROOT, file)} -> ${spec}`);
    }
  };
  visit(entry);
  return { files: [...files].map((f) => path.relative(path.join(ROOT, 'dist'), f)), packages: [...packages] };
}

describe('start-up', () => {
  test('help takes the plain modules: their static graph holds no package, only node builtins and light modules of ours', () => {
    // The bin itself imports nothing but node builtins; it picks the plain CLI or the bundle.
    assert.deepEqual(staticGraph(BIN).packages, []);
    const { files, packages } = staticGraph(path.join(ROOT, 'dist', 'cli', 'cli.js'));
    assert.deepEqual(packages, [], 'a package in the static graph makes every command pay for it');
    assert.ok(files.includes('cli/main.js') && files.includes('cli/help.js'), files.join(' '));
    for (const heavy of ['config/config.js', 'daemon/tick/run.js', 'daemon/tick/tick.js', 'budget/ledger.js', 'logs/logger.js']) {
      assert.ok(!files.includes(heavy), `${heavy} is loaded by --help: ${files.join(' ')}`);
    }
  });

  test("a command's --help loads main and that command's module: each one main dispatches to has no package in its static graph", () => {
    const main = path.join(ROOT, 'dist', 'cli', 'main.js');
    const commands = [...fs.readFileSync(main, 'utf8').matchAll(/import\(\s*['"](\.\/commands\/[^'"]+)['"]\s*\)/g)].map((m) => path.resolve(path.dirname(main), m[1]));
    assert.ok(commands.length >= 20, `only ${commands.length} command modules found in ${main}`);
    for (const file of commands) {
      const { files, packages } = staticGraph(file);
      assert.deepEqual(packages, [], `${path.relative(ROOT, file)}: a package in its static graph makes its --help pay for it`);
      for (const heavy of ['config/config.js', 'daemon/tick/run.js', 'daemon/tick/tick.js', 'budget/ledger.js', 'logs/logger.js']) {
        assert.ok(!files.includes(heavy), `${heavy} is loaded by ${path.relative(ROOT, file)} --help: ${files.join(' ')}`);
      }
    }
  });

  test('a tick with nothing due and status load no session machinery: only a chosen session imports it', () => {
    const sessionOnly = ['daemon/tick/session.js', 'sessions/wall/guest.js', 'sessions/run/runner.js', 'sessions/capture/capture.js', 'sessions/state/session-state.js', 'report/session-report.js', 'memory/store.js', 'memory/open.js', 'sessions/wall/sandbox-check.js', 'sessions/wall/endpoints.js', 'sessions/wall/walled-command.js', 'sessions/hooks/guardrail.js'];
    for (const entry of ['daemon/tick/tick.js', 'daemon/tick/status.js', 'daemon/tick/supervise.js']) {
      const { files } = staticGraph(path.join(ROOT, 'dist', entry));
      assert.deepEqual(sessionOnly.filter((f) => files.includes(f)), [], `${entry} loads session machinery at start`);
    }
    // Control: the names are real, and the session's own module does load them.
    const { files } = staticGraph(path.join(ROOT, 'dist', 'daemon', 'tick', 'session.js'));
    assert.deepEqual([...sessionOnly.slice(1, 6), ...sessionOnly.slice(8)].filter((f) => !files.includes(f)), []);
  });

  test('a tick, status and a session over an unchanged site load no schema: zod is behind the dynamic import a miss takes', () => {
    // daemon/tick/session.js: the session machinery loads before the spawn, on its path (~17 ms
    // when doctor-setup took ruleTool from config/agents.js, and with it zod and the schema).
    for (const entry of ['config/config-file.js', 'config/config-path.js', 'config/agent-file.js', 'config/agent-text.js', 'config/name-warnings.js', 'daemon/tick/tick.js', 'daemon/tick/status.js', 'cli/commands/tick.js', 'cli/commands/status.js', 'daemon/tick/session.js', 'cli/commands/run.js']) {
      const { packages } = staticGraph(path.join(ROOT, 'dist', entry));
      assert.deepEqual(packages.filter((p) => p.endsWith('-> zod')), [], `${entry} loads zod at start`);
    }
    // Nor the YAML parser: a hit reads the kept config without it.
    assert.deepEqual(staticGraph(path.join(ROOT, 'dist', 'config', 'config-file.js')).packages, []);
    assert.deepEqual(staticGraph(path.join(ROOT, 'dist', 'daemon', 'tick', 'session.js')).packages.filter((p) => p.endsWith('-> yaml')), []);
    // Control: the walker finds zod where it is.
    assert.ok(staticGraph(path.join(ROOT, 'dist', 'config', 'agents.js')).packages.some((p) => p.endsWith('-> zod')));
  });

  test('every other command runs from the one bundled file, which requires only node builtins and the packages kept outside', (t) => {
    const bundle = path.join(ROOT, 'dist', 'bundle', 'cli.cjs');
    const text = fs.readFileSync(bundle, 'utf8');
    // A package left outside the bundle must be imported dynamically: a require would load it at
    // every start. better-sqlite3's compiled addon is the one exception (every command but help
    // opens a database); its JavaScript is inside.
    // ajv's two names are text inside the code it generates, never run here.
    const required = [...text.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
    const builtin = new Set(['assert', 'buffer', 'child_process', 'constants', 'events', 'fs', 'module', 'path', 'process', 'stream', 'url', 'util', 'worker_threads']);
    for (const spec of required) {
      assert.ok(spec.startsWith('node:') || builtin.has(spec) || spec === 'better-sqlite3/build/Release/better_sqlite3.node' || /^ajv(-formats)?\/dist\//.test(spec), `the bundle requires ${spec}`);
    }
    // Pure ASCII: the loader reads it as latin1.
    assert.doesNotMatch(text, /[^\x00-\x7f]/);
    // Its dynamic imports go through the loader's own import (a vm script has none).
    assert.doesNotMatch(text, /(?<![\w$.])import\(/);
    const dynamic = [...text.matchAll(/__nightshiftImport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
    // execa (doctor, status, lock), pdf.js (the imitation API's page count; the meter's worker
    // loads it from its own file) and pg (only with NIGHTSHIFT_DATABASE_URL, budget/fleet-db.ts):
    // each loaded only where it is used.
    assert.deepEqual([...new Set(dynamic)].sort(), ['execa', 'pdfjs-dist/legacy/build/pdf.mjs', 'pg']);
    // The bundle on its own answers a real command.
    const r = spawnSync(process.execPath, [BIN, 'status', '--json'], { cwd: tempDir(t), env: { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: path.join(tempDir(t), 'missing.yaml') }, encoding: 'utf8' });
    // No config: a config error (78) named by the bundled CLI itself, not a load failure.
    assert.equal(r.status, 78, r.stderr);
    assert.match(r.stderr, /missing\.yaml/);
  });

  // An ES module's default import of a CommonJS one becomes a copy of its every property; once per
  // importing module that was 73 copies of node:fs and 61 of node:path at every start. The build
  // sends each built-in through one module of its own (deploy/bundle.mjs): at most two requires
  // of it, the default and the names. Without that, node:fs alone is required 73 times.
  test('the bundle wraps each node built-in once, not once per module that imports it', () => {
    const text = fs.readFileSync(path.join(ROOT, 'dist', 'bundle', 'cli.cjs'), 'utf8');
    const counts = new Map<string, number>();
    for (const m of text.matchAll(/require\("(node:[\w/]+)"\)/g)) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
    assert.ok((counts.get('node:fs') ?? 0) >= 1, 'the bundle requires node:fs');
    const many = [...counts].filter(([, n]) => n > 2);
    assert.deepEqual(many, [], `required more than twice: ${many.map(([m, n]) => `${m} ${n}`).join(', ')}`);
  });

  test('the build\'s code cache is one V8 accepts for the bundle, and a foreign cache only costs the compile', async (t) => {
    const { compileBundle, cacheFileOf, runBundle } = await import('../../cli/bundle-loader.js');
    const bundle = path.join(ROOT, 'dist', 'bundle', 'cli.cjs');
    const good = compileBundle(bundle, fs.readFileSync(cacheFileOf(bundle)));
    assert.equal(good.cachedDataRejected, false, 'the bundle compiles from source on every start');
    // The session's cache (made from a whole session) is accepted too, and holds more compiled code.
    const session = fs.readFileSync(cacheFileOf(bundle, 'session'));
    assert.equal(compileBundle(bundle, session).cachedDataRejected, false, '`run` compiles from source');
    assert.ok(session.length > fs.statSync(cacheFileOf(bundle)).size, 'the session cache holds no more than a start does');
    // Control: the check can fail (a cache made for other source is refused).
    const dir = tempDir(t);
    const other = path.join(dir, 'other.cjs');
    fs.writeFileSync(other, 'module.exports.answer = 42;\n');
    assert.equal(compileBundle(other, fs.readFileSync(cacheFileOf(bundle))).cachedDataRejected, true);
    // Garbage where the cache should be: the bundle still runs, from source. (A new source each
    // time: V8 keeps what it compiled in this process and would not look at the cache again.)
    const runs = path.join(dir, 'runs.cjs');
    fs.writeFileSync(runs, 'globalThis.nightshiftBundleRan = (globalThis.nightshiftBundleRan ?? 0) + 1;\n');
    fs.writeFileSync(cacheFileOf(runs), Buffer.from('not a code cache'));
    assert.deepEqual(runBundle(runs), { cache: 'rejected' });
    const plain = path.join(dir, 'plain.cjs');
    fs.writeFileSync(plain, 'globalThis.nightshiftBundleRan = (globalThis.nightshiftBundleRan ?? 0) + 10;\n');
    assert.deepEqual(runBundle(plain), { cache: 'none' });
    assert.equal((globalThis as { nightshiftBundleRan?: number }).nightshiftBundleRan, 11);
  });

  test('only `run` loads the session cache: the first word that is not a flag names the command', async () => {
    const { cacheKindFor } = await import('../../cli/bundle-loader.js');
    assert.equal(cacheKindFor(['run', 'writer']), 'session');
    assert.equal(cacheKindFor(['--json', 'run', 'writer']), 'session');
    for (const argv of [['tick'], ['status', '--json'], ['memory', 'recall', 'run'], [], ['--json']]) assert.equal(cacheKindFor(argv), 'start', argv.join(' '));
  });

  test('negative control: the graph walker sees a package behind a relative import', (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'a.js'), "import { b } from './b.js';\nconst later = () => import('zod');\n");
    fs.writeFileSync(path.join(dir, 'b.js'), "import {\n  parse,\n} from 'yaml';\nexport const b = 1;\n");
    const { packages } = staticGraph(path.join(dir, 'a.js'));
    assert.equal(packages.length, 1, packages.join('\n'));
    assert.match(packages[0], /b\.js -> yaml$/);
  });

  test('--help, --version and a command\'s --help still answer with no config anywhere', async (t) => {
    const dir = tempDir(t);
    const env = { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: path.join(dir, 'missing.yaml') };
    const help = await nightshift(['--help'], env, dir);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: nightshift <command>/m);
    const version = await nightshift(['--version'], env, dir);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
    assert.match((await nightshift(['tick', '--help'], env, dir)).stdout, /Usage: nightshift tick/);
  });
});
