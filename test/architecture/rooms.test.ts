// Nothing below the CLI imports from it (issue 16): cli/ parses, dispatches and prints; the rooms
// it drives (daemon/, sessions/, budget/, logs/, memory/, report/) never reach back up into a
// command. Checked over the compiled runtime graph in dist/, static and dynamic imports alike.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from '../helpers.js';
import { moduleGraph } from './module-graph.js';

const BELOW = ['daemon', 'sessions', 'budget', 'logs', 'memory', 'report', 'rehearsal', 'vault', 'config', 'core'];

// Every import from a module under one of `below` into `cli/`, as `from -> to` relative to `root`.
export function upwardImports(root: string, below: string[]): string[] {
  const graph = moduleGraph(root, ['test', 'bench', 'bundle', 'node_modules']);
  const room = (f: string) => path.relative(root, f).split(path.sep)[0];
  const out: string[] = [];
  for (const [from, deps] of graph) {
    if (!below.includes(room(from))) continue;
    for (const to of deps) if (room(to) === 'cli') out.push(`${path.relative(root, from)} -> ${path.relative(root, to)}`);
  }
  return out.sort();
}

test('no module below the CLI imports from cli/', () => {
  const dist = path.join(ROOT, 'dist');
  assert.ok(fs.existsSync(path.join(dist, 'cli', 'main.js')), `no cli/main.js under ${dist}`);
  assert.deepEqual(upwardImports(dist, BELOW), []);
});

test('negative control: a static and a dynamic import from below into cli/ are found; cli/ importing below is not', (t) => {
  const dir = tempDir(t);
  for (const d of ['cli', 'daemon', 'memory']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'cli', 'main.js'), "import { tick } from '../daemon/tick.js';\nexport const main = () => import('../memory/store.js');\n");
  fs.writeFileSync(path.join(dir, 'daemon', 'tick.js'), "export const tick = () => import('../cli/main.js');\n");
  fs.writeFileSync(path.join(dir, 'memory', 'store.js'), "import {\n  main,\n} from '../cli/main.js';\nexport const store = 1;\n");
  assert.deepEqual(upwardImports(dir, BELOW), ['daemon/tick.js -> cli/main.js', 'memory/store.js -> cli/main.js']);
});

// What ships (npm pack leaves dist/test out) cannot import the tests: `rehearse` serves an
// imitation that lives with the runtime (rehearsal/), not one from test/.
test('no shipped module imports from test/', () => {
  const dist = path.join(ROOT, 'dist');
  const graph = moduleGraph(dist, ['bench', 'bundle', 'node_modules']);
  const room = (f: string) => path.relative(dist, f).split(path.sep)[0];
  const found: string[] = [];
  for (const [from, deps] of graph) {
    if (room(from) === 'test') continue;
    for (const to of deps) if (room(to) === 'test') found.push(`${path.relative(dist, from)} -> ${path.relative(dist, to)}`);
  }
  assert.ok(graph.size > 50, `the graph holds the modules (${graph.size})`);
  assert.deepEqual(found, []);
});
