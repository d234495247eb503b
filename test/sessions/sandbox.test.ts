// bwrapArgs, pure apart from existence checks: what it hides and binds for a layout.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { bwrapArgs } from '../../sessions/sandbox.js';
import { tempDir } from '../helpers.js';

test('a hidden folder that does not exist is left out (a system user\'s home: /nonexistent)', (t) => {
  const dir = tempDir(t);
  for (const d of ['vault', 'state', 'session/home']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const gone = path.join(dir, 'nonexistent');
  const args = bwrapArgs({
    vault: path.join(dir, 'vault'), writable: [], hidden: [path.join(dir, 'state'), gone], hiddenFiles: [], readable: [],
    sessionDir: path.join(dir, 'session'), home: path.join(dir, 'session', 'home'),
  }, 'claude', ['-p']);
  const tmpfs = args.flatMap((a, i) => (a === '--tmpfs' ? [args[i + 1]] : []));
  assert.deepEqual(tmpfs, ['/tmp', path.join(dir, 'state')]);
  assert.ok(!args.includes(gone), args.join(' '));
});
