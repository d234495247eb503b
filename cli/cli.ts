// The CLI: production dependencies in, exit code out. The only process.exit in nightshift. Loaded
// by bin.ts, from the bundle (dist/bundle/cli.cjs) or as plain modules.
import { main } from './main.js';

main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  stderrIsTTY: !!process.stderr.isTTY,
  stdoutIsTTY: !!process.stdout.isTTY,
  columns: () => process.stderr.columns || 80,
}).then(
  (code) => {
    // Let stdout drain before exiting (a pipe may be slow).
    process.stdout.write('', () => process.exit(code));
  },
  (err) => {
    process.stderr.write(`nightshift: internal error: ${String(err?.stack ?? err)}\n`);
    process.exit(70);
  },
);
