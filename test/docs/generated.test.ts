// The parts of docs/ generated from the code are current (issue 34): the configuration reference
// and nightshift.schema.json from the zod schema, the exit-code table from EXIT. Each is made
// again in memory and compared with the committed file; the message names the npm script.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { DOCS_SCRIPT, exitCodeTable, generatedDocs, spliceGenerated, staleDocs } from '../../config/docs-pages.js';
import { configJsonSchema, KEY_DOCS, referenceRows } from '../../config/reference.js';
import { ConfigSchema } from '../../config/schema.js';
import { EXIT } from '../../core/errors.js';
import { ROOT, tempDir } from '../helpers.js';

const readFrom = (root: string) => (f: string) => (fs.existsSync(path.join(root, f)) ? fs.readFileSync(path.join(root, f), 'utf8') : null);

test('docs/configuration.md, docs/nightshift.schema.json and docs/exit-codes.md are what the code makes now', () => {
  assert.equal(DOCS_SCRIPT, 'npm run docs');
  assert.match(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.docs, /deploy\/docs\.mjs/);
  assert.deepEqual(staleDocs(readFrom(ROOT)), []);
});

test('every key of the schema has a description, and every description a key', () => {
  assert.deepEqual(configJsonSchema().problems, []);
  // Read from zod itself, not from the generator's walk: the top-level keys and one nested section.
  const top = Object.keys((ConfigSchema as unknown as { shape: Record<string, unknown> }).shape);
  for (const k of top) assert.ok(KEY_DOCS[k], `${k} has a description`);
  const rows = referenceRows(configJsonSchema().schema);
  assert.deepEqual(rows.filter((r) => !r.key.includes('.') && !r.key.includes('[')).map((r) => r.key), top);
  // The page has one row per key: none left out, none twice (a nested section in its own table too).
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  const listed = [...page.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(listed.filter((k, i) => listed.indexOf(k) !== i), []);
  const headed = [...page.matchAll(/^### (\S+)$/gm)].map((m) => m[1]);
  assert.deepEqual(rows.map((r) => r.key).filter((k) => !listed.includes(k) && !headed.includes(k)), []);
  assert.ok(listed.length >= 100, `${listed.length} rows`);
});

test('the reference shows the defaults the loader applies', () => {
  const rows = new Map(referenceRows(configJsonSchema().schema).map((r) => [r.key, r]));
  assert.equal(rows.get('claude.timeout')?.default, '`30m`');
  assert.equal(rows.get('budget.max_usd_per_day')?.default, '`20`');
  assert.equal(rows.get('network')?.default, '`none`');
  assert.equal(rows.get('limits.pids')?.default, '`512`');
  assert.equal(rows.get('claude.tools')?.default, '`[Bash, Read, Edit, Write, Glob, Grep]`');
  // Each default, read back through the schema, is what the loader gives for an empty file.
  const empty = ConfigSchema.parse({});
  const json = configJsonSchema().schema as { properties: Record<string, { default?: unknown; properties?: Record<string, { default?: unknown }> }> };
  const fromDefaults = ConfigSchema.parse({
    claude: { timeout: json.properties.claude.properties!.timeout.default },
    budget: { max_usd_per_day: json.properties.budget.properties!.max_usd_per_day.default },
    limits: { pids: json.properties.limits.properties!.pids.default, tmp: json.properties.limits.properties!.tmp.default },
  });
  assert.equal(fromDefaults.claude.timeout, empty.claude.timeout);
  assert.equal(fromDefaults.budget.max_usd_per_day, empty.budget.max_usd_per_day);
  assert.equal(fromDefaults.limits.pids, empty.limits.pids);
  assert.equal(fromDefaults.limits.tmp, empty.limits.tmp);
});

test('the JSON Schema refuses what the loader refuses: an unknown key, a wrong type, a bad enum', () => {
  const schema = configJsonSchema().schema as { additionalProperties?: boolean; properties: Record<string, { enum?: string[]; additionalProperties?: boolean; properties?: Record<string, { type?: string }> }> };
  // Draft 7: what the YAML language server reads.
  assert.equal((schema as { $schema?: string }).$schema, 'http://json-schema.org/draft-07/schema#');
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(schema.properties.sandbox.enum, ['bwrap', 'none']);
  assert.equal(schema.properties.claude.additionalProperties, false);
  assert.equal(schema.properties.claude.properties!.max_turns.type, 'integer');
  assert.equal(ConfigSchema.safeParse({ sandbox: 'docker' }).success, false);
  assert.equal(ConfigSchema.safeParse({ claude: { max_turn: 3 } }).success, false);
});

test('a JSON Schema validator (ajv, as editors use one) takes the committed schema: the example config passes, what the loader refuses fails', () => {
  const schema = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs', 'nightshift.schema.json'), 'utf8'));
  const validate = new Ajv({ strict: false, validateFormats: false }).compile(schema);
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  const example = parseYaml(/```yaml\n([\s\S]*?)```/.exec(page)![1]);
  assert.equal(validate(example), true, JSON.stringify(validate.errors));
  for (const ok of [{}, { limits: { pids: 'off', memory: 'off', tmp: 1048576 }, claude: { timeout: 90 } }, { network: ['api.github.com'], dispatch: [{ agent: 'a', days: 'mon-fri', hours: [9, '14-16'] }] }]) {
    assert.equal(validate(ok), true, `${JSON.stringify(ok)}: ${JSON.stringify(validate.errors)}`);
    assert.equal(ConfigSchema.safeParse(ok).success, true, JSON.stringify(ok));
  }
  // Each refused by both: an unknown key (a typo), a wrong enum, a wrong type, a key unknown in a rule.
  for (const bad of [{ claude: { max_turn: 3 } }, { sandbox: 'docker' }, { claude: { timeout: true } }, { budget: { max_usd_per_day: 'lots' } }, { dispatch: [{ agent: 'a', hour: 9 }] }]) {
    assert.equal(validate(bad), false, `the schema takes ${JSON.stringify(bad)}`);
    assert.equal(ConfigSchema.safeParse(bad).success, false, `the loader takes ${JSON.stringify(bad)}`);
  }
});

test('the example config in docs/configuration.md loads, and says how an editor finds the schema', () => {
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  assert.match(page, /# yaml-language-server: \$schema=\S*nightshift\.schema\.json/);
  const block = /```yaml\n([\s\S]*?)```/.exec(page)![1];
  assert.equal(ConfigSchema.safeParse(parseYaml(block)).success, true);
});

test('the exit-code table has a row for every code in EXIT, in order', () => {
  const codes = [...exitCodeTable().matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
  assert.deepEqual(codes, Object.values(EXIT).sort((a, b) => a - b));
});

test('negative control: a stale copy of each generated file, a missing one and an undescribed key are caught', (t) => {
  const root = tempDir(t);
  fs.mkdirSync(path.join(root, 'docs'));
  for (const f of ['docs/configuration.md', 'docs/exit-codes.md']) fs.copyFileSync(path.join(ROOT, f), path.join(root, f));
  assert.deepEqual(staleDocs(readFrom(root)), ['docs/nightshift.schema.json is missing: run npm run docs']);
  fs.copyFileSync(path.join(ROOT, 'docs', 'nightshift.schema.json'), path.join(root, 'docs', 'nightshift.schema.json'));
  assert.deepEqual(staleDocs(readFrom(root)), []);
  // A default changed in the code but not in the docs: each file made from a schema that says 45m.
  const edit = (f: string, from: string, to: string) => {
    const p = path.join(root, f);
    const was = fs.readFileSync(p, 'utf8');
    assert.ok(was.includes(from), `${f} holds ${from}`);
    fs.writeFileSync(p, was.replace(from, to));
  };
  edit('docs/configuration.md', '| `claude.timeout` | duration (`90s`, `10m`, `1h`; a number is seconds) | `30m` |', '| `claude.timeout` | duration (`90s`, `10m`, `1h`; a number is seconds) | `45m` |');
  edit('docs/nightshift.schema.json', '"default": "30m"', '"default": "45m"');
  edit('docs/exit-codes.md', '| 78 |', '| 79 |');
  assert.deepEqual(staleDocs(readFrom(root)), [
    'docs/configuration.md is not what the code makes now: run npm run docs and commit the result',
    'docs/nightshift.schema.json is not what the code makes now: run npm run docs and commit the result',
    'docs/exit-codes.md is not what the code makes now: run npm run docs and commit the result',
  ]);
  // Hand-written text around the generated section is the page's own: an edit there is no problem.
  fs.copyFileSync(path.join(ROOT, 'docs', 'configuration.md'), path.join(root, 'docs', 'configuration.md'));
  edit('docs/configuration.md', '# Configuration', '# Configuration, edited by hand');
  assert.equal(staleDocs(readFrom(root)).filter((p) => p.startsWith('docs/configuration.md')).length, 0);
  // A page without the markers says where they go.
  assert.throws(() => spliceGenerated('# Page\n', 'exit-codes', 'x', 'docs/exit-codes.md'), /docs\/exit-codes\.md has no generated section `exit-codes`: put the two lines/);
  // A key the schema gains without a description.
  const grown = (ConfigSchema as unknown as z.ZodObject).extend({ new_knob: z.number().default(1) });
  assert.deepEqual(configJsonSchema(grown).problems, ['new_knob: no description (add it to KEY_DOCS in config/reference.ts)']);
  assert.deepEqual(configJsonSchema(ConfigSchema, { ...KEY_DOCS, gone: 'x' }).problems, ['gone: described in KEY_DOCS, but the schema has no such key']);
  assert.equal(generatedDocs().length, 3);
});
