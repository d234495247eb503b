// `npm run docs`: writes the parts of docs/ generated from the code (config/docs-pages.ts, built
// to dist/ by `npm run build`): the configuration reference, nightshift.schema.json and the
// exit-code table. Says which files changed; test/docs/generated.test.ts fails while one is stale.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const { generatedDocs } = await import(path.join(root, 'dist', 'config', 'docs-pages.js'));
for (const { file, make } of generatedDocs()) {
  const at = path.join(root, file);
  const now = fs.existsSync(at) ? fs.readFileSync(at, 'utf8') : '';
  const next = make(now);
  if (next === now) continue;
  fs.writeFileSync(at, next);
  console.log(`wrote ${file}`);
}
