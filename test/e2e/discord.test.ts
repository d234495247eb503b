// Discord with the real CLI: a session run by `nightshift run` posts its embed; a report Discord
// could not take (500) is sent by the next start exactly once; `alert` reaches Discord with a
// broken config. The Anthropic API and Discord are loopback imitations.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Outbox, outboxFile } from '../../report/outbox.js';
import { startFakeDiscord, type FakeDiscord } from '../fake-discord.js';
import { makeRepos } from '../git-helpers.js';
import { configYaml, fakeApiPerFile, nightshift, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

describe('Discord reports', () => {
  let discord: FakeDiscord;
  before(async () => {
    discord = await startFakeDiscord();
  });
  after(async () => {
    await discord.close();
  });
  const yaml = () => configYaml({ discord: { api_base: discord.apiBase, timeout: '5s' } });

  test('nightshift run posts one embed for its session, with no secret in it', async (t) => {
    discord.messages.length = 0;
    discord.fallback = { status: 200 };
    const ws = workspace(t, api.url, yaml());
    makeRepos(ws.dir, ws.vault);
    const secrets: Record<string, string> = {
      ANTHROPIC_API_KEY: 'fake-anthropic-key-0123456789abcdef-0123456789abcdef',
      MY_SERVICE_TOKEN: 'tok-fake-9876543210',
      DISCORD_WEBHOOK_URL: discord.webhookUrl,
      DATABASE_URL: 'postgres://app:fake-db-password-123@db.internal:5432/app',
      SMTP_PASSWORD: 'fake-smtp-password-value',
      GH_PAT: 'fake-personal-access-token-value',
    };
    // Secrets the operator hands the agent reach the session, so its result carries them.
    // The supervisor's real key, which its proxy puts back upstream: the fake API accepts it.
    api.accept(secrets.ANTHROPIC_API_KEY);
    writeAgent(ws, 'leaky', 'SCENARIO=echo-secret', { allowed_tools: ['Bash'], env: ['MY_SERVICE_TOKEN', 'DATABASE_URL', 'SMTP_PASSWORD', 'GH_PAT'] });
    const { ran, record } = await runJson(ws, 'leaky', [], secrets);
    assert.equal(record.outcome, 'ok', ran.stderr);
    assert.equal(ran.code, 0);
    assert.equal(discord.messages.length, 1);
    const m = discord.messages[0];
    assert.equal(m.query, '?wait=true');
    const e = m.body.embeds[0];
    assert.equal(e.title, 'leaky: ok');
    assert.equal(e.color, 0x2ecc71);
    const field = (name: string) => e.fields.find((f: any) => f.name === name)?.value;
    assert.equal(field('Session'), `\`${record.id}\``);
    assert.equal(field('Model'), 'sonnet');
    assert.equal(field('Turns'), String(record.turns));
    assert.match(field('Cost'), /^\$\d+\.\d+$/);
    assert.match(field('Budget today'), /^1\/12 sessions, \$[\d.]+ of \$20\.00/);
    assert.equal(field('Git'), 'nothing committed, pushed');
    assert.match(e.description, /\\\[redacted\\\]/); // the marker, as text (markdown escaped)
    const payload = JSON.stringify(m.body);
    for (const v of Object.values(secrets).flatMap((s) => [s, encodeURIComponent(s), s.slice(0, 20), s.slice(-20)])) assert.ok(!payload.includes(v), 'a secret reached the payload');
    assert.ok(!payload.includes(discord.webhookUrl.split('/').at(-1)!));
    assert.match(ran.stderr, /"event":"report_sent"/);
  });

  test('a 500 leaves the report queued without touching the exit code; the next start sends it exactly once', async (t) => {
    discord.messages.length = 0;
    discord.fallback = { status: 500 };
    const ws = workspace(t, api.url, yaml());
    ws.env.DISCORD_WEBHOOK_URL = discord.webhookUrl;
    writeAgent(ws, 'a', 'SCENARIO=text');
    const { ran, record } = await runJson(ws, 'a');
    assert.equal(ran.code, 0);
    assert.equal(record.outcome, 'ok');
    assert.equal(discord.messages.length, 0);
    assert.match(ran.stderr, /"event":"report_queued"[^\n]*HTTP 500/);
    discord.fallback = { status: 200 };
    // A tick with nothing due is the next start: it drains the outbox and skips.
    const tick1 = await nightshift(['tick'], ws.env, ws.dir);
    assert.equal(tick1.code, 0, tick1.stderr);
    assert.match(tick1.stdout, /^skip:/);
    const tick2 = await nightshift(['tick'], ws.env, ws.dir);
    assert.equal(tick2.code, 0);
    assert.equal(discord.messages.length, 1);
    assert.equal(discord.messages[0].body.embeds[0].fields.find((f: any) => f.name === 'Session').value, `\`${record.id}\``);
    const box = Outbox.open(outboxFile(ws.state));
    assert.deepEqual(box.rows().map((r) => [r.key, r.state, r.attempts]), [[`session:${record.id}`, 'sent', 2]]);
    box.close();
  });

  test('alert with a broken config still reaches Discord and says what it could not read', async (t) => {
    discord.messages.length = 0;
    discord.fallback = { status: 200 };
    const ws = workspace(t, api.url);
    // The session's settings are broken; the discord section (one bad field of it too) is not all lost.
    fs.writeFileSync(ws.config, `claude:\n  timeout: forever\nbudget:\n  max_usd_per_day: lots\ndiscord:\n  api_base: ${discord.apiBase}\n  timeout: soon\n`);
    const env = { ...ws.env, DISCORD_WEBHOOK_URL: discord.webhookUrl, MONITOR_SERVICE_RESULT: 'exit-code', MONITOR_EXIT_CODE: 'exited', MONITOR_EXIT_STATUS: '78', MONITOR_INVOCATION_ID: '0123abcd' };
    // The tick itself dies on this config ...
    assert.equal((await nightshift(['tick'], env, ws.dir)).code, 78);
    // ... and the alarm does not share its failure.
    const ran = await nightshift(['alert', '--unit', 'nightshift.service'], env, ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /alert for nightshift\.service: sent/);
    assert.equal(discord.messages.length, 1);
    const e = discord.messages[0].body.embeds[0];
    assert.equal(e.title, 'unit failed: nightshift.service');
    const field = (name: string) => e.fields.find((f: any) => f.name === name)?.value;
    assert.equal(field('Result'), 'exit-code');
    assert.equal(field('Exit'), 'exited 78');
    assert.match(field('Could not read'), /claude\.timeout: Expected a duration/);
    assert.match(field('Could not read'), /budget\.max_usd_per_day/);
    assert.match(ran.stderr, /"event":"unit_failed"/);
    // The same invocation alerted twice is one report.
    await nightshift(['alert', '--unit', 'nightshift.service'], env, ws.dir);
    assert.equal(discord.messages.length, 1);
  });
});
