// A config or agent file error names the line of the bad field (issue 35.8): `(FILE:LINE)` after
// each problem, the line of its key (of the item, in a list), where the file holds the field.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { LineCounter, parseDocument } from 'yaml';
import { loadConfig } from '../../config/config.js';
import { loadConfigLenient } from '../../config/config-fallback.js';
import { parseAgent } from '../../config/agents.js';
import { withLines } from '../../config/issues.js';
import { ConfigError } from '../../core/errors.js';
import { tempDir } from '../helpers.js';

// Line numbers written out by hand beside the YAML.
const YAML = [
  'vault: ./v', //                     1
  'claude:', //                        2
  '  model: sonnet', //                3
  '  max_turns: many', //              4
  '  timeout: soon', //                5
  'budget:', //                        6
  '  timezone: Mars/Olympus', //       7
  'dispatch:', //                      8
  '  - agent: a', //                   9
  '  - agent: a', //                   10
  '    hours: [25]', //                11
  'vaultt: x', //                      12
].join('\n');

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}

test('each bad field of the config names FILE:LINE, its key\'s line', (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'nightshift.yaml');
  fs.writeFileSync(file, YAML);
  const problems = problemsOf(() => loadConfig(file));
  const line = (field: string) => problems.find((p) => p.startsWith(`${field}: `))?.match(/\((\S+):(\d+)\)$/)?.slice(1);
  assert.deepEqual(line('claude.max_turns'), [file, '4']);
  assert.deepEqual(line('claude.timeout'), [file, '5']);
  assert.deepEqual(line('budget.timezone'), [file, '7']);
  assert.deepEqual(line('dispatch[1].hours'), [file, '11']);
  assert.deepEqual(line('vaultt'), [file, '12']);
  // The message an operator reads holds them, and doctor's lenient reading keeps them.
  assert.match(loadConfigLenient(file).problems.join('\n'), new RegExp(`claude\\.max_turns: .*\\(${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4\\)`));
});

test('a field the file does not hold (a cross-field rule on a default) keeps its line as it was', () => {
  const text = 'claude:\n  timeout: 1m\n';
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  assert.deepEqual(withLines(['claude.idle_timeout: Expected at most claude.timeout', 'claude.timeout: too short', '(top level): x'], doc, lines, 'f.yaml'), [
    'claude.idle_timeout: Expected at most claude.timeout', 'claude.timeout: too short (f.yaml:2)', '(top level): x',
  ]);
});

test('an agent file\'s bad field names its line in the file (after the opening ---)', () => {
  const config = loadConfigLenient('/nonexistent/nightshift.yaml').config;
  const problems = problemsOf(() => parseAgent('a', '/p/a.md', '---\ndescription: x\nmax_turns: lots\n---\nhi\n', config));
  assert.match(problems[0], /^max_turns: .* \(\/p\/a\.md:3\)$/);
});
