// The flags nightshift's processes start with are the same wherever node is started for it: the
// bin's #! line and the tick's and daemon's units.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { NODE_FLAGS, SHEBANG } from '../../core/node-flags.js';
import { ROOT } from '../helpers.js';

test('the built bin starts node with the flags', () => {
  assert.equal(fs.readFileSync(path.join(ROOT, 'dist', 'cli', 'bin.js'), 'utf8').split('\n')[0], SHEBANG);
  assert.match(SHEBANG, /^#!\/usr\/bin\/env -S node --min-semi-space-size=32$/);
});

test('the tick and the daemon units start node with the flags, before the bin', () => {
  for (const unit of ['nightshift.service', 'nightshift-daemon.service']) {
    const line = fs.readFileSync(path.join(ROOT, 'deploy', 'systemd', unit), 'utf8').split('\n').find((l) => l.startsWith('ExecStart='));
    assert.match(line ?? '', /^ExecStart=\{\{NODE\}\} \{\{NODE_FLAGS\}\} \{\{BIN\}\} /, unit);
  }
  assert.deepEqual(NODE_FLAGS, ['--min-semi-space-size=32']);
});
