// Folders by layer, imports pointing down only (issue 34): the foundations (core/, config/) import
// nothing above them, and no room reaches up a floor. Checked over the .ts sources, type imports
// included (a type from a floor above ties the file to it as hard as a value).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from '../helpers.js';
import { moduleGraph } from './module-graph.js';

// Lowest first. Rooms on one floor do not import one another either (sessions/ and rehearsal/).
export const LAYERS: string[][] = [
  ['core'], ['config'], ['logs'], ['budget'], ['vault'], ['memory'], ['report'], ['sessions', 'rehearsal'], ['daemon'], ['cli'],
];

// Every import that points up a floor or sideways into another room of the same floor.
export function layerProblems(root: string, layers: string[][] = LAYERS): string[] {
  const floor = new Map<string, number>();
  layers.forEach((rooms, i) => rooms.forEach((r) => floor.set(r, i)));
  const graph = moduleGraph(root, ['test', 'bench', 'node_modules', 'dist', '.git'], '.ts');
  const room = (f: string) => path.relative(root, f).split(path.sep)[0];
  const out: string[] = [];
  for (const [from, deps] of graph) {
    const a = room(from);
    if (!floor.has(a)) continue;
    for (const to of deps) {
      const b = room(to);
      if (a === b) continue;
      if (!floor.has(b) || floor.get(b)! >= floor.get(a)!) out.push(`${path.relative(root, from)} -> ${path.relative(root, to)}`);
    }
  }
  return out.sort();
}

test('every import of the sources points down a floor (core, config, logs, budget, vault, memory, report, sessions, daemon, cli)', () => {
  assert.ok(fs.existsSync(path.join(ROOT, 'core', 'errors.ts')), 'core/errors.ts is where the errors live');
  assert.deepEqual(layerProblems(ROOT), []);
});

test('core/ imports nothing of the project at all', () => {
  const graph = moduleGraph(path.join(ROOT, 'core'), [], '.ts');
  const outside = [...graph].flatMap(([from, deps]) => deps.filter((d) => !d.startsWith(path.join(ROOT, 'core') + path.sep)).map((d) => `${path.relative(ROOT, from)} -> ${path.relative(ROOT, d)}`));
  assert.ok(graph.size >= 10, `core/ holds the foundations (${graph.size} files)`);
  assert.deepEqual(outside, []);
});

test('negative control: a planted upward import, a type import from above and a sideways one are each found', (t) => {
  const root = tempDir(t);
  const put = (f: string, s: string) => {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), s);
  };
  put('core/errors.ts', "import { x } from '../config/schema.js';\nexport const e = x;\n");
  put('config/schema.ts', "import type { Row } from '../budget/ledger.js';\nexport const x = 1 as unknown as Row;\n");
  put('budget/ledger.ts', "import { e } from '../core/errors.js';\nexport type Row = typeof e;\n");
  put('sessions/run.ts', "export const s = () => import('../rehearsal/fake.js');\n");
  put('rehearsal/fake.ts', 'export const f = 1;\n');
  put('cli/main.ts', "import { s } from '../sessions/run.js';\nexport const m = s;\n");
  assert.deepEqual(layerProblems(root), [
    'config/schema.ts -> budget/ledger.ts',
    'core/errors.ts -> config/schema.ts',
    'sessions/run.ts -> rehearsal/fake.ts',
  ]);
});

// mutation: `await import(`../daemon/tick/tick.js`)` (backticks) planted in memory/, caught here
// through the sources (a pattern of quotes alone missed it).
test('negative control: an upward import in backticks, fixed or with a substitution, is found; one in a comment is not an import', (t) => {
  const root = tempDir(t);
  const put = (f: string, s: string) => {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), s);
  };
  put('memory/recall.ts', 'export const r = async () => (await import(`../daemon/tick/tick.js`)).tick;\n');
  put('report/send.ts', 'export const s = (n: string) => import(`../cli/commands/${n}.js`);\n');
  put('vault/sync.ts', "// import { t } from '../daemon/tick/tick.js';\nexport const v = 'import(\"../cli/main.js\")';\n");
  put('daemon/tick/tick.ts', 'export const tick = 1;\n');
  assert.deepEqual(layerProblems(root), [
    'memory/recall.ts -> daemon/tick/tick.ts',
    'report/send.ts -> cli/commands',
  ]);
});
