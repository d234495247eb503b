// The supervisor's hook server: token or 401, deny on anything it cannot read or decide, and a
// dead signal when it stops answering.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { describe, test } from 'node:test';
import { hookSettings, HOOK_PATH, startHookServer, writeSettingsFile, type HookServer } from '../../../sessions/hooks/hook-server.js';
import { decider } from '../../../sessions/hooks/session-hooks.js';
import { DEFAULT_MAX_CONNECTIONS } from '../../../core/loopback.js';
import { waitFor } from '../../helpers.js';

const quiet = { warn() {}, debug() {}, error() {} };
const logs: string[] = [];
const capture = { warn: (o: object) => logs.push(JSON.stringify(o)), debug() {}, error: (o: object) => logs.push(JSON.stringify(o)) };

async function post(s: HookServer, body: string, token: string | null = s.token, path = HOOK_PATH) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const r = await fetch(`${s.url}${path}`, { method: 'POST', headers, body });
  const text = await r.text();
  return { status: r.status, text, json: text ? JSON.parse(text) : null };
}

const payload = (tool_name: string, tool_input: unknown, extra: object = {}) =>
  JSON.stringify({ session_id: 's', cwd: '/srv/vault', hook_event_name: 'PreToolUse', tool_name, tool_input, tool_use_id: 'toolu_1', ...extra });

async function server(t: { after: (fn: () => Promise<void>) => void }, decide = decider({ vault: '/srv/vault', extraDirs: [], home: '/home/ns' }, { maxRepeats: 5, window: 20, cycleRepeats: 3 }), opts: object = {}) {
  const s = await startHookServer({ decide, logger: quiet, redact: (x) => x, ...opts });
  t.after(() => s.close());
  return s;
}

const denied = (j: any) => j?.hookSpecificOutput?.permissionDecision === 'deny';

