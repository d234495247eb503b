// A session's text is data at the terminal: the escaper's table, and each renderer that shows a
// session's words (human log lines, the live line, the transcript view, the sessions table and
// record, the logger's JSON for journald and the daily file) through it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { humanLine } from '../../logs/human.js';
import { liveText } from '../../logs/live-line.js';
import { createLogger } from '../../logs/logger.js';
import { terminalText } from '../../logs/terminal-text.js';
import { renderTranscript } from '../../cli/transcript-view.js';
import { branchNotes, printRecord, sessionsTable } from '../../cli/commands/sessions.js';
import type { SessionRecord } from '../../budget/session-record.js';

// Raw bytes a terminal acts on, or that disguise text: none may survive a renderer.
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

const TITLE = '\x1b]0;pwned\x07';
const CLIP = '\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\x1b\\';
const CURSOR = '\x1b[2A\x1b[2K';
const HOSTILE = `ok ${TITLE}${CLIP}${CURSOR} \x9b31m \u202eexe.txt\r all good`;

test('terminalText: each hostile sequence is shown escaped, plain Unicode passes unchanged', () => {
  const rows: Array<[string, string, string, { block?: boolean }?]> = [
    ['OSC 0 title ending in BEL', `a${TITLE}b`, 'a\\u001b]0;pwned\\u0007b'],
    ['OSC 52 clipboard write ending in ST', CLIP, '\\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\\u001b\\'],
    ['CSI cursor up and erase line', CURSOR, '\\u001b[2A\\u001b[2K'],
    ['\\r overwrite on one line', 'rm -rf /\rls -la   ', 'rm -rf /\\u000dls -la   '],
    ['\\r overwrite in a block', 'safe\rEVIL\nnext', 'safe\\u000dEVIL\nnext', { block: true }],
    ['8-bit CSI', '\x9b2J', '\\u009b2J'],
    ['8-bit OSC and ST', '\x9d0;t\x9c', '\\u009d0;t\\u009c'],
    ['DEL and NUL and BS', 'a\x7fb\x00c\x08', 'a\\u007fb\\u0000c\\u0008'],
    ['bidi override', 'invoice\u202egnp.exe', 'invoice\\u202egnp.exe'],
    ['bidi isolates and marks', '\u2066x\u2069\u200f\u061c', '\\u2066x\\u2069\\u200f\\u061c'],
    ['zero-width and BOM', 'pay\u200bpal\ufeff', 'pay\\u200bpal\\ufeff'],
    ['line and paragraph separators', 'a\u2028b\u2029c', 'a\\u2028b\\u2029c'],
    ['a lone surrogate', 'x\ud800y', 'x\\ud800y'],
    ['newline and tab on one line', 'a\nb\tc', 'a\\u000ab\\u0009c'],
    ['newline and tab in a block', 'a\nb\tc', 'a\nb\tc', { block: true }],
    ['CRLF in a block is a line break', 'a\r\nb', 'a\nb', { block: true }],
    ['accents, CJK, emoji, a ZWJ family', 'café naïve 日本語 한국어 👍🏽 👨‍👩‍👧', 'café naïve 日本語 한국어 👍🏽 👨\\u200d👩\\u200d👧'],
    ['plain ASCII with backslashes', 'C:\\path\\x1b is text', 'C:\\path\\x1b is text'],
    ['empty', '', ''],
  ];
  for (const [what, input, want, o] of rows) assert.equal(terminalText(input, o), want, what);
  for (const s of ['plain text', 'café 日本語 👍🏽', 'a\nb\tc']) {
    assert.equal(terminalText(s, { block: true }), s, `unchanged: ${s}`);
  }
  // Idempotent: escaped text has nothing left to escape.
  const once = terminalText(HOSTILE);
  assert.equal(terminalText(once), once);
  assert.doesNotMatch(once, RAW);
});

test('terminalText: JSON through it stays JSON with the same meaning', () => {
  const value = { result: HOSTILE, lines: 'a\nb', bidi: '\u202e\u2066', c1: '\x85\x9b' };
  const raw = JSON.stringify(value);
  assert.match(raw, /[\u009b\u202e]/, 'JSON.stringify leaves C1 and bidi raw: the reason for this');
  const safe = terminalText(raw);
  assert.doesNotMatch(safe, RAW);
  assert.deepEqual(JSON.parse(safe), value);
});

// Its speed is `npm run bench terminal-text`, not a time asserted here.
test('terminalText: the fast path returns the very string when nothing needs escaping', () => {
  const big = 'a plain line of log text, café 日本語\n'.repeat(20_000);
  assert.equal(terminalText(big, { block: true }), big);
});

test('human log lines: message, error and agent escaped, our own colour kept', () => {
  const line = JSON.stringify({ level: 50, time: '2026-12-01T10:00:00.000Z', agent: `a${TITLE}`, msg: `failed ${CLIP}`, err: { message: `boom\x9b2J\nsecond` } });
  const shown = humanLine(line, { color: true });
  assert.ok(shown.includes('\x1b[31merror\x1b[0m'), `the level keeps its colour: ${JSON.stringify(shown)}`);
  const text = shown.replace('\x1b[31merror\x1b[0m', 'error');
  assert.doesNotMatch(text, RAW, JSON.stringify(shown));
  assert.ok(text.includes('a\\u001b]0;pwned\\u0007: failed \\u001b]52;c;'), text);
  assert.ok(text.includes('boom\\u009b2J\\u000asecond'), text);
  // Not JSON: passed through, still escaped.
  assert.equal(humanLine(`garbage ${CURSOR}\n`), 'garbage \\u001b[2A\\u001b[2K');
});

