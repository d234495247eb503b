// Context in, with the real CLI: the state reaches the model; the supervisor's hook blocks a
// dangerous rm and a write outside the vault and the session goes on to ok; a loop is told
// "blocked: repeat" before it is ended; OBSERVE lines outlive the session.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fakeApiPerFile, nightshift, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const systemText = (body: any) => (Array.isArray(body.system) ? body.system.map((b: any) => b.text ?? '').join('\n') : String(body.system ?? ''));

describe('context in', () => {
  test('the session state reaches the model in the request, and is saved in the vault and beside the transcript', async (t) => {
    const ws = workspace(t, api.url);
    const seen: string[] = [];
    api.script('state-seen', ({ turn, body }) => {
      if (turn === 0) seen.push(systemText(body));
      return { kind: 'message', blocks: [{ type: 'text', text: 'ok' }] };
    });
    const b = await nightshift(['memory', 'observe', 'The vault keeps one note per idea, never folders of drafts', '--category', 'value'], ws.env, ws.dir);
    assert.equal(b.code, 0, b.stderr);
    writeAgent(ws, 'stater', 'SCENARIO=state-seen');
    const { ran, record } = await runJson(ws, 'stater');
    assert.equal(record.outcome, 'ok', ran.stderr);
    assert.equal(seen.length, 1);
    assert.match(seen[0], /# Session state \(nightshift\)/);
    assert.match(seen[0], /agent: stater, session /);
    assert.match(seen[0], /\[value\] "The vault keeps one note per idea/);
    const inVault = fs.readFileSync(path.join(ws.vault, '.nightshift', 'session-state.md'), 'utf8');
    assert.ok(seen[0].includes(inVault.trim()), 'the model got exactly the saved state');
    assert.equal(fs.readFileSync(record.transcript.replace(/\.jsonl$/, '.state.md'), 'utf8'), inVault);
    const st = await nightshift(['state', '--agent', 'stater', '--json'], ws.env, ws.dir);
    assert.equal(st.code, 0, st.stderr);
    const j = JSON.parse(st.stdout);
    assert.match(j.text, /stater: ok/);
    assert.ok(j.chars <= j.max_chars);
  });

  test('a scripted rm -rf ~/... and a Write outside the vault are blocked, nothing is touched, and the session ends ok', async (t) => {
    const ws = workspace(t, api.url);
    const precious = path.join(ws.env.HOME!, 'precious');
    fs.mkdirSync(precious);
    fs.writeFileSync(path.join(precious, 'keep.txt'), 'keep');
    const outside = path.join(ws.dir, 'outside.txt');
    const results: string[] = [];
    api.script('guarded', ({ turn, lastToolResult }) => {
      if (lastToolResult) results.push(lastToolResult);
      if (turn === 0) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'rm -rf ~/precious', description: 'clean' } }] };
      if (turn === 1) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: outside, content: 'escaped' } }] };
      if (turn === 2) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: path.join(ws.vault, 'inside.md'), content: 'fine' } }] };
      return { kind: 'message', blocks: [{ type: 'text', text: 'done' }] };
    });
    writeAgent(ws, 'guarded', 'SCENARIO=guarded', { allowed_tools: ['Bash(rm:*)', 'Write'] });
    const { ran, record } = await runJson(ws, 'guarded');
    assert.equal(record.outcome, 'ok', ran.stderr);
    assert.equal(results.length, 3, results.join('\n'));
    assert.match(results[0], /blocked by nightshift: rm -r of "~\/precious": a path with `~`/);
    assert.match(results[1], /blocked by nightshift: Write to .*outside the vault/);
    assert.ok(fs.existsSync(path.join(precious, 'keep.txt')), 'nothing deleted');
    assert.equal(fs.existsSync(outside), false, 'nothing written outside');
    assert.equal(fs.readFileSync(path.join(ws.vault, 'inside.md'), 'utf8'), 'fine');
    assert.match(ran.stderr, /"event":"hook_block"/);
    // The hook token (64 hex) in any form: with or without `Bearer`, in stderr or the day's log.
    const logs = fs.readdirSync(ws.logs).filter((f) => f.endsWith('.log')).map((f) => fs.readFileSync(path.join(ws.logs, f), 'utf8')).join('');
    for (const text of [ran.stderr, logs]) assert.doesNotMatch(text, /[0-9a-f]{64}/, 'the hook token is never logged');
    // The session's folder (its hook settings with the token among it) is gone: listed, not guessed.
    const sessionsDir = path.join(ws.state, 'sessions');
    assert.deepEqual(fs.existsSync(sessionsDir) ? fs.readdirSync(sessionsDir) : [], [], 'the session folder and its settings file are removed');
    assert.doesNotMatch(ran.stderr, /"event":"session_dirs_swept"/, 'removed by the session itself, not by a sweep');
  });

  test('a scripted loop is told "blocked: repeat" before the supervisor ends it as loop', async (t) => {
    const ws = workspace(t, api.url);
    const results: string[] = [];
    api.script('loop-told', ({ lastToolResult }) => {
      if (lastToolResult) results.push(lastToolResult);
      return { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo again', description: 'again' } }] };
    });
    writeAgent(ws, 'looper', 'SCENARIO=loop-told');
    const { ran, record } = await runJson(ws, 'looper');
    assert.equal(record.outcome, 'loop', ran.stderr);
    // 2.1.332 puts the hook's reason after "PreToolUse:Bash hook error: "; 2.1.197 gave it alone.
    const told = (r: string) => /^(?:PreToolUse:Bash hook error: )?blocked: repeat: you made this exact call/.test(r.split('\n').find((l) => l.includes('blocked: repeat')) ?? '');
    assert.ok(results.some(told), results.join('\n'));
    assert.equal(results.filter(told).length, 1, 'told once, then ended');
  });

  test('OBSERVE lines in the agent\'s text are in the store afterwards, with the session as source', async (t) => {
    const ws = workspace(t, api.url);
    api.script('observer', () => ({ kind: 'message', blocks: [{ type: 'text', text: 'Done.\nOBSERVE: The reading list note links to 31 papers\nTHREAD: Check the three dead links in the reading list' }] }));
    writeAgent(ws, 'observer', 'SCENARIO=observer');
    const { ran, record } = await runJson(ws, 'observer');
    assert.equal(record.outcome, 'ok', ran.stderr);
    const q = await nightshift(['memory', 'query', 'reading list papers', '--json'], ws.env, ws.dir);
    assert.equal(q.code, 0, q.stderr);
    const hits = JSON.parse(q.stdout);
    const hit = hits.find((h: any) => /31 papers/.test(h.text));
    assert.ok(hit, q.stdout);
    assert.deepEqual(hit.sources, [record.id]);
    assert.match(ran.stderr, /"event":"capture"/);
    // The next session's state shows the thread it left open.
    const st = await nightshift(['state', '--agent', 'observer'], ws.env, ws.dir);
    assert.match(st.stdout, /Check the three dead links in the reading list/);
  });
});
