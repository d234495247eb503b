// Runs every compiled test file with node's own test runner, which prints the closing summary.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..', 'dist', 'test');
const files = [];
const walk = (dir) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith('.test.js')) files.push(p);
  }
};
if (fs.existsSync(root)) walk(root);
const only = process.argv.slice(2);
const chosen = only.length ? files.filter((f) => only.some((o) => f.includes(o))) : files;
// With no paths `node --test` would run everything it finds, fixtures and this script included.
if (chosen.length === 0) {
  console.error(only.length
    ? `test/run.mjs: no compiled test file under dist/test matches ${only.map((o) => JSON.stringify(o)).join(' or ')}`
    : 'test/run.mjs: no compiled test files under dist/test (run npm run build first)');
  process.exit(64);
}
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...chosen.sort()], { stdio: 'inherit' });
process.exit(r.status ?? 1);
