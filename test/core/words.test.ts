// Counts as people write them (issue 35.8): "1 turn", "2 sessions", never "turn(s)". The guard
// reads every string and template literal of the sources (through TypeScript's own parser, so code
// like `update(s)` is not a string) for a word with a `(s)` or `(es)` ending.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { counted, noun } from '../../core/words.js';
import { ROOT } from '../helpers.js';

const SOURCES = ['cli', 'report', 'daemon', 'sessions', 'budget', 'memory', 'vault', 'config', 'logs', 'core', 'rehearsal'];
// Not a count: a URL scheme either way.
const ALLOWED = /\bhttp\(s\)/g;

// Pure: the `(s)` plurals in the string literals of one source text, as `line: text`.
export function maybePlurals(file: string, text: string): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) {
      const t = n.text.replace(ALLOWED, '');
      if (/[A-Za-z]\((?:s|es)\)/.test(t)) out.push(`${src.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${n.text.trim().slice(0, 100)}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

test('counted and noun: one is singular, any other number plural, an irregular plural given', () => {
  assert.equal(counted(1, 'turn'), '1 turn');
  assert.equal(counted(2, 'session'), '2 sessions');
  assert.equal(counted(0, 'fire'), '0 fires');
  assert.equal(counted(3, 'batch', 'batches'), '3 batches');
  assert.equal(`1 earlier ${noun(1, 'pass', 'passes')}`, '1 earlier pass');
  assert.equal(noun(4, 'pass', 'passes'), 'passes');
});

test('the guard finds a "(s)" in a string and a template, and not in code (controls)', () => {
  const found = maybePlurals('x.ts', "const a = `${n} turn(s)`;\nconst b = 'a problem(s) line';\nconst c = update(s);\nconst d = `${x}`.replace(y, (s) => s);\nconst e = 'an http(s) URL';\n");
  assert.deepEqual(found.map((f) => f.split(':')[0]), ['1', '2']);
});

test('no string in the sources says "(s)": counts go through core/words.ts', () => {
  const files = SOURCES.flatMap((d) => sourceFiles(path.join(ROOT, d)));
  assert.ok(files.length > 150, `the sources (${files.length} files)`);
  const problems = files.flatMap((f) => maybePlurals(f, fs.readFileSync(f, 'utf8')).map((p) => `${path.relative(ROOT, f)}:${p}`));
  assert.deepEqual(problems, []);
});
