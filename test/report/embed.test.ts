import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeRedactor, secretValues } from '../../core/redact.js';
import { COLORS, doctorReport, dreamReport, embedLength, finish, LIMITS, RESULT_MAX, sessionReport, shorten, unitReport, type SessionFacts } from '../../report/embed.js';

const noRedact = (t: string) => t;
const base: SessionFacts = {
  id: '20260301T100000Z-gardener-abc123', agent: 'gardener', outcome: 'ok', model: 'sonnet', cost_usd: 0.0123, cost_estimated: false,
  turns: 4, duration_ms: 83_000, ended_at: '2026-03-01T10:01:23.000Z', result: 'Pruned three notes.', error: null,
};
const today = { day: '2026-03-01', sessions: 3, max_sessions: 12, cost_usd: 1.5, max_usd: 20 };
const git = { committed: true, pushed: true, branch: null, error: null };

test('a session embed carries every field the operator reads (inline snapshot)', () => {
  const r = sessionReport(base, git, today, { redact: noRedact, host: 'vps1' });
  assert.deepEqual(r, {
    key: 'session:20260301T100000Z-gardener-abc123',
    kind: 'session',
    agent: 'gardener',
    embed: {
      title: 'gardener: ok',
      color: 0x2ecc71,
      fields: [
        { name: 'Outcome', value: 'ok', inline: true },
        { name: 'Model', value: 'sonnet', inline: true },
        { name: 'Cost', value: '$0.01', inline: true },
        { name: 'Turns', value: '4', inline: true },
        { name: 'Duration', value: '1m 23s', inline: true },
        { name: 'Budget today', value: '3/12 sessions, $1.50 of $20.00 (2026-03-01)', inline: true },
        { name: 'Git', value: 'committed, pushed' },
        { name: 'Session', value: '`20260301T100000Z-gardener-abc123`' },
      ],
      description: 'Pruned three notes.',
      footer: { text: 'nightshift on vps1' },
      timestamp: '2026-03-01T10:01:23.000Z',
    },
  });
});

// Each outcome: its colour, and the fields that change with it.
const outcomes: Array<[string, number]> = [
  ['ok', 0x2ecc71], ['error', 0xe74c3c], ['max_turns', 0xe67e22], ['timeout', 0xe67e22], ['stalled', 0xe67e22],
  ['loop', 0x9b59b6], ['budget', 0xf1c40f], ['spawn_failed', 0x992d22], ['abandoned', 0x95a5a6],
];
for (const [outcome, color] of outcomes) {
  test(`a session that ended ${outcome} is coloured ${color.toString(16)} and titled with its outcome`, () => {
    const error = outcome === 'ok' ? null : `the session ended ${outcome}`;
    const e = sessionReport({ ...base, outcome, error }, git, today, { redact: noRedact }).embed;
    assert.equal(e.color, color);
    assert.equal(e.title, `gardener: ${outcome}`);
    assert.equal(e.fields[0].value, outcome);
    // Shown as text: markdown's `_` escaped (Discord draws `max\_turns` as max_turns).
    assert.equal(e.fields.find((f) => f.name === 'Error')?.value ?? null, error && `the session ended ${outcome.replace('_', '\\_')}`);
  });
}

