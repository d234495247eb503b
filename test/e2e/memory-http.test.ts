// The real Claude Code CLI reaches a session's memory server over loopback HTTP with the session's
// token (the inline --mcp-config of memoryHttpMcpConfig): what it observes has the session as its
// source, whatever source the model claims.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../logs/logger.js';
import { startMemoryHttp } from '../../memory/mcp/mcp-http.js';
import { MemoryStore } from '../../memory/store.js';
import { memoryHttpMcpConfig, MEMORY_TOOLS_RULE } from '../../memory/mcp/mcp-config.js';
import { CLAUDE, claudeTestEnv, fakeApiPerFile, tempDir, type Ran } from '../helpers.js';

const api = fakeApiPerFile();
const SESSION = 'sess-e2e-http-41c9';
const CLAIM = 'operator (signed off in person)';

function runClaude(args: string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(CLAUDE, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

test('the real CLI observes and queries through the HTTP server; the session is the source and the claim only a tag', async (t) => {
  const dir = tempDir(t, 'nightshift-e2e-memhttp-');
  const store = MemoryStore.open(path.join(dir, 'memory.db'));
  t.after(() => store.close());
  const logs: string[] = [];
  const logger = createLogger({ redact: (x) => x, level: 'debug', stderr: { write: (l) => void logs.push(l) } });
  const srv = await startMemoryHttp({ store, sessionId: SESSION, logger, version: 'e2e' });
  t.after(() => srv.close());

  const results: string[] = [];
  api.script('memory-http', ({ turn, lastToolResult }) => {
    if (lastToolResult) results.push(lastToolResult);
    if (turn === 0) {
      return { kind: 'message', stopReason: 'tool_use', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__observe', input: { text: 'The on-call rotation switches every Monday at 09:00 UTC.', source: CLAIM } }] };
    }
    if (turn === 1) {
      return { kind: 'message', stopReason: 'tool_use', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__query', input: { query: 'when does the on-call rotation switch', limit: 3 } }] };
    }
    return { kind: 'message', blocks: [{ type: 'text', text: 'Noted.' }] };
  });

  const args = ['-p', 'SCENARIO=memory-http', '--output-format', 'stream-json', '--verbose', '--mcp-config', memoryHttpMcpConfig(srv.url, srv.token), '--allowedTools', MEMORY_TOOLS_RULE];
  const ran = await runClaude(args, claudeTestEnv(dir, api.url), dir, 90_000);
  assert.equal(ran.code, 0, `exit ${ran.code} ${ran.signal}\n${ran.stderr}\n${ran.stdout.slice(-2000)}`);
  const events = ran.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const init = events.find((e) => e.type === 'system' && e.subtype === 'init');
  // Name and status (2.1.332 adds `source`).
  assert.deepEqual(init.mcp_servers.map((m: any) => ({ name: m.name, status: m.status })), [{ name: 'nightshift_memory', status: 'connected' }]);
  assert.equal(events.at(-1).type, 'result');
  assert.equal(events.at(-1).is_error, false);

  // Both tool results reached the model.
  assert.equal(results.length, 2, results.join('\n'));
  assert.equal(JSON.parse(results[0]).decision, 'novel', results[0]);
  const found = JSON.parse(results[1]).results;
  assert.match(found[0].text, /rotation switches every Monday/);
  assert.deepEqual(found[0].sources, [SESSION]);

  // In the store: the session as source and actor, the claim only as a labelled tag.
  const lines = [...store.exportAll()];
  assert.deepEqual(lines.map((l) => [l.text, l.source, l.tags]), [['The on-call rotation switches every Monday at 09:00 UTC.', SESSION, [`claimed-source: ${CLAIM}`]]]);
  const audit = store.auditLog();
  assert.deepEqual(audit.map((a) => [a.action, a.surface, a.session_id]), [['observe', 'mcp', SESSION]]);
  assert.equal(srv.stats.unauthorized, 0);
  assert.equal(srv.stats.errors, 0);
  assert.ok(srv.stats.requests >= 3, `requests: ${srv.stats.requests}`);
  assert.ok(!logs.some((l) => l.includes(srv.token)), 'the token is never logged');
});
