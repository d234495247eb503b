// Finding a session's processes: each net must catch what the other cannot.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { killSession, sessionProcs } from '../../core/process-tree.js';
import { processesMatching, waitFor } from '../helpers.js';

test('the tree walk alone finds a live descendant that carries no marker', async (t) => {
  // `env -i` clears the marker; the shell stays alive, so the sleep is still below it.
  const sh = spawn('sh', ['-c', 'env -i sleep 671; true'], { stdio: 'ignore' });
  t.after(() => {
    for (const p of processesMatching('sleep 671')) process.kill(p.pid, 'SIGKILL');
    sh.kill('SIGKILL');
  });
  const sleeps = () => processesMatching('sleep 671').filter((p) => p.cmdline.startsWith('sleep'));
  await waitFor(() => sleeps().length === 1, 5000, 'the sleep');
  const sleepPid = sleeps()[0].pid;
  assert.deepEqual(sessionProcs(null, 'no-such-session-marker'), [], 'the marker finds nothing');
  assert.ok(sessionProcs(sh.pid!, 'no-such-session-marker').includes(sleepPid), 'the tree walk finds it');
  const killed = await killSession(sh.pid!, 'no-such-session-marker', 300);
  assert.ok(killed >= 2);
  await waitFor(() => sleeps().length === 0, 3000, 'the sleep to be gone');
});