test('an estimated cost is marked, and git states read plainly', () => {
  const e = (g: Parameters<typeof sessionReport>[1], est = false) => sessionReport({ ...base, cost_estimated: est }, g, today, { redact: noRedact }).embed;
  assert.equal(e(git, true).fields.find((f) => f.name === 'Cost')!.value, '~$0.01 (estimated)');
  const cases: Array<[Parameters<typeof sessionReport>[1], string]> = [
    [null, 'git sync off'],
    [{ committed: true, pushed: false, branch: null, error: 'push failed (kept locally, the next tick pushes it): fatal: unreachable' }, 'committed, not pushed (push failed (kept locally, the next tick pushes it): fatal: unreachable)'],
    [{ committed: false, pushed: false, branch: null, error: null }, 'nothing committed, not pushed'],
    [{ committed: true, pushed: false, branch: 'nightshift/abc', branch_pushed: true, error: 'conflict' }, 'the work is on branch `nightshift/abc` (pushed), not on main until merged (conflict)'],
    [{ committed: true, pushed: false, branch: 'nightshift/abc', branch_pushed: false, error: 'conflict' }, 'the work is on branch `nightshift/abc` (local only), not on main until merged (conflict)'],
  ];
  for (const [g, want] of cases) assert.equal(e(g).fields.find((f) => f.name === 'Git')!.value, want);
});

test('a long result is shortened, after redaction', () => {
  const e = sessionReport({ ...base, result: 'x'.repeat(5000) }, git, today, { redact: noRedact }).embed;
  assert.equal(e.description!.length, 700);
  assert.ok(e.description!.endsWith('…'));
});

test('a secret in a result, an error or a git message never reaches the payload', () => {
  const hook = 'https://discord.com/api/webhooks/112233445566778899/tok-SeCrEtWeBhOoKtOkEn0123456789abcdefABCDEF';
  const env = { ANTHROPIC_API_KEY: 'fake-anthropic-test-0123456789abcdef', DISCORD_WEBHOOK_URL: hook, MY_SERVICE_TOKEN: 'svc-token-value-42' };
  const redact = makeRedactor(secretValues(env));
  const leak = `key=${env.ANTHROPIC_API_KEY} hook=${hook} enc=${encodeURIComponent(env.MY_SERVICE_TOKEN)}`;
  // The secret sits right where a cut would split it.
  const result = `${'y'.repeat(690)}${env.ANTHROPIC_API_KEY}`;
  const r = sessionReport({ ...base, outcome: 'error', result, error: leak, agent: `a ${env.MY_SERVICE_TOKEN}` }, { ...git, error: leak }, today, { redact });
  const payload = JSON.stringify(r);
  for (const s of [env.ANTHROPIC_API_KEY, 'tok-SeCrEtWeBhOoKtOkEn0123456789abcdefABCDEF', env.MY_SERVICE_TOKEN, 'fake-anthropic-test', 'svc-token']) assert.ok(!payload.includes(s), `payload leaks ${s}`);
  assert.match(payload, /\[redacted\]/);
  const d = doctorReport([{ name: 'discord', status: 'fail', detail: leak, fix: leak }], { redact, at: new Date(0) });
  const u = unitReport({ unit: 'nightshift.service', at: new Date(0), problems: [leak], logTail: leak }, redact);
  for (const p of [JSON.stringify(d), JSON.stringify(u)]) assert.ok(!p.includes(env.ANTHROPIC_API_KEY) && !p.includes('tok-SeCrEt'));
});

// Any 6-character piece of `secret` found in `text` (a cut-first bug leaves a prefix of the secret
// at the cut: any piece of it is a leak, not just the whole).
function leakedPiece(text: string, secret: string, min = 6): string | null {
  for (let i = 0; i + min <= secret.length; i++) if (text.includes(secret.slice(i, i + min))) return secret.slice(i, i + min);
  return null;
}

// Every offset at which a cut at `max` would split the secret, for each place a string is cut.
function cutOffsets(max: number, secretLength: number): number[] {
  const out: number[] = [];
  for (let at = max - secretLength - 2; at <= max + 1; at++) out.push(at);
  return out;
}

const SECRET = 'Qx7vLm2Rp9Tk4Wz8Hc3Nb6Fj5Yd1Gs0Ue';
const secretRedact = makeRedactor(secretValues({ MY_SERVICE_TOKEN: SECRET }));

