// The command line itself: usage, config errors, exit codes, --json shapes, secrets.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { listProcs } from '../../core/process-tree.js';
import { CLAUDE, fakeApiPerFile, nightshift, runJson, SANDBOX, startNightshift, tempDir, waitFor, workspace, writeAgent } from '../helpers.js';
import { WALL_API } from '../../sessions/wall/bridge.js';

const api = fakeApiPerFile();

function allFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? (e as any).path, e.name));
}

describe('nightshift CLI', () => {
  test('secrets never reach logs, transcripts, the ledger, printed output or the CLI\'s own files', async (t) => {
    const ws = workspace(t, api.url);
    const secrets: Record<string, string> = {
      ANTHROPIC_API_KEY: 'fake-anthropic-key-0123456789abcdef-0123456789abcdef',
      MY_SERVICE_TOKEN: 'tok-fake-9876543210',
      DISCORD_WEBHOOK_URL: 'https://discord.example/api/webhooks/1/fakewebhooktokenfakewebhooktoken',
      DATABASE_URL: 'postgres://app:fake%20db%2Fpass+signs@db.internal:5432/app',
      SMTP_PASSWORD: 'fake-smtp-password-value',
      GH_PAT: 'fake-personal-access-token-value',
    };
    // The operator hands the agent four of them; the API key and the webhook stay with the supervisor.
    // The supervisor's real key, which its proxy puts back upstream: the fake API accepts it.
    api.accept(secrets.ANTHROPIC_API_KEY);
    writeAgent(ws, 'leaky', 'SCENARIO=echo-secret', { allowed_tools: ['Bash'], env: ['MY_SERVICE_TOKEN', 'DATABASE_URL', 'SMTP_PASSWORD', 'GH_PAT'] });
    const asked = api.requests.length;
    const { ran, record } = await runJson(ws, 'leaky', [], secrets);
    assert.equal(record.outcome, 'ok', ran.stderr);
    // The tool really saw the four it was given, so there was something to hide; the key it saw is
    // the proxy's per-session token, and the webhook not at all.
    assert.match(record.result, /key=[0-9a-f]{64} token=\[redacted\] hook= db=\[redacted\] pw=\[redacted\] pat=\[redacted\]/);
    assert.match(record.result, /DATABASE_URL \[redacted\]/, 'the URL-encoded form is redacted too');
    const shown = (await nightshift(['show', record.id, '--json'], { ...ws.env, ...secrets }, ws.dir)).stdout;
    const files = [...allFiles(ws.logs), ...allFiles(ws.state), ...allFiles(ws.env.CLAUDE_CONFIG_DIR!), ...allFiles(ws.env.HOME!)];
    assert.ok(files.some((f) => f.endsWith('.jsonl')) && files.some((f) => f.endsWith('.log')));
    const transcript = fs.readFileSync(record.transcript, 'utf8');
    // The model's reply came in 7-character deltas; their joined text is a second place to look.
    const joined = transcript.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((m) => m.type === 'stream_event' && m.event?.type === 'content_block_delta').map((m) => m.event.delta.text ?? m.event.delta.partial_json ?? '').join('');
    const haystacks = [ran.stdout, ran.stderr, shown, joined, ...files.map((f) => fs.readFileSync(f, 'latin1'))];
    // The names of the secrets a text holds, whole, URL-encoded, or by their first or last 20.
    const found = (h: string) => Object.keys(secrets).filter((k) => [secrets[k], encodeURIComponent(secrets[k]), secrets[k].slice(0, 20), secrets[k].slice(-20)].some((f) => h.includes(f)));
    for (const [i, h] of haystacks.entries()) assert.deepEqual(found(h), [], `a secret leaked into haystack ${i}`);
    // Negative control: the same search over what the API received back from the tool (the
    // tool_result bodies, never redacted: they are the session's own) finds the raw values of the
    // four the agent was handed, and neither the key nor the webhook, which the session never had.
    const toolResults = api.requests.slice(asked).map((r) => r.toolResult ?? '').join('\n');
    assert.deepEqual(found(toolResults).sort(), ['DATABASE_URL', 'GH_PAT', 'MY_SERVICE_TOKEN', 'SMTP_PASSWORD']);
  });

  test('a bad config exits 78 naming the file and field, before anything starts', async (t) => {
    const ws = workspace(t, api.url);
    fs.writeFileSync(ws.config, 'claude:\n  timeout: forever\nbudget:\n  max_usd_per_day: lots\n');
    writeAgent(ws, 'a', 'SCENARIO=text');
    const ran = await nightshift(['run', 'a'], ws.env, ws.dir);
    assert.equal(ran.code, 78);
    assert.ok(ran.stderr.includes(ws.config));
    assert.match(ran.stderr, /claude\.timeout: Expected a duration/);
    assert.match(ran.stderr, /budget\.max_usd_per_day: /);
    assert.ok(!fs.existsSync(path.join(ws.state, 'ledger.db')), 'nothing was charged');
  });

  test('a bad agent file exits 78 naming it', async (t) => {
    const ws = workspace(t, api.url);
    fs.writeFileSync(path.join(ws.prompts, 'broken.md'), '---\nmax_turns: [1\n---\nhi\n');
    const ran = await nightshift(['run', 'broken'], ws.env, ws.dir);
    assert.equal(ran.code, 78);
    assert.match(ran.stderr, /broken\.md/);
  });

  test('usage errors exit 64; --help and --version exit 0', async (t) => {
    const dir = tempDir(t);
    const env = { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: path.join(dir, 'none.yaml') };
    assert.equal((await nightshift(['frobnicate'], env, dir)).code, 64);
    assert.equal((await nightshift(['run', '--bogus'], env, dir)).code, 64);
    assert.equal((await nightshift(['budget', '--force'], env, dir)).code, 64);
    assert.equal((await nightshift([], env, dir)).code, 64);
    const help = await nightshift(['--help'], env, dir);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Exit codes:[\s\S]*75/);
    for (const cmd of ['run', 'agents', 'budget', 'sessions', 'show', 'tick', 'next', 'status', 'lock', 'daemon', 'systemd', 'alert']) {
      const h = await nightshift([cmd, '--help'], env, dir);
      assert.equal(h.code, 0, cmd);
      assert.match(h.stdout, new RegExp(`Usage: nightshift ${cmd}`));
    }
    assert.match((await nightshift(['--version'], env, dir)).stdout, /^\d+\.\d+\.\d+/);
    assert.equal((await nightshift(['agents'], env, dir)).code, 78, 'a missing config file is a config error');
  });

  test('a corrupt ledger exits 70 naming the file, starts nothing and leaves the file as it was', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'a', 'SCENARIO=text');
    fs.mkdirSync(ws.state);
    const ledger = path.join(ws.state, 'ledger.db');
    fs.writeFileSync(ledger, 'not a database '.repeat(100));
    const before = api.requests.length;
    for (const args of [['run', 'a'], ['budget']]) {
      const ran = await nightshift(args, ws.env, ws.dir);
      assert.equal(ran.code, 70, args.join(' '));
      assert.ok(ran.stderr.includes(`Ledger ${ledger} cannot be opened (SQLITE_NOTADB)`), ran.stderr);
    }
    assert.equal(api.requests.length, before, 'no session was started');
    assert.match(fs.readFileSync(ledger, 'utf8'), /^not a database/);
  });

  test('an unknown agent exits 64 and lists the known ones', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'known', 'SCENARIO=text');
    const ran = await nightshift(['run', 'unknown'], ws.env, ws.dir);
    assert.equal(ran.code, 64);
    assert.match(ran.stderr, /known: known/);
  });

  test('agents, budget, sessions and show print data as JSON', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'alpha', 'SCENARIO=text', { description: 'first', max_runs_per_day: 2 });
    writeAgent(ws, 'beta', 'SCENARIO=err500');
    const agents = JSON.parse((await nightshift(['agents', '--json'], ws.env, ws.dir)).stdout);
    assert.deepEqual(agents.map((a: any) => [a.name, a.max_runs_per_day]), [['alpha', 2], ['beta', null]]);
    const a = (await runJson(ws, 'alpha')).record;
    const b = (await runJson(ws, 'beta')).record;
    const budget = JSON.parse((await nightshift(['budget', '--json'], ws.env, ws.dir)).stdout);
    assert.deepEqual(Object.keys(budget).sort(), ['by_agent', 'cost_usd', 'date', 'left_usd', 'max_sessions', 'max_usd', 'max_usd_per_session', 'min_session_usd', 'reserved_usd', 'sessions', 'windows']);
    assert.equal(budget.sessions, 2);
    assert.deepEqual(Object.keys(budget.by_agent).sort(), ['alpha', 'beta']);
    assert.equal((await nightshift(['budget', '--json', '--date', '2001-01-01'], ws.env, ws.dir)).stdout.trim(), JSON.stringify({ date: '2001-01-01', sessions: 0, max_sessions: 12, cost_usd: 0, reserved_usd: 0, left_usd: 20, max_usd: 20, max_usd_per_session: 5, min_session_usd: 0.1, by_agent: {}, windows: [] }));
    const sessions = JSON.parse((await nightshift(['sessions', '--json', '--limit', '5'], ws.env, ws.dir)).stdout);
    assert.deepEqual(sessions.map((s: any) => s.id), [b.id, a.id], 'newest first');
    assert.deepEqual(sessions[1], a, 'shaped like run --json');
    const shown = JSON.parse((await nightshift(['show', a.id, '--json'], ws.env, ws.dir)).stdout);
    assert.deepEqual(shown, a);
    assert.equal((await nightshift(['show', 'nope'], ws.env, ws.dir)).code, 64);
    const human = await nightshift(['budget'], ws.env, ws.dir);
    assert.match(human.stdout, /sessions {2}2 of 12/);
  });

  test('the CLI\'s environment comes from an allowlist: no credential, no webhook, no config, CLAUDECODE removed', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'envcheck', 'SCENARIO=envcheck', { env: ['SOME_SETTING'] });
    // While the CLI waits for this reply, read its environment from the host's /proc (its own
    // tools get CLAUDECODE=1 from the CLI itself, so they cannot tell).
    let seen: string[] = [];
    // The sandbox runs the CLI by its real path (node_modules may be a link, as in a worktree).
    const claudes = [CLAUDE, fs.realpathSync(CLAUDE)];
    api.script('envcheck', () => {
      for (const pid of listProcs().map((p) => p.pid)) {
        try {
          const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          // This session's CLI only (other test files run sessions at the same time).
          if (claudes.includes(cmd.split('\0')[0]) && cmd.includes('SCENARIO=envcheck')) {
            const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
            if (env.some((e) => e.startsWith('NIGHTSHIFT_SESSION_ID='))) seen = env;
          }
        } catch {
          // gone
        }
      }
      return { kind: 'message', blocks: [{ type: 'text', text: 'checked' }] };
    });
    const webhook = 'https://discord.com/api/webhooks/1/envcheck-webhook-token';
    const { record } = await runJson(ws, 'envcheck', [], { CLAUDECODE: '1', SOME_SETTING: 'kept', OTHER_SETTING: 'dropped', DISCORD_WEBHOOK_URL: webhook, GEMINI_API_KEY: 'gemini-envcheck-key' });
    assert.equal(record.outcome, 'ok');
    assert.ok(seen.length > 0, 'found the CLI process');
    const get = (k: string) => seen.find((e) => e.startsWith(`${k}=`))?.slice(k.length + 1);
    assert.equal(get('CLAUDECODE'), undefined, 'CLAUDECODE removed');
    assert.equal(get('SOME_SETTING'), 'kept', 'a variable the agent names is passed');
    assert.equal(get('OTHER_SETTING'), undefined, 'one it does not name is not');
    for (const k of ['DISCORD_WEBHOOK_URL', 'GEMINI_API_KEY', 'NIGHTSHIFT_CONFIG']) assert.equal(get(k), undefined, `${k} never reaches the session`);
    assert.ok(!seen.some((e) => e.includes(ws.env.ANTHROPIC_API_KEY!) || e.includes('envcheck-webhook-token')), 'no value of a secret, under any name');
    // The API is the supervisor's proxy, with a token in place of the key: walled, over the bridge's
    // socket that answers the CLI alone; unwalled, on 127.0.0.1.
    if (SANDBOX === 'bwrap') {
      assert.equal(get('ANTHROPIC_BASE_URL'), WALL_API.baseUrl);
      assert.equal(get('ANTHROPIC_UNIX_SOCKET'), WALL_API.socket);
    } else {
      assert.match(get('ANTHROPIC_BASE_URL') ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(get('ANTHROPIC_UNIX_SOCKET'), undefined);
    }
    assert.notEqual(get('ANTHROPIC_BASE_URL'), api.url);
    assert.match(get('ANTHROPIC_API_KEY') ?? '', /^[0-9a-f]{64}$/);
    assert.notEqual(get('HOME'), ws.env.HOME, 'a private HOME');
    assert.equal(get('CLAUDE_CONFIG_DIR'), `${get('HOME')}/.claude`);
    assert.equal(get('CLAUDE_CODE_MAX_RETRIES'), '0', 'the CLI\'s own settings pass');
    assert.ok(get('NIGHTSHIFT_SESSION_ID'), 'the session marker is set');
    // Every upstream request carried the real key, never the token.
    const mine = api.requests.filter((r) => r.scenario === 'envcheck');
    assert.ok(mine.length > 0 && mine.every((r) => r.headers['x-api-key'] === ws.env.ANTHROPIC_API_KEY), 'the proxy put the real key upstream');
  });
});

