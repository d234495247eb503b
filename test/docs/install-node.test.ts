// The install page names only the Nodes nightshift supports (package.json's engines, >=22: the LTS
// lines 22 and 24), in what it asks for and in what it measured on. Control: the page as it was
// ("Node 20, warm npm cache") fails.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers.js';

test('docs/install-and-upgrade.md names no Node below the engines\' floor, and its measurements say their Node', () => {
  const floor = Number(/^>=(\d+)/.exec(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node)?.[1]);
  assert.equal(floor, 22);
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'install-and-upgrade.md'), 'utf8');
  const named = [...page.matchAll(/\bNode(?:\.js)?,? (?:v?(\d+)(?:\.\d+)*)(?: or (\d+))?/gi)].flatMap((m) => [m[1], m[2]].filter(Boolean).map(Number));
  assert.ok(named.length >= 2, `the page names its Nodes: ${named}`);
  assert.deepEqual(named.filter((n) => n < floor), [], 'no Node below the floor');
  assert.match(page, /Measured\s+on Node (22|24)\.\d+\.\d+/, 'the measurements name the Node they ran on');
});
