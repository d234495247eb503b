// Bundles the CLI (dist/cli/cli.js, built by tsc) into dist/bundle/cli.js, the one file every
// command but help loads: node's module loader costs ~1 ms a module, and a session start touched
// ~150. Native and optional packages stay outside and load from node_modules when used.
import { build } from 'esbuild';
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

const root = path.join(import.meta.dirname, '..');
const r = await build({
  entryPoints: [path.join(root, 'dist', 'cli', 'cli.js')],
  outfile: path.join(root, 'dist', 'bundle', 'cli.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  // Names kept, so a stack trace in an error report still reads.
  keepNames: true,
  plugins: [englishOnly],
  metafile: !!process.env.NIGHTSHIFT_BUNDLE_META,
  logLevel: 'warning',
  // Outside: native code, optional features, and execa (only doctor, status and lock use it). A
  // package left outside must only be imported dynamically, else the bundle loads it at every start.
  external: ['better-sqlite3', '@energetic-ai/*', 'discord.js', '@google/genai', 'execa'],
  // CommonJS packages inside an ES module bundle still call require() for node's own modules.
  banner: { js: "import { createRequire as __nightshiftRequire } from 'node:module'; const require = __nightshiftRequire(import.meta.url);" },
});
if (process.env.NIGHTSHIFT_BUNDLE_META) (await import('node:fs')).writeFileSync(process.env.NIGHTSHIFT_BUNDLE_META, JSON.stringify(r.metafile));
