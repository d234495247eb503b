// No module of nightshift imports itself back, directly or through others (issues 16, 24): a cycle
// makes load order matter and rooms impossible to take apart. Checked over the sources, where type
// imports count (a circle through a type ties two files as hard), and over the compiled runtime
// graph in dist/, static and dynamic imports alike.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from '../helpers.js';
import { moduleGraph } from './module-graph.js';

// Strongly connected components of more than one module (Tarjan), or a module importing itself.
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

const SKIP = ['test', 'bench', 'bundle', 'node_modules', 'dist', '.git'];

test('the runtime modules import one another without a cycle', () => {
  const dist = path.join(ROOT, 'dist');
  const graph = moduleGraph(dist, SKIP);
  assert.ok(graph.size > 50, `only ${graph.size} modules found under ${dist}`);
  assert.deepEqual(cycles(graph).map((c) => c.map((f) => path.relative(dist, f)).sort()), []);
});

test('the sources import one another without a cycle, type imports included', () => {
  const graph = moduleGraph(ROOT, SKIP, '.ts');
  assert.ok(graph.size > 50, `only ${graph.size} sources found under ${ROOT}`);
  assert.deepEqual(cycles(graph).map((c) => c.map((f) => path.relative(ROOT, f)).sort()), []);
});

test('negative control: a cycle through a dynamic import, and one through three modules, are found', (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'a.js'), "import { b } from './b.js';\nexport const a = 1;\n");
  fs.writeFileSync(path.join(dir, 'b.js'), "export const b = () => import('./a.js');\n");
  fs.writeFileSync(path.join(dir, 'c.js'), "export { d } from './d.js';\n");
  fs.writeFileSync(path.join(dir, 'd.js'), "import './e.js';\nexport const d = 1;\n");
  fs.writeFileSync(path.join(dir, 'e.js'), "import { c } from './c.js';\n");
  fs.writeFileSync(path.join(dir, 'f.js'), "import { a } from './a.js';\n");
  const found = cycles(moduleGraph(dir, [])).map((c) => c.map((f) => path.basename(f)).sort().join(' '));
  assert.deepEqual(found.sort(), ['a.js b.js', 'c.js d.js e.js']);
});

test('negative control: a circle through type imports alone is found, after an import the old pattern swallowed', (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'capture.ts'), "import fs from 'node:fs';\nimport { spool } from './spool.js';\nexport type Left = { n: number };\n");
  fs.writeFileSync(path.join(dir, 'spool.ts'), "import type { Left } from './capture.js';\nexport const spool = (l: Left) => l;\n");
  fs.writeFileSync(path.join(dir, 'rules.ts'), "import { a, type Config } from './config.js';\n");
  fs.writeFileSync(path.join(dir, 'config.ts'), "import { rules } from './rules.js';\nexport type Config = {};\n");
  const found = cycles(moduleGraph(dir, [], '.ts')).map((c) => c.map((f) => path.basename(f)).sort().join(' '));
  assert.deepEqual(found.sort(), ['capture.ts spool.ts', 'config.ts rules.ts']);
});

// mutation: a backtick `import(`./a.js`)` closing a circle, caught here (the old pattern read only ' and ").
test('negative control: a cycle through a dynamic import in backticks is found, in the sources and the compiled graph', (t) => {
  const dir = tempDir(t);
  for (const ext of ['.ts', '.js'] as const) {
    fs.writeFileSync(path.join(dir, `a${ext}`), "import { b } from './b.js';\nexport const a = b;\n");
    fs.writeFileSync(path.join(dir, `b${ext}`), 'export const b = async () => (await import(`./a.js`)).a;\n');
    const found = cycles(moduleGraph(dir, [], ext)).map((c) => c.map((f) => path.basename(f)).sort().join(' '));
    assert.deepEqual(found, [`a${ext} b${ext}`], ext);
  }
});
