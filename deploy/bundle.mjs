// Bundles the CLI (dist/daemon/cli.js, built by tsc) into dist/bundle/cli.js, the one file every
// command but help loads: node's module loader costs ~1 ms a module, and a session start touched
// ~150. Native and optional packages stay outside and load from node_modules when used.
import { build } from 'esbuild';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
await build({
  entryPoints: [path.join(root, 'dist', 'daemon', 'cli.js')],
  outfile: path.join(root, 'dist', 'bundle', 'cli.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Names kept, so a stack trace in an error report still reads.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  external: ['better-sqlite3', '@energetic-ai/*', 'discord.js', '@google/genai'],
  // CommonJS packages inside an ES module bundle still call require() for node's own modules.
  banner: { js: "import { createRequire as __nightshiftRequire } from 'node:module'; const require = __nightshiftRequire(import.meta.url);" },
});
