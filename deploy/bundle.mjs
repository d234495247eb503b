// Bundles the CLI (dist/cli/cli.js, built by tsc) into dist/bundle/cli.cjs, the one file every
// command but help loads: node's module loader costs ~1 ms a module, and a session start touched
// ~150. Native and optional packages stay outside and load from node_modules when used. Then it
// makes V8's code caches for it (cli/bundle-loader.ts), each by running one tick in a throwaway
// folder: one with nothing due (every command's start), and one whose agent is due and whose
// "CLI" only prints a result, so that its cache holds the whole session path compiled (state,
// endpoints, capture, grading, report) for `nightshift run`.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// zod re-exports every language's error messages (~300 KB); nightshift speaks English, and every
// byte of the bundle is read and compiled on each start.
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (a) =>
      a.importer.includes(`${path.sep}zod${path.sep}`) ? { path: path.join(path.dirname(a.importer), '..', 'locales', 'index.js'), namespace: 'zod-locales', pluginData: path.dirname(a.importer) } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (a) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(a.pluginData, '..', 'locales', 'en.js'))};`,
      loader: 'js',
      resolveDir: a.pluginData,
    }));
  },
};

// better-sqlite3's JavaScript comes into the bundle; only its compiled addon loads from
// node_modules, by name, not through the `bindings` package's search (a dozen modules and stats
// at every start).
const sqliteAddon = {
  name: 'better-sqlite3-addon',
  setup(b) {
    b.onResolve({ filter: /^bindings$/ }, (a) => (a.importer.includes(`${path.sep}better-sqlite3${path.sep}`) ? { path: 'bindings', namespace: 'sqlite-addon' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'sqlite-addon' }, () => ({
      contents: "module.exports = () => require('better-sqlite3/build/Release/better_sqlite3.node');",
      loader: 'js',
    }));
    b.onResolve({ filter: /\.node$/ }, (a) => ({ path: a.path, external: true }));
  },
};

// Each ES module's `import fs from 'node:fs'` became its own __toESM(require('node:fs')): a copy of
// every property as a getter, 73 times for fs and 61 for path, ~5 ms of every start. Each built-in
// goes through one module of its own instead, so it is wrapped once.
// node:zlib (~1.3 ms to load) serves only a request that carries a compressed body or a PDF,
// never a start: its default export loads it at first use (a named import of it fails the build).
const LAZY_BUILTINS = ['node:zlib'];
const builtinsOnce = {
  name: 'node-builtins-once',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (a) => (a.namespace === 'builtin-once' ? { path: a.path, external: true } : { path: a.path, namespace: 'builtin-once' }));
    b.onLoad({ filter: /.*/, namespace: 'builtin-once' }, (a) => ({
      contents: LAZY_BUILTINS.includes(a.path)
        ? `let m = null;\nexport default new Proxy({}, { get: (_, k) => (m ??= require(${JSON.stringify(a.path)}))[k] });\n`
        : `import m from ${JSON.stringify(a.path)};\nexport default m;\nexport * from ${JSON.stringify(a.path)};\n`,
      loader: 'js',
    }));
  },
};

// unhomoglyph builds one regular expression of its ~6,000 confusables when it loads (~3 ms); only
// a memory write or a tombstone check uses it, never a tick or the start of a session. Inside the
// bundle its default export (a function) is one that loads it at its first call.
const LAZY_FUNCTIONS = ['unhomoglyph'];
const lazyFunctions = {
  name: 'lazy-functions',
  setup(b) {
    const filter = new RegExp(`^(${LAZY_FUNCTIONS.join('|')})$`);
    b.onResolve({ filter }, (a) => (a.namespace === 'lazy-function' ? undefined : { path: a.path, namespace: 'lazy-function', pluginData: a.resolveDir }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-function' }, (a) => ({
      contents: `let f = null;\nexport default function lazy(...args) {\n  f ??= require(${JSON.stringify(a.path)});\n  return f(...args);\n}\n`,
      loader: 'js',
      resolveDir: a.pluginData,
    }));
  },
};

const root = path.join(import.meta.dirname, '..');
const BUILD_PLACEHOLDER = 'nightshift-build-id-placeholder';
const outfile = path.join(root, 'dist', 'bundle', 'cli.cjs');
fs.rmSync(path.dirname(outfile), { recursive: true, force: true });
const r = await build({
  entryPoints: [path.join(root, 'dist', 'cli', 'cli.js')],
  outfile,
  bundle: true,
  platform: 'node',
  // CommonJS, because node 20 can give a vm script a code cache and gives an ES module none.
  format: 'cjs',
  target: 'node20',
  minify: true,
  // Names kept, so a stack trace in an error report still reads.
  keepNames: true,
  plugins: [englishOnly, sqliteAddon, builtinsOnce, lazyFunctions],
  metafile: !!process.env.NIGHTSHIFT_BUNDLE_META,
  logLevel: 'warning',
  // Outside: the optional features, execa (only doctor, status and lock use it), and the
  // parsers the meter's worker and the imitation API load (pdf.js alone is ~2 MB), and the
  // OpenTelemetry SDK (only with telemetry.otlp_endpoint set, logs/telemetry.ts), and pg (only
  // with NIGHTSHIFT_DATABASE_URL set, budget/fleet-db.ts). A
  // package left outside must only be imported dynamically, else the bundle loads it at every start.
  external: ['@energetic-ai/*', 'discord.js', '@google/genai', 'execa', 'pdfjs-dist', 'image-size', '@opentelemetry/*', 'pg'],
  // import.meta means the bundle file itself, as it did for each module (they sit as deep in dist/).
  // The build's id (config/validated-cache.ts): a hash of the bundle's own text, set below.
  define: { 'import.meta.url': '__nightshiftUrl', 'import.meta.dirname': '__dirname', __NIGHTSHIFT_BUILD__: JSON.stringify(BUILD_PLACEHOLDER) },
  banner: { js: "const __nightshiftUrl = require('node:url').pathToFileURL(__filename).href;" },
});
if (process.env.NIGHTSHIFT_BUNDLE_META) fs.writeFileSync(process.env.NIGHTSHIFT_BUNDLE_META, JSON.stringify(r.metafile));

// A dynamic import() cannot run in the vm script; the loader passes its own in. The bundle has a
// few (execa, and the optional packages by name); more would mean an external left static.
const built = fs.readFileSync(outfile, 'utf8');
if (!built.includes(BUILD_PLACEHOLDER)) throw new Error('Expected the bundle to carry its build id (config/validated-cache.ts)');
const text = built.replaceAll(BUILD_PLACEHOLDER, createHash('sha256').update(built).digest('hex').slice(0, 32));
const calls = text.match(/(?<![\w$.])import\(/g) ?? [];
if (calls.length > 8) throw new Error(`Expected at most 8 dynamic imports in the bundle, got ${calls.length}`);
// Pure ASCII, so the loader reads it as latin1 into a one-byte string: a single character above
// U+00FF (esbuild leaves a few inside regular expressions) makes V8 hold all 1.3 MB as two-byte
// text. An escape is safe in a string, a template or a regular expression; one written after a
// backslash is not, and fails the build.
const wide = /[^\x00-\x7f]/g;
if (/\\[^\x00-\x7f]/.test(text)) throw new Error('Expected no escaped non-ASCII character in the bundle');
fs.writeFileSync(outfile, text.replace(/(?<![\w$.])import\(/g, '__nightshiftImport(').replace(wide, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));

// One tick in a throwaway folder with `yaml` as its config (given the folder), writing the cache;
// `check` says what was wrong with its answer, or null.
function tickForCache(cache, yaml, check) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-build-'));
  try {
    for (const d of ['vault', 'prompts', 'state']) fs.mkdirSync(path.join(dir, d));
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), yaml(dir));
    // Twice: the first validates the config and agents and keeps what they gave
    // (config/validated-cache.ts); the second, whose code is cached, starts as a timer's tick over
    // an unchanged site does.
    let run;
    for (const last of [false, true]) {
      run = spawnSync(process.execPath, [path.join(root, 'dist', 'cli', 'bin.js'), 'tick', '--json'], {
        cwd: dir,
        // A key that is never sent (the stand-in calls no API): a session without one is refused.
        env: { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml'), ...(last ? { NIGHTSHIFT_BUILD_CODE_CACHE: cache } : {}), ANTHROPIC_API_KEY: 'sk-build-code-cache-never-sent' },
        encoding: 'utf8',
      });
      if (run.status !== 0) break;
    }
    let answer = null;
    try {
      answer = JSON.parse(run.stdout);
    } catch {
      // reported below
    }
    const wrong = run.status !== 0 ? `exit ${run.status}` : !fs.existsSync(cache) ? 'no cache written' : check(answer);
    if (wrong) throw new Error(`Expected the bundle to run a tick for its code cache ${path.basename(cache)}: ${wrong}\n${run.stdout}\n${run.stderr}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