test('a secret split by any cut (result, error, description, field value) leaves not even a piece of itself', () => {
  // Removal tried: with sessionReport's result cut before it is redacted, this test failed at
  // offset 667 (the other tests in this file all passed); with finish()'s field value cut first, at
  // offset 991.
  for (const at of cutOffsets(RESULT_MAX, SECRET.length)) {
    const text = `${'y'.repeat(at)}${SECRET}${'z'.repeat(50)}`;
    const r = sessionReport({ ...base, outcome: 'error', result: text, error: text }, { ...git, error: text }, today, { redact: secretRedact });
    const payload = JSON.stringify(r);
    assert.equal(leakedPiece(payload, SECRET), null, `offset ${at}: payload leaks a piece of the secret`);
  }
  for (const at of [...cutOffsets(300, SECRET.length), ...cutOffsets(LIMITS.fieldValue, SECRET.length)]) {
    const text = `${'y'.repeat(at)}${SECRET}${'z'.repeat(50)}`;
    const r = sessionReport({ ...base, outcome: 'error', error: text }, git, today, { redact: secretRedact });
    const d = doctorReport([{ name: 'discord', status: 'fail', detail: text, fix: null }], { redact: secretRedact, at: new Date(0) });
    const u = unitReport({ unit: 'nightshift.service', at: new Date(0), problems: [text], logTail: text }, secretRedact);
    for (const p of [r, d, u].map((x) => JSON.stringify(x))) assert.equal(leakedPiece(p, SECRET), null, `offset ${at}: payload leaks a piece of the secret`);
  }
  for (const at of [...cutOffsets(LIMITS.description, SECRET.length), ...cutOffsets(LIMITS.title, SECRET.length), ...cutOffsets(LIMITS.fieldValue, SECRET.length)]) {
    const text = `${'y'.repeat(at)}${SECRET}${'z'.repeat(50)}`;
    const e = finish({ title: text, description: text, color: 1, fields: [{ name: text, value: text }], footer: { text } }, secretRedact);
    assert.equal(leakedPiece(JSON.stringify(e), SECRET), null, `offset ${at}: finish() leaks a piece of the secret`);
  }
});

test('negative control: cut first, then redacted, the same texts leak a piece of the secret at every offset', () => {
  const cutFirst = (text: string, max: number) => secretRedact(shorten(text, max));
  for (const max of [RESULT_MAX, 300, LIMITS.fieldValue, LIMITS.description]) {
    for (const at of cutOffsets(max, SECRET.length)) {
      const out = cutFirst(`${'y'.repeat(at)}${SECRET}${'z'.repeat(50)}`, max);
      // Offsets where the whole secret fits (or none of it does) are redacted by either order.
      const kept = max - 1 - at;
      if (kept >= 6 && kept < SECRET.length) assert.notEqual(leakedPiece(out, SECRET), null, `max ${max}, offset ${at}`);
    }
  }
});

test('an embed is held to Discord limits', () => {
  const e = finish({ title: 't'.repeat(300), color: 1, fields: Array.from({ length: 30 }, (_, i) => ({ name: `f${i}`, value: 'v'.repeat(2000) })) }, noRedact);
  assert.equal(e.title.length, LIMITS.title);
  assert.ok(e.fields.length <= LIMITS.fields);
  assert.ok(e.fields.every((f) => f.value.length <= LIMITS.fieldValue));
  assert.ok(embedLength(e) <= LIMITS.total);
  // Discord refuses empty values.
  assert.equal(finish({ title: '', color: 1, fields: [{ name: 'x', value: '  ' }] }, noRedact).fields[0].value, '-');
});