describe('hook server', () => {
  test('listens on 127.0.0.1 only, allows with an empty answer and denies with the reason', async (t) => {
    const s = await server(t);
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const ok = await post(s, payload('Bash', { command: 'echo hi' }));
    assert.deepEqual([ok.status, ok.json], [200, {}]);
    const no = await post(s, payload('Bash', { command: 'rm -rf ~/x' }));
    assert.equal(no.status, 200);
    assert.equal(no.json.hookSpecificOutput.hookEventName, 'PreToolUse');
    assert.match(no.json.hookSpecificOutput.permissionDecisionReason, /blocked by nightshift: rm -r/);
  });

  // Issue 26: 160 unfinished requests, each buffering its body, took the supervisor to 1.7 GB.
  test('unfinished requests past the bound are closed at once; the ones held, and later ones, are served', async (t) => {
    const s = await server(t, undefined, { listen: null });
    const port = Number(new URL(s.url).port);
    const held: net.Socket[] = [];
    const closed: boolean[] = [];
    for (let i = 0; i < 20; i++) {
      const c = net.connect(port, '127.0.0.1');
      const k = closed.push(false) - 1;
      c.on('close', () => (closed[k] = true));
      c.on('error', () => {});
      c.write(`POST ${HOOK_PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\nContent-Length: 10000000\r\n\r\n{"a":`);
      held.push(c);
    }
    t.after(() => held.forEach((c) => c.destroy()));
    // Those past the bound are closed at once; the rest wait for their bodies.
    await waitFor(() => closed.filter((c) => c).length >= 20 - DEFAULT_MAX_CONNECTIONS, 10_000, 'the connections past the bound to be closed');
    assert.equal(closed.filter((c) => !c).length, DEFAULT_MAX_CONNECTIONS, `open: ${closed.filter((c) => !c).length}`);
    held.forEach((c) => c.destroy());
    // Served again once the server has seen them go (a connection it still counts is closed unanswered).
    let ok: { status: number } | null = null;
    for (const end = Date.now() + 10_000; !ok && Date.now() < end;) {
      ok = await post(s, payload('Bash', { command: 'echo hi' })).catch(() => null);
      if (!ok) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(ok?.status, 200, 'served again once they are gone');
  });

  test('a request without the token, or with a wrong one, is refused with 401 and decided nothing', async (t) => {
    const s = await server(t);
    assert.equal((await post(s, payload('Bash', { command: 'echo' }), null)).status, 401);
    assert.equal((await post(s, payload('Bash', { command: 'echo' }), 'x'.repeat(64))).status, 401);
    assert.equal((await fetch(`${s.url}/health`)).status, 401);
    assert.equal(s.stats.refused, 3);
    assert.equal(s.stats.requests, 0);
  });

  test('bodies that are not JSON, empty, not an object, lack fields, or are huge are denied; the server goes on', async (t) => {
    const s = await server(t, undefined, { maxBodyBytes: 64 * 1024 });
    for (const body of ['not json', '', '[1,2]', '{"tool_input":{}}', '{"tool_name":"Bash"}', payload('Bash', { command: 'x' }, { hook_event_name: 'Stop' })]) {
      const r = await post(s, body);
      assert.equal(r.status, 200, body);
      assert.ok(denied(r.json), `denied: ${body}`);
      assert.match(r.json.hookSpecificOutput.permissionDecisionReason, /could not read the call/);
    }
    const huge = await post(s, payload('Write', { file_path: '/srv/vault/a.md', content: 'x'.repeat(200 * 1024) }));
    assert.ok(denied(huge.json));
    assert.match(huge.json.hookSpecificOutput.permissionDecisionReason, /too large/);
    assert.deepEqual((await post(s, payload('Bash', { command: 'echo still here' }))).json, {});
  });

  test('a decision that throws is answered deny, and logged', async (t) => {
    logs.length = 0;
    const s = await startHookServer({ decide: () => { throw new Error('boom'); }, logger: capture, redact: (x) => x });
    t.after(() => s.close());
    const r = await post(s, payload('Bash', { command: 'echo' }));
    assert.ok(denied(r.json));
    assert.equal(s.stats.errors, 1);
    assert.ok(logs.some((l) => l.includes('hook_error') && l.includes('boom')));
  });

  test('the loop pre-block answers "blocked: repeat" on the repeat before the detector would end the session', async (t) => {
    const s = await server(t);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await post(s, payload('Bash', { command: 'echo again' }))).json);
    assert.deepEqual(answers.slice(0, 3), [{}, {}, {}]);
    assert.match(answers[3].hookSpecificOutput.permissionDecisionReason, /^blocked: repeat/);
  });

  test('the dead signal fires when the server stops or fails behind the supervisor\'s back, not on close', async (t) => {
    const a = await server(t, undefined, { pingMs: 20 });
    a.server.close();
    a.server.closeAllConnections();
    await new Promise((r) => a.dead.addEventListener('abort', r, { once: true }));
    assert.match(String(a.dead.reason), /hook server stopped answering/);
    const b = await server(t);
    await b.close();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(b.dead.aborted, false);
  });

  for (const control of [false, true]) {
    test(control
      ? 'control: checked even while the session holds every connection, the server is declared dead under a session that only made parallel calls'
      : 'a session holding every connection it may (parallel tool calls, idle keep-alive sockets) does not make its hook server look dead', async (t) => {
      const s = await server(t, undefined, { pingMs: 20, checkFull: !control });
      const port = Number(new URL(s.url).port);
      const held: net.Socket[] = [];
      t.after(() => held.forEach((c) => c.destroy()));
      for (let i = 0; i < DEFAULT_MAX_CONNECTIONS; i++) {
        const c = net.connect(port, '127.0.0.1');
        await new Promise((r) => c.once('connect', r));
        held.push(c);
      }
      const open = () => new Promise<number>((r) => s.server.getConnections((_e, n) => r(n)));
      // The session's own, and (not in the control) the check's kept socket beside them.
      const full = DEFAULT_MAX_CONNECTIONS + (control ? 0 : 1);
      while ((await open()) < full) await new Promise((r) => setTimeout(r, 10));
      // Twenty pings' time: the dead signal fires on the second miss if it fires at all.
      const pinged = Date.now();
      await waitFor(() => s.dead.aborted || Date.now() - pinged > 20 * 20, 5000, 'twenty pings');
      if (control) return assert.ok(s.dead.aborted, 'the harm: our own connection bound read as a dead server');
      assert.equal(s.dead.aborted, false, String(s.dead.reason));
      // The session's bound still holds: one more of its connections is closed unanswered.
      const over = net.connect(port, '127.0.0.1');
      over.on('error', () => {});
      await new Promise((r) => over.once('close', r));
      // Once one of its connections frees, its next call is served at once: the check, on its
      // own socket all along, never takes the freed slot.
      held.pop()!.destroy();
      while ((await open()) >= full) await new Promise((r) => setTimeout(r, 10));
      // One kept-alive socket for the calls, as the session's own client would keep it.
      const client = new http.Agent({ keepAlive: true, maxSockets: 1 });
      t.after(() => client.destroy());
      const call = (body: string) => new Promise<number>((resolve, reject) => {
        const req = http.request(`${s.url}${HOOK_PATH}`, { method: 'POST', agent: client, headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
      for (let i = 0; i < 10; i++) assert.equal(await call(payload('Bash', { command: `echo ${i}` })), 200);
    });
  }

  test('the settings file names the hook with its token, is private, and is removed', async (t) => {
    const s = await server(t);
    const f = writeSettingsFile(hookSettings(s, 7));
    const st = fs.statSync(f.file);
    assert.equal(st.mode & 0o777, 0o600);
    const j = JSON.parse(fs.readFileSync(f.file, 'utf8'));
    const h = j.hooks.PreToolUse[0];
    assert.equal(h.matcher, '*');
    assert.deepEqual(h.hooks[0], { type: 'http', url: `${s.url}${HOOK_PATH}`, headers: { Authorization: `Bearer ${s.token}` }, timeout: 7 });
    f.remove();
    assert.equal(fs.existsSync(f.file), false);
  });
});
