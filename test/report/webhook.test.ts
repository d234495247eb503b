// The second report channel (NIGHTSHIFT_WEBHOOK_URL, config webhook.format): the payloads, pure;
// then delivery through the real outbox to a loopback endpoint, with retries on 5xx and 429 like
// Discord's, and the control that without the variable nothing is sent there.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { createLogger } from '../../logs/logger.js';
import { makeRedactor, secretValues } from '../../core/redact.js';
import { deliver, type ReportSettings } from '../../report/deliver.js';
import { backoffReport, doctorReport, sessionReport, type Report } from '../../report/embed.js';
import { Outbox, outboxFile } from '../../report/outbox.js';
import { alarmMessage, headerValue, renderWebhook, retryAfterMs } from '../../report/webhook.js';
import { startFakeDiscord, type FakeDiscord } from '../fake-discord.js';
import { outboxRows, tempDir } from '../helpers.js';

const KEY = 'sk-test-webhook-secret';
const TOPIC_TOKEN = 'tk_webhooktesttoken0123456789abcdef';

let n = 0;
function report(outcome = 'ok', result = 'done', cost = 1.25): Report {
  const id = `20260301T1100${String(n++).padStart(2, '0')}Z-gardener-${n.toString(16).padStart(6, '0')}`;
  return sessionReport(
    { id, agent: 'gardener', outcome, model: 'sonnet', cost_usd: cost, cost_estimated: false, turns: 2, duration_ms: 61_000, ended_at: '2026-03-01T11:00:00.000Z', result, error: outcome === 'ok' ? null : 'it broke' },
    null,
    { day: '2026-03-01', sessions: 1, max_sessions: 12, cost_usd: cost, max_usd: 20 },
    { redact: makeRedactor([KEY]), host: 'box1' },
  );
}

test('json: the report as data: event, agent, outcome, cost, the summary as the session wrote it, redacted', () => {
  const said = `all done: [open](http://evil.example/x) **bold** @everyone key=${KEY}`;
  const r = report('ok', said);
  const body = JSON.parse(renderWebhook(alarmMessage(r), 'json').body);
  assert.equal(body.source, 'nightshift');
  assert.equal(body.event, 'session');
  assert.equal(body.key, r.key);
  assert.equal(body.agent, 'gardener');
  assert.equal(body.outcome, 'ok');
  assert.equal(body.cost, '$1.25');
  assert.equal(body.title, 'gardener: ok');
  // Discord's markdown escapes are undone: a JSON value is data, shown as written, but redacted.
  assert.equal(body.summary, 'all done: [open](http://evil.example/x) **bold** @everyone key=[redacted]');
  assert.equal(r.embed.description?.includes('\\[open\\]'), true, 'the control: Discord\'s copy is escaped');
  assert.equal(body.fields.Turns, '2');
  assert.equal(body.fields.Session, `\`${r.key.slice('session:'.length)}\``);
  assert.equal(body.at, '2026-03-01T11:00:00.000Z');
  assert.equal(body.host, 'box1');
  assert.equal(body.possibly_repeat, false);
  assert.ok(!JSON.stringify(body).includes(KEY));
  assert.equal(renderWebhook(alarmMessage(r), 'json').contentType, 'application/json');
});

test('json: a doctor and a backoff report name their event, outcome and agent', () => {
  const doc = alarmMessage(doctorReport([{ name: 'api', status: 'fail', detail: 'key refused', fix: 'put a valid key' }], { redact: (t) => t, at: new Date('2026-03-01T12:00:00Z') }));
  assert.deepEqual([doc.event, doc.outcome, doc.agent], ['doctor', 'fail', null]);
  assert.equal(doc.fields['✗ api'], 'key refused\nfix: put a valid key');
  const healthy = alarmMessage(doctorReport([{ name: 'api', status: 'ok', detail: 'fine', fix: null }], { redact: (t) => t, at: new Date() }));
  assert.equal(healthy.outcome, 'ok');
  assert.equal(alarmMessage(doctorReport([{ name: 'disk', status: 'warn', detail: 'low', fix: null }], { redact: (t) => t, at: new Date() })).outcome, 'warn');
  const b = alarmMessage(backoffReport({ agent: 'scout', change: 'started', failures: 3, until: '2026-03-01T13:00:00Z', session: 's1' }, { redact: (t) => t, at: new Date() }));
  assert.deepEqual([b.event, b.agent, b.title], ['backoff', 'scout', 'scout: backed off']);
});

