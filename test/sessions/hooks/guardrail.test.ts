// The guardrail as the hook calls it: which tools it reads, and what a block says. The rules' own
// tables are in guardrail/, one file per family, each through this same guard().
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { guard } from '../../../sessions/hooks/guardrail.js';
import { bash, guardTable, roots, type Row } from './guardrail/table.js';

const DANGEROUS: Row[] = [
  ['Write without a path', { tool_name: 'Write', tool_input: { content: 'x' }, cwd: '/srv/vault' }],
  ['Bash without a command', { tool_name: 'Bash', tool_input: {}, cwd: '/srv/vault' }],
];

const HARMLESS: Row[] = [
  ['Read outside', { tool_name: 'Read', tool_input: { file_path: '/etc/hosts' }, cwd: '/srv/vault' }],
  ['an MCP tool', { tool_name: 'mcp__nightshift_memory__observe', tool_input: { text: 'rm -rf ~' }, cwd: '/srv/vault' }],
];

guardTable(DANGEROUS, HARMLESS);

test('a block says why, and names nightshift', () => {
  const v = guard(bash('rm -rf ~/x'), roots);
  assert.equal(v.allow, false);
  assert.match((v as { reason: string }).reason, /^blocked by nightshift: rm -r of "~\/x": a path with `~`/);
});
