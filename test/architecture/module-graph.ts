// The compiled runtime import graph of a folder of .js modules: each module and the modules it
// imports, by relative static or dynamic import (type-only imports are gone after tsc).
import fs from 'node:fs';
import path from 'node:path';

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:[\w*{][\s\S]*?\sfrom\s*)?['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

export function moduleGraph(root: string, skip: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!skip.includes(e.name)) walk(p);
      } else if (p.endsWith('.js')) {
        const deps = [...fs.readFileSync(p, 'utf8').matchAll(IMPORT)].map((m) => path.resolve(path.dirname(p), m[1] ?? m[2]));
        graph.set(p, [...new Set(deps)]);
      }
    }
  };
  walk(root);
  return graph;
}