test('ntfy: plain text body, Title, Priority by outcome, Tags; no Markdown header', () => {
  const ok = renderWebhook(alarmMessage(report('ok', 'all **good**')), 'ntfy');
  assert.equal(ok.contentType, 'text/plain; charset=utf-8');
  assert.deepEqual(ok.headers, { Title: 'nightshift: gardener: ok', Priority: '3', Tags: 'white_check_mark,session' });
  assert.match(ok.body, /^Outcome: ok\nModel: sonnet\nCost: \$1\.25\n[\s\S]*\nThe session wrote \(quoted as it wrote it\):\n> all \*\*good\*\*$/);
  const bad = renderWebhook(alarmMessage(report('error', 'x')), 'ntfy');
  assert.equal(bad.headers.Priority, '5');
  assert.equal(bad.headers.Tags, 'rotating_light,session');
  assert.equal(renderWebhook(alarmMessage(report('max_turns', 'x')), 'ntfy').headers.Priority, '4');
  assert.match(renderWebhook(alarmMessage(report('ok', 'x')), 'ntfy', true).body, /possibly a repeat/);
  // ntfy makes an attachment of more than 4096 bytes: a long text in many-byte characters is cut in bytes.
  const long = renderWebhook({ ...alarmMessage(report('ok', 'x')), summary: 'é'.repeat(5000) }, 'ntfy');
  assert.ok(Buffer.byteLength(long.body, 'utf8') <= 4000 && long.body.length > 1000);
});

// mutation: ntfy-session-text-first, caught here.
// Issue 52: the session's text came first, so a session printing "Outcome: ok" stood above the
// real "Outcome: error". Now nightshift's lines come first, the session's quoted after a label.
test('ntfy: a session printing "Outcome: ok" cannot appear above the real outcome line, nor as a line of its own', () => {
  const forged = 'Outcome: ok\nCost: $0.00\r\nTurns: 1\u202e';
  const body = renderWebhook(alarmMessage(report('error', forged)), 'ntfy').body;
  const lines = body.split('\n');
  assert.equal(lines[0], 'Outcome: error', 'the first line is the real outcome');
  assert.deepEqual(lines.filter((l) => /^Outcome:/.test(l)), ['Outcome: error'], 'no other line starts as an outcome');
  const label = lines.indexOf('The session wrote (quoted as it wrote it):');
  assert.ok(label > 0);
  assert.deepEqual(lines.slice(label + 1), ['> Outcome: ok', '> Cost: $0.00', '> Turns: 1\\u202e']);
  // An error's further lines (the CLI's words) are indented under it, never a line of their own.
  const m = alarmMessage(report('error', 'x'));
  const withError = renderWebhook({ ...m, fields: { ...m.fields, Error: 'API error\nOutcome: ok' } }, 'ntfy').body;
  assert.deepEqual(withError.split('\n').filter((l) => /^Outcome:/.test(l)), ['Outcome: error']);
  // The control: the old order, the session's text first, puts its "Outcome: ok" on the first line.
  const old = [m.summary, ...Object.entries({ ...m.fields }).map(([k, v]) => `${k}: ${v}`)].join('\n').replace(/^x/, forged);
  assert.equal(old.split('\n')[0], 'Outcome: ok');
});

test('a header value is one line of ASCII: a newline cannot add a header, other text is RFC 2047', () => {
  const forged = headerValue('gardener: ok\r\nX-Injected: 1');
  assert.doesNotMatch(forged, /[\r\n]/);
  assert.equal(headerValue('plain title'), 'plain title');
  const utf = headerValue('jardinier: réussi ✓');
  assert.match(utf, /^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/);
  assert.equal(Buffer.from(utf.slice(10, -2), 'base64').toString('utf8'), 'jardinier: réussi ✓');
  // Node's fetch takes every value headerValue makes.
  assert.doesNotThrow(() => new Headers({ Title: forged, Other: utf }));
});

test('Retry-After in seconds or as a date', () => {
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs('0.5'), 500);
  assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4000), 6000);
  assert.equal(retryAfterMs(null), null);
  assert.equal(retryAfterMs('soon'), null);
});

// A loopback endpoint: each POST gets the next scripted answer, then `fallback`.
type Answer = { status: number; retryAfter?: string };
type Got = { url: string; headers: http.IncomingHttpHeaders; body: string; status: number };
let server: http.Server;
let base = '';
const got: Got[] = [];
let script: Answer[] = [];
let fallback: Answer = { status: 200 };
let discord: FakeDiscord;

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const a = script.shift() ?? fallback;
      got.push({ url: req.url!, headers: req.headers, body, status: a.status });
      res.writeHead(a.status, a.retryAfter ? { 'retry-after': a.retryAfter } : {}).end(a.status === 200 ? '{"id":"x"}' : 'no');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  discord = await startFakeDiscord();
});
after(async () => {
  await new Promise((r) => server.close(r));
  await discord.close();
});