const places = (dir) => [`vault: ${JSON.stringify(path.join(dir, 'vault'))}`, `state_dir: ${JSON.stringify(path.join(dir, 'state'))}`, `log_dir: ${JSON.stringify(path.join(dir, 'logs'))}`];

tickForCache(`${outfile}.cache`, (dir) => [...places(dir), 'git:', '  enabled: false', 'dispatch: []', ''].join('\n'), (a) => (a?.action === 'skip' ? null : `action ${a?.action}`));
tickForCache(`${outfile}.session.cache`, (dir) => {
  // Not the CLI: a code cache needs nightshift's own functions run, not a model. It answers the
  // way the CLI's stream-json ends a session.
  const standIn = path.join(dir, 'stand-in.sh');
  const result = { type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: 'done', total_cost_usd: 0, usage: { input_tokens: 1, output_tokens: 1 } };
  fs.writeFileSync(standIn, `#!/bin/sh\necho '${JSON.stringify(result)}'\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'prompts', 'warm.md'), 'Warm the code cache.\n');
  return [...places(dir), `agents_dir: ${JSON.stringify(path.join(dir, 'prompts'))}`, 'sandbox: none', 'git:', '  enabled: false', 'claude:', `  command: ${JSON.stringify(standIn)}`,
    // Run as root and unwalled, bypassPermissions is refused before the start (the CLI would refuse it).
    '  permission_mode: acceptEdits', 'dispatch:', '  - agent: warm', ''].join('\n');
}, (a) => (a?.session?.outcome === 'ok' ? null : `session outcome ${a?.session?.outcome}`));