test('the live line: a tool name from the stream cannot move the cursor or title the window', () => {
  const text = liveText({ agent: 'gardener', startedAt: 0, turns: 3, usd: 0.5, lastTool: `Bash${TITLE}${CURSOR}\u202e` }, 5000, 200);
  assert.doesNotMatch(text, RAW, JSON.stringify(text));
  assert.ok(text.includes('last: Bash\\u001b]0;pwned\\u0007\\u001b[2A\\u001b[2K\\u202e'), text);
});

test('the logger: journald and the daily file get JSON with C0, C1 and bidi as \\u escapes', () => {
  const lines: string[] = [];
  const sink = { write: (l: string) => void lines.push(l) };
  createLogger({ redact: (t) => t, stderr: sink, journal: true }).info({ event: 'x', result: HOSTILE }, `done ${TITLE}`);
  createLogger({ redact: (t) => t, stderr: sink }).info({ event: 'x', result: HOSTILE }, `done ${TITLE}`);
  assert.equal(lines.length, 2);
  for (const l of lines) {
    assert.ok(l.endsWith('\n'));
    assert.doesNotMatch(l.slice(0, -1), RAW, JSON.stringify(l));
    assert.ok(l.includes('\\u001b]0;pwned\\u0007') && l.includes('\\u009b31m') && l.includes('\\u202e'), l);
    assert.equal(JSON.parse(l.replace(/^<\d>/, '')).result, HOSTILE, 'the JSON still says what the session wrote');
  }
  assert.match(lines[0], /^<6>\{/);
});

const transcript = [
  JSON.stringify({ type: 'system', subtype: 'init', model: `sonnet${TITLE}`, tools: [], mcp_servers: [] }),
  JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: `Working.\n${CLIP}\nline three \u202eevil` }, { type: 'tool_use', name: `Bash${CURSOR}`, input: { command: `printf '${TITLE}'` } }] } }),
  JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', content: `out \x9b2J\rhidden` }] } }),
  `stream garbage ${TITLE}${CURSOR}`,
  JSON.stringify({ type: 'result', subtype: 'success', total_cost_usd: 0.01, num_turns: 2, result: HOSTILE }),
].join('\n');

test('the transcript view: text, tool calls, tool output, garbage and the result all escaped; lines kept', () => {
  assert.match(transcript, /\x1b\]0;/, 'the input holds the raw sequence');
  const shown = renderTranscript(transcript);
  assert.doesNotMatch(shown, RAW, shown);
  for (const want of ['sonnet\\u001b]0;pwned\\u0007', 'Bash\\u001b[2A\\u001b[2K', '\\u001b]52;c;', 'out \\u009b2J hidden', 'stream garbage \\u001b]0;', 'line three \\u202eevil', '\\u009b31m']) {
    assert.ok(shown.includes(want), `${want} in:\n${shown}`);
  }
  assert.ok(shown.includes('assistant: Working.\n\\u001b]52;c;'), 'the assistant text keeps its lines');
});

const record: SessionRecord = {
  id: 's1', agent: 'gardener', outcome: 'error', exit_code: 1, cost_usd: 0.01, cost_estimated: false, turns: 2, duration_ms: 1000,
  started_at: '2026-12-01T10:00:00.000Z', ended_at: '2026-12-01T10:00:01.000Z', result: `first\n${HOSTILE}`, error: `git: branch ${TITLE}\u202e`,
} as SessionRecord;

test('the sessions table and a printed record: the session\'s words escaped, JSON still JSON', () => {
  const table = sessionsTable([{ ...record, agent: `gardener${CURSOR}`, outcome: `ok${TITLE}` }], 'UTC');
  assert.doesNotMatch(table, RAW, table);
  assert.ok(table.includes('gardener\\u001b[2A\\u001b[2K') && table.includes('ok\\u001b]0;pwned\\u0007'), table);
  const out: string[] = [];
  printRecord({ out: (t) => void out.push(t) }, record, false);
  printRecord({ out: (t) => void out.push(t) }, record, true);
  assert.doesNotMatch(out[0], RAW, out[0]);
  assert.ok(out[0].includes('result    first\nok \\u001b]0;pwned') && out[0].includes('error     git: branch \\u001b]0;pwned\\u0007\\u202e'), out[0]);
  assert.doesNotMatch(out[1], RAW, out[1]);
  assert.deepEqual(JSON.parse(out[1]), record);
});

test('where the work went, as show and sessions print it: file names and git\'s words escaped', () => {
  const git = {
    pulled: true, committed: true, pushed: false, branch: `nightshift/s1${TITLE}`, branch_pushed: true, error: `push failed: remote: ${HOSTILE}`, uncommitted: false,
    left_out: [{ path: `dump${CURSOR}.bin`, size: 2_000_000, limit: 'commit_file' as const }], untracked: [`.nightshift/${TITLE}`],
  };
  const out: string[] = [];
  printRecord({ out: (t) => void out.push(t) }, { ...record, git }, false);
  assert.doesNotMatch(out[0], RAW, out[0]);
  assert.ok(out[0].includes('left out: dump\\u001b[2A\\u001b[2K.bin (1.9M'), out[0]);
  assert.ok(out[0].includes('work on branch nightshift/s1\\u001b]0;pwned\\u0007 (pushed)'), out[0]);
  const notes = branchNotes([{ ...record, git }]).join('\n');
  assert.doesNotMatch(notes, RAW, notes);
  assert.match(notes, /s1: work on branch nightshift\/s1\\u001b\]0;pwned\\u0007 \(pushed\), not on main until merged/);
});
