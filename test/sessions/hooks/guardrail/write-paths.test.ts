// Where a write may land (sessions/hooks/guardrail/write-paths.ts): the file tools' paths inside the
// vault (never its .git) or an extra dir, by text and by real path.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { guard } from '../../../../sessions/hooks/guardrail.js';
import { tempDir } from '../../../helpers.js';
import { guardTable, type Row } from './table.js';

const DANGEROUS: Row[] = [
  ['Write outside', { tool_name: 'Write', tool_input: { file_path: '/tmp/outside.txt', content: 'x' }, cwd: '/srv/vault' }],
  ['Write with ~', { tool_name: 'Write', tool_input: { file_path: '~/x.txt', content: 'x' }, cwd: '/srv/vault' }],
  ['Write relative escaping', { tool_name: 'Write', tool_input: { file_path: '../escape.md', content: 'x' }, cwd: '/srv/vault' }],
  ['Edit outside', { tool_name: 'Edit', tool_input: { file_path: '/etc/hosts', old_string: 'a', new_string: 'b' }, cwd: '/srv/vault' }],
  ['MultiEdit in .git', { tool_name: 'MultiEdit', tool_input: { file_path: '/srv/vault/.git/HEAD', edits: [] }, cwd: '/srv/vault' }],
  ['NotebookEdit outside', { tool_name: 'NotebookEdit', tool_input: { notebook_path: '/home/ns/n.ipynb', new_source: '' }, cwd: '/srv/vault' }],
];

const HARMLESS: Row[] = [
  ['Write in the vault', { tool_name: 'Write', tool_input: { file_path: '/srv/vault/notes/a.md', content: 'x' }, cwd: '/srv/vault' }],
  ['Write relative in the vault', { tool_name: 'Write', tool_input: { file_path: 'notes/b.md', content: 'x' }, cwd: '/srv/vault' }],
  ['Edit in an extra dir', { tool_name: 'Edit', tool_input: { file_path: '/srv/shared/x.md', old_string: 'a', new_string: 'b' }, cwd: '/srv/vault' }],
];

guardTable(DANGEROUS, HARMLESS);

test('a symlink inside the vault that leads out does not carry a write out', (t) => {
  const vault = path.join(tempDir(t), 'vault');
  const outside = path.join(path.dirname(vault), 'elsewhere');
  fs.mkdirSync(vault);
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, path.join(vault, 'link'));
  const r = { vault, extraDirs: [], home: '/home/ns' };
  const at = (tool_name: string, tool_input: unknown) => guard({ tool_name, tool_input, cwd: vault }, r);
  assert.equal(at('Write', { file_path: path.join(vault, 'link', 'x'), content: 'x' }).allow, false);
  assert.equal(at('MultiEdit', { file_path: 'link/x', edits: [] }).allow, false);
  assert.equal(at('Bash', { command: 'echo x > link/x' }).allow, false);
  assert.equal(at('Bash', { command: 'rm -rf link/*' }).allow, false);
  // The vault's own files, and a file that does not exist yet, are fine.
  assert.equal(at('Write', { file_path: path.join(vault, 'notes', 'new.md'), content: 'x' }).allow, true);
  assert.equal(at('Bash', { command: 'echo x > notes.md' }).allow, true);
});