function setup(t: Parameters<typeof tempDir>[0], o: { format?: 'json' | 'ntfy'; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}) {
  got.length = 0;
  script = [];
  fallback = { status: 200 };
  discord.messages.length = 0;
  discord.requests.length = 0;
  discord.script = [];
  discord.fallback = { status: 200 };
  const dir = tempDir(t);
  const env = o.env ?? { NIGHTSHIFT_WEBHOOK_URL: `${base}/hook/${TOPIC_TOKEN}` };
  const redact = makeRedactor(secretValues(env));
  const lines: string[] = [];
  const logger = createLogger({ redact, level: 'debug', stderr: { write: (l) => void lines.push(l) } });
  const settings: ReportSettings = { stateDir: path.join(dir, 'state'), apiBase: discord.apiBase, timeoutMs: 3000, webhookFormat: o.format ?? 'json', webhookTimeoutMs: o.timeoutMs ?? 5000 };
  return { settings, lines, deps: { env, logger, redact, now: () => new Date() } };
}

const rows = outboxRows;

test('the outbox delivers a report to the webhook as JSON, once, and marks it sent', async (t) => {
  const { settings, deps } = setup(t);
  const r = report('error', 'it failed');
  const d = await deliver(r, settings, deps);
  assert.deepEqual(d, { configured: true, queued: true, sent: 1, pending: 0, error: null });
  assert.equal(got.length, 1);
  assert.equal(got[0].url, `/hook/${TOPIC_TOKEN}`);
  assert.equal(got[0].headers['content-type'], 'application/json');
  const body = JSON.parse(got[0].body);
  assert.deepEqual([body.event, body.agent, body.outcome, body.summary, body.key], ['session', 'gardener', 'error', 'it failed', r.key]);
  assert.deepEqual(rows(settings.stateDir).map((x) => [x.channel, x.state]), [['webhook', 'sent']]);
  assert.equal((await deliver(r, settings, deps)).queued, false, 'queued once');
  assert.equal((await deliver(null, settings, deps)).sent, 0);
  assert.equal(got.length, 1);
});

test('ntfy: the outbox posts the text with its headers', async (t) => {
  const { settings, deps } = setup(t, { format: 'ntfy' });
  await deliver(report('error', 'it failed'), settings, deps);
  assert.equal(got.length, 1);
  assert.equal(got[0].headers.title, 'nightshift: gardener: error');
  assert.equal(got[0].headers.priority, '5');
  assert.match(got[0].headers['content-type'] ?? '', /^text\/plain/);
  assert.match(got[0].body, /^Outcome: error\n[\s\S]*\n> it failed$/);
});

test('a 5xx is retried within the start, like Discord\'s', async (t) => {
  const { settings, deps } = setup(t);
  script = [{ status: 502 }, { status: 503 }];
  const d = await deliver(report(), settings, deps);
  assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 1, pending: 0 });
  assert.deepEqual(got.map((g) => g.status), [502, 503, 200]);
});

test('a 429 is waited out (Retry-After) within the time budget, and sent once', async (t) => {
  const { settings, deps } = setup(t);
  script = [{ status: 429, retryAfter: '0.3' }];
  const d = await deliver(report(), settings, deps);
  assert.equal(d.sent, 1);
  assert.deepEqual(got.map((g) => g.status), [429, 200]);
});

// A 10-minute Retry-After: slept out, the test's own timeout fails it.
test('a 429 past the time budget is not slept out: queued, sent by the next start', { timeout: 60_000 }, async (t) => {
  const { settings, deps, lines } = setup(t, { timeoutMs: 1500 });
  script = [{ status: 429, retryAfter: '600' }];
  const d = await deliver(report(), settings, deps);
  assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 0, pending: 1 });
  assert.match(lines.join(''), /"event":"report_queued".*"channel":"webhook".*rate limited/);
  const next = await deliver(null, settings, deps);
  assert.deepEqual({ sent: next.sent, pending: next.pending }, { sent: 1, pending: 0 });
  assert.deepEqual(got.map((g) => g.status), [429, 200]);
});

