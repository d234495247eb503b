// The outbox and delivery against the loopback Discord, in-process, with a real SQLite file.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createLogger } from '../../logs/logger.js';
import { makeRedactor, secretValues } from '../../core/redact.js';
import { deliver, type ReportSettings } from '../../report/deliver.js';
import { finish, sessionReport, type Report } from '../../report/embed.js';
import { Outbox, outboxFile } from '../../report/outbox.js';
import { embedProblems, messageProblems, startFakeDiscord, type FakeDiscord } from '../fake-discord.js';
import { FIXTURES, outboxRows, ROOT, tempDir, waitFor } from '../helpers.js';

let discord: FakeDiscord;
before(async () => {
  discord = await startFakeDiscord();
});
after(async () => {
  await discord.close();
});

function reset() {
  discord.messages.length = 0;
  discord.refused.length = 0;
  discord.requests.length = 0;
  discord.script = [];
  discord.fallback = { status: 200 };
}

function setup(t: Parameters<typeof tempDir>[0], timeoutMs = 3000) {
  reset();
  const dir = tempDir(t);
  const env = { DISCORD_WEBHOOK_URL: discord.webhookUrl };
  const redact = makeRedactor(secretValues(env));
  const lines: string[] = [];
  const logger = createLogger({ redact, level: 'debug', stderr: { write: (l) => void lines.push(l) } });
  const settings: ReportSettings = { stateDir: path.join(dir, 'state'), apiBase: discord.apiBase, timeoutMs };
  const deps = { env, logger, redact, now: () => new Date() };
  return { dir, env, lines, settings, deps };
}

let n = 0;
function report(outcome = 'ok', result = 'done'): Report {
  const id = `20260301T1000${String(n++).padStart(2, '0')}Z-gardener-${n.toString(16).padStart(6, '0')}`;
  return sessionReport(
    { id, agent: 'gardener', outcome, model: 'sonnet', cost_usd: 0.01, cost_estimated: false, turns: 1, duration_ms: 1000, ended_at: null, result, error: null },
    null,
    { day: '2026-03-01', sessions: 1, max_sessions: 12, cost_usd: 0.01, max_usd: 20 },
    { redact: (t) => t },
  );
}

const rows = outboxRows;

test('a report is posted with ?wait=true and marked sent with the message id', async (t) => {
  const { settings, deps } = setup(t);
  const r = report();
  const d = await deliver(r, settings, deps);
  assert.deepEqual(d, { configured: true, queued: true, sent: 1, pending: 0, error: null });
  assert.equal(discord.messages.length, 1);
  assert.equal(discord.messages[0].query, '?wait=true');
  assert.deepEqual(discord.messages[0].body.embeds, [r.embed]);
  assert.deepEqual(discord.messages[0].body.allowed_mentions, { parse: [] });
  const [row] = rows(settings.stateDir);
  assert.equal(row.state, 'sent');
  assert.equal(row.message_id, discord.messages[0].messageId);
});

test('a session\'s masked link reaches Discord as text, not as a link', async (t) => {
  const { settings, deps } = setup(t);
  const said = 'all done: [open the report](http://evil.example/phish) ## and **bold** @everyone';
  // A masked link in Discord markdown: `[text](url)` with no backslash before the bracket.
  const masked = /(?<!\\)\[[^\]]*(?<!\\)\]\(http/;
  assert.match(said, masked, 'the control: the session\'s text is a masked link as written');
  await deliver(report('ok', said), settings, deps);
  const got = discord.messages[0].body.embeds[0].description;
  assert.equal(got, 'all done: \\[open the report\\](http://evil.example/phish) \\#\\# and \\*\\*bold\\*\\* \\@everyone');
  assert.doesNotMatch(got, masked);
  assert.deepEqual(discord.messages[0].body.allowed_mentions, { parse: [] });
});

test('a 429 within the time budget is waited out by discord.js and sent once', async (t) => {
  const { settings, deps } = setup(t, 5000);
  discord.script = [{ status: 429, retryAfter: 0.3 }];
  const d = await deliver(report(), settings, deps);
  assert.equal(d.sent, 1);
  assert.deepEqual(discord.requests.filter((q) => q.method === 'POST').map((q) => q.status), [429, 200]);
  assert.equal(discord.messages.length, 1);
});

// A 10-minute retry_after: slept out, the test's own timeout fails it.
test('a 429 past the time budget is not slept out: queued at once, sent by the next start', { timeout: 60_000 }, async (t) => {
  const { settings, deps, lines } = setup(t, 2000);
  discord.script = [{ status: 429, retryAfter: 600 }];
  const d = await deliver(report(), settings, deps);
  assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 0, pending: 1 });
  assert.match(lines.join(''), /"event":"report_queued".*rate limited/);
  const next = await deliver(null, settings, deps);
  assert.deepEqual({ sent: next.sent, pending: next.pending }, { sent: 1, pending: 0 });
  assert.equal(discord.messages.length, 1);
});

