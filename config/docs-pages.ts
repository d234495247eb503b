// The parts of docs/ generated from the code: the configuration reference and the editor's JSON
// Schema (config/reference.ts over config/schema.ts), and the exit-code table (core/errors.ts EXIT
// with core/exit-meanings.ts). `npm run docs` writes them (deploy/docs.mjs); a test checks that the
// committed files are what this makes now.
import { EXIT } from '../core/errors.js';
import { EXIT_MEANINGS } from '../core/exit-meanings.js';
import { configJsonSchema, referenceMarkdown, referenceRows } from './reference.js';

export const DOCS_SCRIPT = 'npm run docs';

// A generated file: its path under the repository, and what it should hold given what it holds
// now (a page keeps its hand-written text around the generated section).
export type GeneratedDoc = { file: string; make: (current: string) => string };

const begin = (name: string) => `<!-- generated: ${name}, by \`${DOCS_SCRIPT}\` from the code; edit the code, not this -->`;
const end = (name: string) => `<!-- end generated: ${name} -->`;

// The page with its section `name` replaced by `body`; a page without the markers is an error
// that says where they go.
export function spliceGenerated(page: string, name: string, body: string, file = 'the page'): string {
  const a = page.indexOf(begin(name));
  const b = page.indexOf(end(name));
  if (a === -1 || b === -1 || b < a) throw new Error(`${file} has no generated section \`${name}\`: put the two lines\n${begin(name)}\n${end(name)}\nwhere it belongs, then run ${DOCS_SCRIPT}`);
  return `${page.slice(0, a)}${begin(name)}\n\n${body.trimEnd()}\n\n${page.slice(b)}`;
}

// The exit-code table, lowest code first.
export function exitCodeTable(): string {
  const rows = (Object.keys(EXIT) as Array<keyof typeof EXIT>).sort((x, y) => EXIT[x] - EXIT[y]).map((k) => `| ${EXIT[k]} | ${EXIT_MEANINGS[k].replace(/\|/g, '\\|')} |`);
  return `| code | meaning |\n|---|---|\n${rows.join('\n')}\n`;
}

// Every generated file. Throws when a config key has no description (or a description no key).
export function generatedDocs(): GeneratedDoc[] {
  const { schema, problems } = configJsonSchema();
  if (problems.length) throw new Error(`The configuration reference is incomplete:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  const reference = referenceMarkdown(referenceRows(schema));
  return [
    { file: 'docs/configuration.md', make: (page) => spliceGenerated(page, 'config-reference', reference, 'docs/configuration.md') },
    { file: 'docs/nightshift.schema.json', make: () => `${JSON.stringify(schema, null, 2)}\n` },
    { file: 'docs/exit-codes.md', make: (page) => spliceGenerated(page, 'exit-codes', exitCodeTable(), 'docs/exit-codes.md') },
  ];
}

// The generated files that are not what the code makes now, each with the fix.
export function staleDocs(read: (file: string) => string | null, docs: GeneratedDoc[] = generatedDocs()): string[] {
  return docs.flatMap(({ file, make }) => {
    const now = read(file);
    if (now === null) return [`${file} is missing: run ${DOCS_SCRIPT}`];
    return make(now) === now ? [] : [`${file} is not what the code makes now: run ${DOCS_SCRIPT} and commit the result`];
  });
}