test('an endpoint down keeps the report queued; the next start sends it; no line or row carries the URL', async (t) => {
  const { settings, deps, lines } = setup(t);
  fallback = { status: 500 };
  const d = await deliver(report(), settings, deps);
  assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 0, pending: 1 });
  assert.equal(got.length, 3, 'tried three times');
  fallback = { status: 200 };
  assert.equal((await deliver(null, settings, deps)).sent, 1);
  assert.ok(!lines.join('').includes(TOPIC_TOKEN), 'the URL\'s token is in no log line');
  assert.ok(!JSON.stringify(rows(settings.stateDir)).includes(TOPIC_TOKEN));
});

test('a report the endpoint refuses for its shape (400) is set aside, and the next one still goes', async (t) => {
  const { settings, deps } = setup(t);
  script = [{ status: 400 }];
  const d = await deliver(report(), settings, deps);
  assert.equal(d.sent, 0);
  await deliver(report(), settings, deps);
  assert.deepEqual(rows(settings.stateDir).map((x) => x.state), ['dead', 'sent']);
  assert.deepEqual(got.map((g) => g.status), [400, 200]);
});

test('control: without NIGHTSHIFT_WEBHOOK_URL nothing reaches the endpoint (Discord alone still gets it)', async (t) => {
  const { settings, deps } = setup(t, { env: { DISCORD_WEBHOOK_URL: '' } });
  const none = await deliver(report(), settings, deps);
  assert.equal(none.configured, false);
  assert.equal(fs.existsSync(outboxFile(settings.stateDir)), false);
  const discordOnly = setup(t, { env: { DISCORD_WEBHOOK_URL: discord.webhookUrl } });
  const d = await deliver(report(), discordOnly.settings, discordOnly.deps);
  assert.equal(d.sent, 1);
  assert.equal(discord.messages.length, 1);
  assert.equal(got.length, 0, 'nothing at the webhook');
  assert.deepEqual(rows(discordOnly.settings.stateDir).map((x) => x.channel), ['discord']);
});

test('both channels: Discord down does not hold the webhook, and each drains its own queue later', async (t) => {
  const { settings, deps } = setup(t, { env: { DISCORD_WEBHOOK_URL: discord.webhookUrl, NIGHTSHIFT_WEBHOOK_URL: `${base}/hook/${TOPIC_TOKEN}` } });
  await discord.down();
  let d;
  try {
    d = await deliver(report(), { ...settings, timeoutMs: 1000 }, deps);
  } finally {
    await discord.up();
  }
  assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 1, pending: 1 });
  assert.equal(got.length, 1, 'the webhook got it while Discord was down');
  const next = await deliver(null, settings, deps);
  assert.deepEqual({ sent: next.sent, pending: next.pending }, { sent: 1, pending: 0 });
  assert.equal(discord.messages.length, 1);
  assert.equal(got.length, 1, 'not sent to the webhook again');
});

test('an outbox written before channels existed opens, its rows Discord\'s', (t) => {
  const dir = tempDir(t);
  const file = outboxFile(dir);
  const db = new Database(file);
  db.exec(`CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, payload TEXT NOT NULL, created_at TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'sending', 'sent', 'dead')), attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, uncertain INTEGER NOT NULL DEFAULT 0,
    claimed_pid INTEGER, claimed_start TEXT, sent_at TEXT, message_id TEXT)`);
  db.prepare(`INSERT INTO outbox (key, kind, payload, created_at, state) VALUES ('session:old', 'session', '{}', '2026-01-01T00:00:00Z', 'queued')`).run();
  db.close();
  const box = Outbox.open(file);
  try {
    assert.deepEqual(box.rows().map((r) => [r.key, r.channel]), [['session:old', 'discord']]);
    assert.equal(box.pending('webhook'), 0);
    assert.equal(box.claimNext(process.pid, null, 'webhook'), null);
    assert.equal(box.claimNext(process.pid, null, 'discord')?.key, 'session:old');
  } finally {
    box.close();
  }
});

test('NIGHTSHIFT_WEBHOOK_URL is a secret whole, even a bare ntfy topic (control: the same value under another name is not)', () => {
  const topic = 'https://ntfy.sh/nightshift-alerts';
  assert.ok(secretValues({ NIGHTSHIFT_WEBHOOK_URL: topic }).includes(topic));
  assert.ok(!secretValues({ SOME_URL: topic }).includes(topic));
  assert.equal(makeRedactor(secretValues({ NIGHTSHIFT_WEBHOOK_URL: topic }))(`posting to ${topic}`), 'posting to [redacted]');
});