describe('nightshift lock', () => {
  test('runs the command holding the git lock and passes its exit code; a held lock times out with 75', async (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'git:\n  lock_timeout: 1s\n');
    const env = { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
    const owner = path.join(dir, 'state', 'git.lock.owner.json');
    const ok = await nightshift(['lock', '--', 'sh', '-c', `cat ${owner}; exit 3`], env, dir);
    assert.equal(ok.code, 3);
    assert.match(ok.stdout, /"purpose":"lock: sh -c/, 'the command ran while the lock was held');
    assert.ok(!fs.existsSync(owner), 'released afterwards');
    const holder = startNightshift(['lock', '--', 'sleep', '5'], env, dir, t);
    await waitFor(() => fs.existsSync(owner), 5000, 'the holder');
    // The holder sleeps 5 s: a wait past the timeout would get the lock and exit 0, not 75.
    const refused = await nightshift(['lock', '--timeout', '500ms', '--', 'true'], env, dir);
    assert.equal(refused.code, 75);
    assert.match(refused.stderr, /not obtained within 500ms \(held by pid \d+/);
    holder.child.kill('SIGKILL');
    await holder.done;
    // The holder died holding it: the next taker recovers it at once.
    const after = await nightshift(['lock', '--timeout', '0s', '--', 'true'], env, dir);
    assert.equal(after.code, 0, after.stderr);
    assert.equal((await nightshift(['lock'], env, dir)).code, 64);
  });
});