test('a 500 queues the report; the next start drains it exactly once', async (t) => {
  const { settings, deps } = setup(t);
  discord.fallback = { status: 500 };
  const r = report('error');
  const d = await deliver(r, settings, deps);
  assert.deepEqual({ queued: d.queued, sent: d.sent, pending: d.pending }, { queued: true, sent: 0, pending: 1 });
  assert.ok(discord.requests.filter((q) => q.status === 500).length >= 1);
  discord.fallback = { status: 200 };
  assert.equal((await deliver(null, settings, deps)).sent, 1);
  assert.equal((await deliver(null, settings, deps)).sent, 0);
  // The same session reported again (a retry of the whole step) is not queued twice.
  assert.equal((await deliver(r, settings, deps)).queued, false);
  assert.equal(discord.messages.length, 1);
  assert.equal(discord.messages[0].body.embeds[0].title, r.embed.title);
  assert.equal(rows(settings.stateDir)[0].attempts, 2);
});

test('Discord down for 20 runs, then up: 20 reports, in order, once each', async (t) => {
  const { settings, deps } = setup(t, 1500);
  await discord.down();
  const sent: Report[] = [];
  try {
    for (let i = 0; i < 20; i++) {
      const r = report('ok', `run ${i}`);
      sent.push(r);
      const d = await deliver(r, settings, deps);
      assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 0, pending: i + 1 });
    }
  } finally {
    await discord.up();
  }
  const d = await deliver(null, { ...settings, timeoutMs: 10_000 }, deps);
  assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 20, pending: 0 });
  assert.deepEqual(discord.messages.map((m) => m.body.embeds[0].description), sent.map((r) => r.embed.description));
  assert.equal((await deliver(null, settings, deps)).sent, 0);
  assert.equal(discord.messages.length, 20);
  assert.ok(rows(settings.stateDir).every((r) => r.state === 'sent' && r.uncertain === 0));
});

// The fake never answers a hanging post: uncut, the test's own timeout fails it.
test('a post that hangs is cut at the time budget and resent marked as a possible repeat', { timeout: 60_000 }, async (t) => {
  const { settings, deps } = setup(t, 1000);
  discord.script = [{ status: 'hang' }, { status: 'hang' }, { status: 'hang' }, { status: 'hang' }];
  const d = await deliver(report(), settings, deps);
  assert.equal(d.pending, 1);
  assert.equal(rows(settings.stateDir)[0].uncertain, 1);
  discord.script = [];
  assert.equal((await deliver(null, settings, deps)).sent, 1);
  assert.match(discord.messages[0].body.embeds[0].footer.text, /possibly a repeat/);
});

test('a sender killed between the post and the mark leaves its report queued, resent marked as a possible repeat', async (t) => {
  const { settings, deps } = setup(t);
  const box = Outbox.open(outboxFile(settings.stateDir));
  const r = report();
  box.enqueue(r, new Date());
  // Claimed by a process that is gone (pid 0 never runs a sender).
  assert.ok(box.claimNext(2 ** 22 + 12345, 'gone'));
  box.close();
  const d = await deliver(null, settings, deps);
  assert.equal(d.sent, 1);
  assert.match(discord.messages[0].body.embeds[0].footer.text, /possibly a repeat/);
});

test('while a live sender holds a report, a second sender waits its turn (order kept)', (t) => {
  const dir = tempDir(t);
  const box = Outbox.open(outboxFile(dir));
  box.enqueue(report(), new Date());
  box.enqueue(report(), new Date());
  const first = box.claimNext(process.pid, null);
  assert.equal(first?.seq, 1);
  assert.equal(box.claimNext(process.pid, null), null);
  box.markSent(first!.seq, 'm1', new Date());
  assert.equal(box.claimNext(process.pid, null)?.seq, 2);
  box.close();
});

