// The README's table of what nightshift costs: rewritten from a bench run, row by row.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { mergeReadme, README_END, README_START, wallRows } from '../../bench/wall-table.js';
import { ROOT } from '../helpers.js';

const README = `# x\n\n${README_START}\n| figure | goal | measured | | when |\n|---|---|---|---|---|\n| \`tick\` with nothing due / \`node -e 0\` | ≤ 2.5 | 3.1 (old) | missed | 2026-11-01 |\n| \`status\` / \`node -e 0\` | ≤ 2.5 | 3.6 (old) | missed | 2026-11-01 |\n${README_END}\n\nafter\n`;

test('a run replaces the rows it measured and keeps the others, in the table\'s order', () => {
  const rows = wallRows({ tick: { ratio: 2.4, median_ms: 96, node_floor_median_ms: 40 }, per_tool: { added_per_call_ms: 8.2, bare_per_call_ms: 50.1, added_gap_ms: 7.9 } });
  const out = mergeReadme(README, rows, '2026-12-02, 2 cores, load 0.4');
  const table = out.slice(out.indexOf(README_START), out.indexOf(README_END)).split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| figure'));
  assert.deepEqual(table, [
    '| added to each tool call (`nightshift run` minus the bare CLI, 60 Bash calls) | ≤ 10 ms | 8.2 ms (bare 50.1 ms a call; median gap between calls +7.9 ms) | met | 2026-12-02, 2 cores, load 0.4 |',
    '| `tick` with nothing due / `node -e 0` | ≤ 2.5 | 2.4 (96 ms vs 40 ms) | met | 2026-12-02, 2 cores, load 0.4 |',
    '| `status` / `node -e 0` | ≤ 2.5 | 3.6 (old) | missed | 2026-11-01 |',
  ]);
  assert.ok(out.startsWith('# x\n\n') && out.endsWith(`${README_END}\n\nafter\n`), 'the rest of the README is kept');
});

test('a goal missed says so', () => {
  assert.equal(wallRows({ status: { ratio: 2.51, median_ms: 100 } })[0].met, false);
  assert.equal(wallRows({ status: { ratio: 2.5, median_ms: 100 } })[0].met, true);
});

test('a README without the markers is refused, not guessed at', () => {
  assert.throws(() => mergeReadme('# x\n| figure |\n', wallRows({ status: { ratio: 2, median_ms: 90 } }), 'now'), /no <!-- bench:wall-table -->/);
});

test('the README holds the table, with a row for each of the five figures', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  assert.ok(readme.indexOf(README_START) >= 0 && readme.indexOf(README_END) > readme.indexOf(README_START), 'the markers');
  const block = readme.slice(readme.indexOf(README_START), readme.indexOf(README_END));
  for (const f of ['added to each tool call', '`nightshift run` / bare CLI', '`tick` with nothing due', '`status` / `node -e 0`', 'memory query p50 over MCP']) assert.ok(block.includes(`| ${f}`), `README's table has no row for ${f}`);
});
