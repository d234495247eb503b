// The import graph of a folder of modules: each module and the modules it imports, by relative
// static or dynamic import. Over the compiled .js (what runs) or over the .ts sources, where
// `import type` and `import { type X }` count too: a circle through a type is still a circle.
// Read with the TypeScript compiler's own parser, not a pattern: a pattern missed
// ``import(`../daemon/x.js`)`` in backticks (issue 53) and would match an import inside a comment.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// Pure: the relative specifiers a module's text imports (static, re-export, dynamic, `import('x').T`
// in a type, `import x = require()`). A template with substitutions gives its fixed head's folder:
// `../daemon/${name}.js` still reaches daemon/.
export function importsOf(text: string, file: string): string[] {
  const kind = file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const out: string[] = [];
  const add = (node: ts.Node | undefined) => {
    if (!node) return;
    let spec: string | null = null;
    if (ts.isStringLiteralLike(node)) spec = node.text;
    else if (ts.isTemplateExpression(node)) spec = node.head.text.slice(0, node.head.text.lastIndexOf('/') + 1) || null;
    if (spec && spec.startsWith('.')) out.push(spec);
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isExternalModuleReference(node)) add(node.expression);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

export function moduleGraph(root: string, skip: string[], ext: '.js' | '.ts' = '.js'): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!skip.includes(e.name)) walk(p);
      } else if (p.endsWith(ext) && !p.endsWith('.d.ts')) {
        const deps = importsOf(fs.readFileSync(p, 'utf8'), p).map((spec) => path.resolve(path.dirname(p), ext === '.ts' ? spec.replace(/\.js$/, '.ts') : spec));
        graph.set(p, [...new Set(deps)]);
      }
    }
  };
  walk(path.resolve(root));
  return graph;
}
