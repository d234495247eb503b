// What a session changed among the CLI's project files, links recorded, never followed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { changedProjectFiles, snapshotProjectFiles } from '../../../sessions/wall/project-files.js';
import { tempDir } from '../../helpers.js';

test('made, changed and removed project files are named; other vault files are not', (t) => {
  const vault = tempDir(t);
  fs.writeFileSync(path.join(vault, 'CLAUDE.md'), 'a\n');
  fs.writeFileSync(path.join(vault, '.mcp.json'), '{}');
  fs.writeFileSync(path.join(vault, 'notes.md'), 'n\n');
  const before = snapshotProjectFiles(vault);
  assert.deepEqual(changedProjectFiles(before, snapshotProjectFiles(vault)), []);
  fs.mkdirSync(path.join(vault, '.claude'));
  fs.writeFileSync(path.join(vault, '.claude', 'settings.json'), '{"disableAllHooks":true}');
  fs.appendFileSync(path.join(vault, 'CLAUDE.md'), 'b\n');
  fs.rmSync(path.join(vault, '.mcp.json'));
  fs.writeFileSync(path.join(vault, 'notes.md'), 'changed\n');
  fs.symlinkSync('/etc', path.join(vault, 'CLAUDE.local.md'));
  assert.deepEqual(changedProjectFiles(before, snapshotProjectFiles(vault)), ['.claude', '.claude/settings.json', '.mcp.json', 'CLAUDE.local.md', 'CLAUDE.md']);
});