// Two real processes: test/fixtures/outbox-sender.mjs claims the report and stays mid-post (the
// fake Discord hangs it); a second start must not re-send it. Removal tried: with the liveness
// check in Outbox.recover() gone, the second start re-queued and posted it, and this test failed.
test('while another live process is posting a report, a second start does not send it again', { timeout: 60_000 }, async (t) => {
  const { settings, deps } = setup(t, 5000);
  discord.script = [{ status: 'hang' }];
  const r = report();
  const sender = spawn(process.execPath, [path.join(FIXTURES, 'outbox-sender.mjs'), settings.stateDir, discord.apiBase, discord.webhookUrl, JSON.stringify(r)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => sender.once('exit', resolve));
  t.after(() => sender.kill('SIGKILL'));
  let out = '';
  let err = '';
  sender.stdout.on('data', (c) => (out += c));
  sender.stderr.on('data', (c) => (err += c));
  await waitFor(() => discord.requests.some((q) => q.status === 'hang') || sender.exitCode !== null, 30_000, 'the first sender to be mid-post');
  assert.match(out, /posting/, err);
  const [claimed] = rows(settings.stateDir);
  assert.deepEqual({ state: claimed.state, pid: claimed.claimed_pid }, { state: 'sending', pid: sender.pid });
  const second = await deliver(null, settings, deps);
  assert.deepEqual({ sent: second.sent, pending: second.pending }, { sent: 0, pending: 1 });
  assert.equal(discord.requests.filter((q) => q.method === 'POST').length, 1, 'no second post while the first sender lives');
  assert.equal(rows(settings.stateDir)[0].state, 'sending');
  // Once that sender is dead, the report goes again, marked as a possible repeat.
  sender.kill('SIGKILL');
  await exited;
  const third = await deliver(null, settings, deps);
  assert.deepEqual({ sent: third.sent, pending: third.pending }, { sent: 1, pending: 0 });
  assert.equal(discord.messages.length, 1);
  assert.match(discord.messages[0].body.embeds[0].footer.text, /possibly a repeat/);
});

test('a report Discord refuses for its shape (400) goes as a minimal fallback and the next one still goes', async (t) => {
  const { settings, deps, lines } = setup(t);
  discord.script = [{ status: 400 }];
  await discord.down();
  const first = report('error', 'the full result');
  await deliver(first, settings, deps);
  await discord.up();
  const d = await deliver(report(), settings, deps);
  assert.equal(d.sent, 2);
  assert.deepEqual(rows(settings.stateDir).map((r) => r.state), ['sent', 'sent']);
  assert.match(rows(settings.stateDir)[0].last_error ?? '', /minimal fallback.*HTTP 400: Invalid Form Body/);
  const fallback = discord.messages[0].body.embeds[0];
  assert.equal(fallback.title, 'gardener: error');
  assert.deepEqual(fallback.fields.map((f: { name: string; value: string }) => [f.name, f.value]), [['Outcome', 'error'], ['Report', `\`${first.key}\``]]);
  assert.equal(discord.messages[1].body.embeds[0].description, 'done');
  const refused = lines.map((l) => JSON.parse(l)).find((l) => l.event === 'report_refused');
  assert.equal(refused.embed.description, 'the full result', 'the full report is in the log');
});

// Removal tried: with the fallback in report/deliver.ts taken out, the report ended `dead`, nothing
// reached the channel, and this test failed.
test('an embed past Discord\'s limits is refused by the fake like Discord does, and the report still arrives', async (t) => {
  const { settings, deps, lines } = setup(t);
  const r = report('error');
  // Built without finish(), as an older version or a bug could queue it.
  r.embed = { ...r.embed, description: 'd'.repeat(4097), fields: [...r.embed.fields, { name: 'Error', value: 'v'.repeat(1025) }, { name: 'Empty', value: '' }] };
  const d = await deliver(r, settings, deps);
  assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 1, pending: 0 });
  assert.deepEqual(discord.refused[0].problems.map((p) => `${p.path.join('.')} ${p.code}`), [
    'embeds.0.description BASE_TYPE_MAX_LENGTH',
    `embeds.0.fields.${r.embed.fields.length - 2}.value BASE_TYPE_MAX_LENGTH`,
    `embeds.0.fields.${r.embed.fields.length - 1}.value BASE_TYPE_REQUIRED`,
  ]);
  assert.equal(discord.messages.length, 1);
  assert.match(discord.messages[0].body.embeds[0].description, /refused the full report/);
  assert.match(rows(settings.stateDir)[0].last_error ?? '', /description\[BASE_TYPE_MAX_LENGTH\]/);
  assert.ok(lines.some((l) => l.includes('"event":"report_refused"') && l.includes('d'.repeat(4097))), 'the full report is in the log');
});

