// The README and docs/ stay true to the repository and the CLI (issue 34): every relative link
// resolves (the file, and a heading for a #anchor), every `nightshift <command>` shown in code is a
// command the built CLI answers with its own help (and a subcommand its help names), and every
// row of a security table names a test that exists.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { main } from '../../cli/main.js';
import { ROOT, tempDir } from '../helpers.js';
import { anchors, commandProblems, docPages, linkProblems, shownCommands, testColumnProblems, type CliHelp } from './doc-links.js';

// What the CLI itself prints for `nightshift <word> --help`, in process; a word without a command
// of its own gets the main help, and then counts only if the CLI takes it bare (`nightshift help`).
async function cliHelp(root: string, pages: string[]): Promise<CliHelp> {
  const run = async (argv: string[]) => {
    let out = '';
    const code = await main({ argv, env: {}, cwd: ROOT, stdout: (t) => void (out += t), stderr: () => {} });
    return { code, out };
  };
  const mainHelp = (await run(['--help'])).out;
  const words = new Set(pages.flatMap((p) => shownCommands(fs.readFileSync(path.join(root, p), 'utf8')).map((c) => c.command)));
  const known = new Map<string, string | null>();
  for (const w of [...words, 'no-such-command']) {
    const h = await run([w, '--help']);
    known.set(w, h.code === 0 && h.out !== mainHelp ? h.out : (await run([w])).code === 0 && h.out === mainHelp ? mainHelp : null);
  }
  return (w) => known.get(w) ?? null;
}

test('every relative link in README.md and docs/*.md resolves, its #anchor to a heading of that file', () => {
  const pages = docPages(ROOT);
  assert.ok(pages.length >= 12, `README and the docs pages (${pages.join(', ')})`);
  assert.deepEqual(pages.flatMap((p) => linkProblems(ROOT, p)), []);
});

test('the README links every docs page', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const missing = docPages(ROOT).filter((p) => p !== 'README.md' && !readme.includes(`](${p})`));
  assert.deepEqual(missing, []);
});

test('every `nightshift <command>` the README and docs show in code is a command the CLI has', async () => {
  const help = await cliHelp(ROOT, docPages(ROOT));
  assert.equal(help('no-such-command'), null, 'an unknown word has no help of its own');
  const shown = docPages(ROOT).flatMap((p) => shownCommands(fs.readFileSync(path.join(ROOT, p), 'utf8')));
  assert.ok(new Set(shown.map((c) => c.command)).size >= 15, 'the pages show most commands');
  assert.deepEqual(commandProblems(ROOT, docPages(ROOT), help), []);
});

test('every row of the security tables names its test, and the test exists', () => {
  const problems = testColumnProblems(ROOT, 'docs/security.md');
  assert.deepEqual(problems, []);
  const rows = fs.readFileSync(path.join(ROOT, 'docs', 'security.md'), 'utf8').split('\n').filter((l) => /\| `(e2e|sessions|vault|config|memory|deploy|logs)\/[\w./-]+`[^|]*\|$/.test(l));
  assert.ok(rows.length >= 30, `the escape table and the doors table name their tests (${rows.length} rows)`);
});

test('negative control: a planted broken link, a missing anchor, an unknown command and subcommand, and a row naming a missing test are each found', async (t) => {
  const root = tempDir(t);
  fs.mkdirSync(path.join(root, 'docs'));
  fs.mkdirSync(path.join(root, 'test', 'e2e'), { recursive: true });
  fs.writeFileSync(path.join(root, 'test', 'e2e', 'egress.test.ts'), '');
  fs.writeFileSync(path.join(root, 'README.md'), [
    '# nightshift', '', 'See [Good](docs/good.md#a-heading), [Gone](docs/gone.md), [Bad anchor](docs/good.md#no-such-heading) and [web](https://example.com).', '',
    '```sh', 'nightshift run gardener   # nightshift on PATH', 'nightshift frobnicate', '```', '',
    'Then `nightshift memory observe TEXT` and `nightshift memory frob X`; `[not a link](docs/x.md)`.',
  ].join('\n'));
  fs.writeFileSync(path.join(root, 'docs', 'good.md'), [
    '# Good', '', '## A heading', '', '[back](../README.md#nightshift) [self](#a-heading) [self broken](#nope)', '',
    '| attack | test |', '|---|---|', '| one | `e2e/egress` |', '| two | `e2e/nonexistent` |', '| three | none |',
  ].join('\n'));
  assert.deepEqual([...anchors('# A `b`: c!\n## A `b`: c!\n```\n# not a heading\n```\n')], ['a-b-c', 'a-b-c-1']);
  assert.deepEqual(docPages(root).flatMap((p) => linkProblems(root, p)), [
    'README.md: docs/gone.md (no such file)',
    'README.md: docs/good.md#no-such-heading (no heading docs/good.md#no-such-heading)',
    'docs/good.md: #nope (no heading docs/good.md#nope)',
  ]);
  const problems = commandProblems(root, ['README.md'], await cliHelp(root, ['README.md']));
  assert.equal(problems.length, 2, problems.join('\n'));
  assert.match(problems[0], /^README\.md: nightshift memory frob \(`nightshift memory` has no `frob`: observe, query, .*forget/);
  assert.equal(problems[1], 'README.md: nightshift frobnicate (the CLI has no command `frobnicate`)');
  assert.deepEqual(testColumnProblems(root, 'docs/good.md'), [
    'docs/good.md:10: names the test e2e/nonexistent, but test/e2e/nonexistent.test.ts does not exist',
    'docs/good.md:11: a row that names no test',
  ]);
});
