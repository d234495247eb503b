// The import graph of a folder of modules: each module and the modules it imports, by relative
// static or dynamic import. Over the compiled .js (what runs) or over the .ts sources, where
// `import type` and `import { type X }` count too: a circle through a type is still a circle.
import fs from 'node:fs';
import path from 'node:path';

// One statement's body never holds a `;`, so a specifier that is not relative (`node:fs`) cannot
// make the match run on into the next import and swallow it.
const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[\w*{][^;]*?\sfrom\s*)?['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

export function moduleGraph(root: string, skip: string[], ext: '.js' | '.ts' = '.js'): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!skip.includes(e.name)) walk(p);
      } else if (p.endsWith(ext) && !p.endsWith('.d.ts')) {
        const deps = [...fs.readFileSync(p, 'utf8').matchAll(IMPORT)].map((m) => {
          const spec = m[1] ?? m[2];
          return path.resolve(path.dirname(p), ext === '.ts' ? spec.replace(/\.js$/, '.ts') : spec);
        });
        graph.set(p, [...new Set(deps)]);
      }
    }
  };
  walk(path.resolve(root));
  return graph;
}