test('the fake Discord refuses what Discord refuses, and takes what finish() makes of it', () => {
  const table: Array<[string, unknown, string]> = [
    ['title 257', [{ title: 't'.repeat(257) }], 'embeds.0.title BASE_TYPE_MAX_LENGTH'],
    ['description 4097', [{ description: 'd'.repeat(4097) }], 'embeds.0.description BASE_TYPE_MAX_LENGTH'],
    ['field name 257', [{ fields: [{ name: 'n'.repeat(257), value: 'v' }] }], 'embeds.0.fields.0.name BASE_TYPE_MAX_LENGTH'],
    ['field value 1025', [{ fields: [{ name: 'n', value: 'v'.repeat(1025) }] }], 'embeds.0.fields.0.value BASE_TYPE_MAX_LENGTH'],
    ['26 fields', [{ fields: Array.from({ length: 26 }, () => ({ name: 'n', value: 'v' })) }], 'embeds.0.fields BASE_TYPE_MAX_LENGTH'],
    ['6001 in total', [{ title: 't'.repeat(200), description: 'd'.repeat(4000), fields: [{ name: 'n', value: 'v'.repeat(1000) }, { name: 'n', value: 'v'.repeat(800) }] }], 'embeds MAX_EMBED_SIZE_EXCEEDED'],
    ['empty field name', [{ fields: [{ name: '', value: 'v' }] }], 'embeds.0.fields.0.name BASE_TYPE_REQUIRED'],
    ['blank field value', [{ fields: [{ name: 'n', value: '  ' }] }], 'embeds.0.fields.0.value BASE_TYPE_REQUIRED'],
  ];
  for (const [what, embeds, expected] of table) {
    assert.deepEqual(embedProblems(embeds).map((p) => `${p.path.join('.')} ${p.code}`), [expected], what);
  }
  assert.deepEqual(embedProblems([{ title: 't'.repeat(256), description: 'd'.repeat(4096), fields: [{ name: 'n', value: 'v'.repeat(1024) }] }]), []);
  // The message itself: content over 2000 characters, more than 10 embeds; control: 2000 and 10 pass.
  assert.deepEqual(messageProblems({ content: 'c'.repeat(2001) }).map((p) => `${p.path.join('.')} ${p.code}`), ['content BASE_TYPE_MAX_LENGTH']);
  assert.deepEqual(messageProblems({ embeds: Array.from({ length: 11 }, () => ({ title: 't' })) }).map((p) => `${p.path.join('.')} ${p.code}`), ['embeds BASE_TYPE_MAX_LENGTH']);
  assert.deepEqual(messageProblems({ content: '\u{1F319}'.repeat(2000), embeds: Array.from({ length: 10 }, () => ({ title: 't' })) }), []);
  const finished = finish({ title: 't'.repeat(300), description: 'd'.repeat(5000), color: 1, fields: Array.from({ length: 30 }, () => ({ name: '', value: 'v'.repeat(2000) })) }, (x) => x);
  assert.deepEqual(embedProblems([finished]), []);
});

test('a wrong webhook token keeps the report queued', async (t) => {
  const { settings, deps } = setup(t);
  const env = { DISCORD_WEBHOOK_URL: discord.webhookUrl.replace(/.{4}$/, 'XXXX') };
  const d = await deliver(report(), settings, { ...deps, env });
  assert.deepEqual({ sent: d.sent, pending: d.pending }, { sent: 0, pending: 1 });
  assert.match(rows(settings.stateDir)[0].last_error ?? '', /HTTP 401/);
});

test('without a webhook nothing is queued and no outbox is created', async (t) => {
  const { settings, deps } = setup(t);
  const d = await deliver(report(), settings, { ...deps, env: {} });
  assert.equal(d.configured, false);
  assert.equal(fs.existsSync(outboxFile(settings.stateDir)), false);
  assert.equal(discord.requests.length, 0);
});

test('draining with no outbox file creates nothing and never loads discord.js', (t) => {
  const dir = tempDir(t);
  const script = `
    import(${JSON.stringify(path.join(ROOT, 'dist/report/deliver.js'))}).then(async ({ deliver }) => {
      const { silentLogger } = await import(${JSON.stringify(path.join(ROOT, 'dist/logs/logger.js'))});
      const d = await deliver(null, { stateDir: ${JSON.stringify(dir)}, apiBase: 'http://127.0.0.1:9/api', timeoutMs: 1000 },
        { env: { DISCORD_WEBHOOK_URL: ${JSON.stringify(discord.webhookUrl)} }, logger: silentLogger(), redact: (t) => t, now: () => new Date() });
      console.log(JSON.stringify({ d, discord: Object.keys(require.cache).some((k) => k.includes('discord.js')) }));
    });`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.discord, false);
  assert.equal(out.d.sent, 0);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('no log line and no stored row carries the webhook token', async (t) => {
  const { settings, deps, lines } = setup(t);
  discord.fallback = { status: 500 };
  await deliver(report(), settings, deps);
  const token = discord.webhookUrl.split('/').at(-1)!;
  assert.ok(!lines.join('').includes(token));
  assert.ok(!JSON.stringify(rows(settings.stateDir)).includes(token));
});
