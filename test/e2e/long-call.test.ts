// The fixtures' long tool call (longCall) runs under the CLI the tests use; the bare `sleep N` it
// replaced is refused by 2.1.332 and later ("Blocked: standalone sleep"), so a watchdog test built
// on it would end `ok` at once. Through the real CLI against the imitation API.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test, type TestContext } from 'node:test';
import { longCall, text } from '../fake-api.js';
import { CLAUDE, claudeTestEnv, fakeApiPerFile, processesMatching, tempDir } from '../helpers.js';

const api = fakeApiPerFile();

// Runs one Bash call through the CLI, ending its process once seen (`seen`: it ran; a refused call
// never does). Resolves with the tool_result the CLI sent back.
async function toolCall(t: TestContext, scenario: string, command: string, needle: string): Promise<{ result: any; seen: boolean }> {
  api.script(scenario, ({ turn }) => (turn === 0 ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'wait' } }], stopReason: 'tool_use' } : text('done')));
  const dir = tempDir(t);
  const child = spawn(CLAUDE, ['-p', `SCENARIO=${scenario}`, '--output-format', 'stream-json', '--verbose', '--max-turns', '3', '--model', 'sonnet', '--allowedTools', 'Bash', '--no-session-persistence'], { env: claudeTestEnv(dir, api.url), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const p of processesMatching(needle)) process.kill(p.pid, 'SIGKILL');
  });
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.resume();
  const closed = new Promise((r) => child.on('close', r));
  let seen = false;
  let done = false;
  void closed.then(() => (done = true));
  // The call runs until it is ended here: seeing its process is the proof it was not refused.
  while (!done) {
    const running = processesMatching(needle).filter((p) => /^(perl|sleep) /.test(p.cmdline));
    if (running.length) {
      seen = true;
      for (const p of running) process.kill(p.pid, 'SIGTERM');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const result = lines.flatMap((l) => (l.type === 'user' ? l.message.content : [])).find((c: any) => c.type === 'tool_result');
  return { result, seen };
}

test('the fixtures\' long call runs until it is ended; a bare sleep as long is refused (from 2.1.332)', { timeout: 240_000 }, async (t) => {
  const long = await toolCall(t, 'long-call-perl', longCall(733), 'sleep 733');
  assert.equal(long.seen, true, 'the long call ran');
  assert.doesNotMatch(JSON.stringify(long.result), /Blocked/);
  // The control: what the fixtures did before. The pinned CLI refuses it without starting it; an
  // older one (npm run compat) may run it.
  const bare = await toolCall(t, 'long-call-sleep', 'sleep 734', 'sleep 734');
  const refused = /Blocked: standalone sleep 734/.test(JSON.stringify(bare.result));
  // The pinned 2.1.332 and later refuse it; 2.1.197 runs it (npm run compat -- --cli 2.1.197).
  if (refused) {
    assert.ok(refused, JSON.stringify(bare.result));
    assert.equal(bare.seen, false, 'a refused call starts nothing');
    assert.equal(bare.result.is_error, true);
  } else assert.equal(bare.seen, true, JSON.stringify(bare.result));
});
