// `nightshift hook pre-tool-use` as a command hook: stdout carries only the hook's JSON, bad
// payloads are logged and allowed, and it always exits 0, with or without a config.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { BIN, tempDir } from '../../helpers.js';

function hook(input: string, cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BIN, 'hook', 'pre-tool-use'], { cwd, env: { PATH: process.env.PATH, HOME: cwd, ...env } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => resolve({ code, stdout, stderr }));
    c.stdin.end(input);
  });
}

const payload = (tool_name: string, tool_input: unknown, cwd: string) => JSON.stringify({ session_id: 's', cwd, hook_event_name: 'PreToolUse', tool_name, tool_input, tool_use_id: 't' });

describe('nightshift hook pre-tool-use', () => {
  test('a dangerous call prints the deny JSON and nothing else; a harmless one prints nothing', async (t) => {
    const dir = tempDir(t);
    const no = await hook(payload('Bash', { command: 'rm -rf ~/x' }, dir), dir);
    assert.equal(no.code, 0);
    const j = JSON.parse(no.stdout);
    assert.equal(j.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(j.hookSpecificOutput.permissionDecisionReason, /rm -r of "~\/x"/);
    const w = await hook(payload('Write', { file_path: '/etc/x', content: '' }, dir), dir);
    assert.equal(JSON.parse(w.stdout).hookSpecificOutput.permissionDecision, 'deny');
    const ok = await hook(payload('Write', { file_path: path.join(dir, 'a.md'), content: '' }, dir), dir);
    assert.deepEqual([ok.code, ok.stdout], [0, '']);
  });

  test('payloads that are not JSON, empty, lack fields, or are huge are logged to stderr and allowed with exit 0', async (t) => {
    const dir = tempDir(t);
    for (const [input, why] of [['not json', /not JSON/], ['', /empty payload/], ['{"tool_input":{}}', /no tool_name/], ['{"tool_name":"Bash"}', /no tool_input/], ['[]', /not a JSON object/]] as const) {
      const r = await hook(input, dir);
      assert.equal(r.code, 0, input);
      assert.equal(r.stdout, '', input);
      assert.match(r.stderr, why);
      assert.match(r.stderr, /"event":"hook_bad_payload"/);
    }
    const huge = await hook(payload('Write', { file_path: path.join(dir, 'big.md'), content: 'x'.repeat(4 * 1024 * 1024) }, dir), dir);
    assert.deepEqual([huge.code, huge.stdout], [0, '']);
  });
});