test('a doctor embed lists the failing checks first, each with its fix', () => {
  const r = doctorReport(
    [
      { name: 'cli', status: 'ok', detail: 'claude 2.1', fix: null },
      { name: 'silence', status: 'warn', detail: 'no session yet', fix: 'check the timer' },
      { name: 'ledger', status: 'fail', detail: 'integrity: page 3 corrupt', fix: 'move state/ledger.db aside' },
    ],
    { redact: noRedact, at: new Date('2026-03-01T00:00:00Z'), host: 'vps1' },
  );
  assert.deepEqual(r, {
    key: 'doctor:2026-03-01T00:00:00.000Z',
    kind: 'doctor',
    embed: {
      title: 'doctor: 1 check failing',
      color: COLORS.fail,
      fields: [
        { name: '✗ ledger', value: 'integrity: page 3 corrupt\nfix: move state/ledger.db aside' },
        { name: '! silence', value: 'no session yet\nfix: check the timer' },
      ],
      description: '1 of 3 checks pass.',
      footer: { text: 'nightshift doctor on vps1' },
      timestamp: '2026-03-01T00:00:00.000Z',
    },
  });
});

test('a unit failure embed names the unit, systemd result and what could not be read', () => {
  const r = unitReport(
    { unit: 'nightshift.service', at: new Date('2026-03-01T00:00:00Z'), result: 'exit-code', exitCode: 'exited', exitStatus: '78', invocationId: 'abc', problems: ['config: claude.timeout: Expected a duration'], logTail: null },
    noRedact,
  );
  assert.equal(r.key, 'alert:nightshift.service:abc');
  assert.equal(r.embed.title, 'unit failed: nightshift.service');
  assert.deepEqual(r.embed.fields.map((f) => [f.name, f.value]), [
    ['Unit', '`nightshift.service`'],
    ['Result', 'exit-code'],
    ['Exit', 'exited 78'],
    ['Could not read', 'config: claude.timeout: Expected a duration'],
  ]);
});

test('a dream embed lists each phase; a failed phase turns it red and is named', () => {
  const phases = { cluster: { ok: true, ms: 12, clusters: 2 }, abstract: { ok: false, ms: 3, error: 'gemini said no to fake-key-0123456789' }, fade: { ok: true, ms: 5, faded: 1 } };
  const r = dreamReport({ id: 'dream-1', reason: '250 observations since the last dream', duration_ms: 20, phases }, { redact: makeRedactor(['fake-key-0123456789']), at: new Date('2026-11-30T12:00:00Z') });
  assert.equal(r.key, 'dream:dream-1');
  assert.equal(r.embed.title, 'dream: 1 phase failed');
  assert.equal(r.embed.color, COLORS.error);
  assert.deepEqual(r.embed.fields.map((f) => f.name), ['cluster', 'FAILED abstract', 'fade']);
  assert.match(r.embed.fields[0].value, /12 ms: clusters 2/);
  assert.ok(!JSON.stringify(r).includes('fake-key-0123456789'), 'redacted');
  const ok = dreamReport({ id: 'dream-2', reason: 'r', duration_ms: 1, phases: { fade: { ok: true, ms: 1 } } }, { redact: (t) => t, at: new Date() });
  assert.equal(ok.embed.color, COLORS.ok);
});

