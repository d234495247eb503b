// The session's wall clock holds while the supervisor's event loop is blocked (issue 52 part 4),
// end to end: the real CLI against the imitation API, walled as configured, its supervisor blocked
// half a second after its CLI is seen (test/fixtures/run-blocked-loop.mjs busy-waits in the supervisor's own
// process, as counting a hostile file or a bug of ours would) until nothing of the session is left
// alive, or 25 s. The watchdog thread ends the session at its 6 s wall clock meanwhile; the control,
// its limits as timers on the loop, leaves the session running until the loop is free.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { configYaml, fakeApiPerFile, FIXTURES, ledgerRows, processesMatching, workspace, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();

function blockedRun(ws: Workspace, watchdog: 'thread' | 'loop'): Promise<{ code: number | null; stderr: string; record: any }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [path.join(FIXTURES, 'run-blocked-loop.mjs'), ws.config, 'hanger', watchdog, '500', '25000'], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d));
    c.stderr.on('data', (d: Buffer) => (stderr += d));
    c.on('close', (code) => {
      let record = null;
      try {
        record = JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null');
      } catch {
        // printed none
      }
      resolve({ code, stderr, record });
    });
  });
}

describe('the watchdog with the supervisor blocked', () => {
  for (const [name, watchdog, died] of [
    ['a session is ended at its wall clock while the supervisor\'s event loop is blocked', 'thread', true],
    ['negative control: with its limits as timers on the loop, the session runs on while the loop is blocked', 'loop', false],
  ] as const) {
    test(name, { timeout: 120_000 }, async (t) => {
      const tag = watchdog === 'thread' ? 627 : 628;
      t.after(() => processesMatching(`sleep ${tag}`).forEach((p) => process.kill(p.pid, 'SIGKILL')));
      const ws = workspace(t, api.url, configYaml({ claude: { timeout: '6s', idle_timeout: '6s', kill_grace: '2s' } }));
      // The CLI's own request timeout (20 s in the tests' environment) would end the control's
      // session while the loop is blocked: longer than the block here.
      ws.env.API_TIMEOUT_MS = '120000';
      writeAgent(ws, 'hanger', `SCENARIO=bg-hang SLEEP=${tag}`, { allowed_tools: ['Bash'] });
      const r = await blockedRun(ws, watchdog);
      assert.ok(r.record, r.stderr);
      t.diagnostic(`blocked ${r.record.blockedMs} ms; ${r.record.outcome}: ${r.record.error}; ${r.record.result}`);
      assert.equal(r.record.diedWhileBlocked, died, died ? 'the session was ended while the loop was blocked' : 'nothing ended the session while the loop was blocked');
      // Either way it is the wall clock's, once the supervisor could say so.
      assert.equal(r.record.outcome, 'timeout');
      assert.equal(ledgerRows(ws.dir)[0].outcome, 'timeout');
      assert.deepEqual(processesMatching(`sleep ${tag}`), [], 'nothing of the session left');
    });
  }
});