test('a session that changed the CLI\'s project files is named in its report, the names as code', () => {
  const files = ['.claude/settings.json', 'CLAUDE.md', 'x`](http://evil.example)'];
  const e = sessionReport(base, git, today, { redact: noRedact, projectFiles: { files, loaded: false } }).embed;
  const f = e.fields?.find((x) => x.name === 'Project files changed');
  assert.ok(f, 'the field is there');
  assert.match(f.value, /`\.claude\/settings\.json`, `CLAUDE\.md`/);
  assert.match(f.value, /never loaded/);
  assert.doesNotMatch(f.value, /`\]\(/, 'a backtick in a name cannot close the code span');
  // Control: a session that changed none has no such field.
  assert.equal(sessionReport(base, git, today, { redact: noRedact }).embed.fields?.some((x) => x.name === 'Project files changed'), false);
});

test('a session\'s escapes, bidi overrides and invisible characters reach Discord escaped; the JSON body means the same', () => {
  const hostile = 'done \x1b]0;pwned\x07 \x1b]52;c;Y3VybA==\x07 \x9b2J \u202eexe.txt \u200b';
  const r = sessionReport({ ...base, agent: 'gardener\u202e', result: `line one\n${hostile}`, error: `git: \x1b[2A${hostile}` }, { ...git, branch: `conflict-\u2066x\u2069` }, today, { redact: noRedact });
  const body = JSON.stringify(r.embed);
  assert.match(`line one\n${hostile}`, /[\u001b\u009b\u202e\u200b]/, 'the input held them raw');
  assert.doesNotMatch(body, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200b]/, body);
  assert.equal(r.embed.title, 'gardener\\u202e: ok');
  assert.ok(r.embed.description!.startsWith('line one\ndone \\u001b\\]0;pwned\\u0007 \\u001b\\]52;c;'), r.embed.description);
  assert.ok(r.embed.fields.find((f) => f.name === 'Error')!.value.includes('\\u001b\\[2A'));
  assert.ok(r.embed.fields.find((f) => f.name === 'Git')!.value.includes('conflict-\\u2066x\\u2069'));
});

test('session text is data in Discord: a masked link, a heading, bold, code, a quote and a mention reach it escaped', () => {
  const said = '## Done\n**all good**, see [the docs](http://evil.example/x) `rm -rf` > quoted @everyone <@123> ~~gone~~ ||spoiler||';
  const r = sessionReport({ ...base, result: said, error: '[click](http://evil.example)', model: '**opus**' }, { ...git, error: '# [x](http://e)' }, today, { redact: noRedact });
  assert.equal(r.embed.description, '\\#\\# Done\n\\*\\*all good\\*\\*, see \\[the docs\\](http://evil.example/x) \\`rm -rf\\` \\> quoted \\@everyone \\<\\@123\\> \\~\\~gone\\~\\~ \\|\\|spoiler\\|\\|');
  assert.equal(r.embed.fields.find((f) => f.name === 'Error')!.value, '\\[click\\](http://evil.example)');
  assert.equal(r.embed.fields.find((f) => f.name === 'Model')!.value, '\\*\\*opus\\*\\*');
  assert.match(r.embed.fields.find((f) => f.name === 'Git')!.value, /\(\\# \\\[x\\\]\(http:\/\/e\)\)$/);
});

test('a session whose egress proxy refused connections says how many; none refused, nothing is said', () => {
  const field = (egress_refused: number | null) => sessionReport({ ...base, egress_refused }, git, today, { redact: noRedact }).embed.fields.find((f) => f.name === 'Egress refused');
  assert.deepEqual(field(3), { name: 'Egress refused', value: "3 connections the agent's `network:` does not allow (see the log: egress_refused)", inline: true });
  assert.equal(field(0), undefined);
  assert.equal(field(null), undefined);
});

test('a session whose wall refused connections to the API from another process says how many; none refused, nothing is said', () => {
  const field = (api_refused: number | null) => sessionReport({ ...base, api_refused }, git, today, { redact: noRedact }).embed.fields.find((f) => f.name === 'API refused');
  assert.deepEqual(field(2), { name: 'API refused', value: '2 connections to the API from a process other than the CLI (see the log: api_peer_refused)', inline: true });
  assert.equal(field(0), undefined);
  assert.equal(field(null), undefined);
});

test('a session embed names its trace when telemetry traced it, and has no Trace field when it did not', () => {
  const traced = sessionReport({ ...base, trace_id: '0af7651916cd43dd8448eb211c80319c' }, git, today, { redact: noRedact }).embed;
  assert.deepEqual(traced.fields.find((f) => f.name === 'Trace'), { name: 'Trace', value: '`0af7651916cd43dd8448eb211c80319c`' });
  assert.equal(sessionReport(base, git, today, { redact: noRedact }).embed.fields.find((f) => f.name === 'Trace'), undefined);
});
