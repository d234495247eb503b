// A session a SIGKILLed supervisor left behind: the next start settles it abandoned (reconcile),
// reports it through the outbox and captures its transcript, once; a second start does neither.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { Ledger } from '../../../budget/ledger.js';
import { followUpAbandoned } from '../../../daemon/tick/abandoned.js';
import { validateConfig } from '../../../config/config.js';
import { reconcile } from '../../../daemon/tick/reconcile.js';
import { createLogger } from '../../../logs/logger.js';
import { makeRedactor, secretValues } from '../../../core/redact.js';
import { MemoryStore } from '../../../memory/store.js';
import { Outbox, outboxFile } from '../../../report/outbox.js';
import { startFakeDiscord, type FakeDiscord } from '../../fake-discord.js';
import { tempDir } from '../../helpers.js';

let discord: FakeDiscord;
before(async () => {
  discord = await startFakeDiscord();
});
after(async () => {
  await discord.close();
});

const ID = '20261201T100000Z-gardener-abc123';
const text = (id: string, t: string) => JSON.stringify({ type: 'assistant', message: { id, model: 'claude-opus-4-8', content: [{ type: 'text', text: t }] }, parent_tool_use_id: null });

// A ledger with one session whose supervisor is dead (a pid that has exited), and its transcript.
function crashed(t: TestContext) {
  discord.messages.length = 0;
  const dir = tempDir(t);
  const config = validateConfig({ state_dir: './state', log_dir: './logs', discord: { api_base: discord.apiBase, timeout: '5s' } }, path.join(dir, 'nightshift.yaml')).config!;
  const transcript = path.join(config.log_dir, 'transcripts', `${ID}.jsonl`);
  fs.mkdirSync(path.dirname(transcript), { recursive: true });
  fs.writeFileSync(transcript, `${[text('m1', 'Looking.\nOBSERVE: The index note was stale before the crash'), text('m2', '> BELIEVE: QUOTED from a page')].join('\n')}\n`);
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  const ledgerFile = path.join(config.state_dir, 'ledger.db');
  const ledger = Ledger.open(ledgerFile);
  ledger.open({ id: ID, agent: 'gardener', day: '2026-12-01', started_at: '2026-12-01T10:00:00.000Z', transcript, model: 'sonnet', supervisor_pid: dead, supervisor_start: null });
  ledger.meter(ID, { spentUsd: 0.12, pendingUsd: 0, calls: 2, worstCaseCalls: 0 });
  ledger.progress(ID, 3);
  ledger.close();
  const env = { DISCORD_WEBHOOK_URL: discord.webhookUrl };
  const redact = makeRedactor(secretValues(env));
  const logger = createLogger({ redact, level: 'debug', stderr: { write: () => {} } });
  const db = path.join(config.state_dir, 'memory.db');
  const deps = { env, logger, redact, now: () => new Date('2026-12-01T11:00:00Z'), openStore: async () => MemoryStore.open(db) };
  // One start: reconcile, then what the abandoned sessions are owed (as supervise does).
  const start = async (followUp = true) => {
    const l = Ledger.open(ledgerFile);
    try {
      await reconcile(l, deps);
      return followUp ? await followUpAbandoned(config, l, deps) : [];
    } finally {
      l.close();
    }
  };
  const observations = () => {
    const d = new Database(db, { readonly: true });
    try {
      return d.prepare('SELECT text FROM observations WHERE session_id = ?').pluck().all(ID) as string[];
    } finally {
      d.close();
    }
  };
  return { config, ledgerFile, start, observations };
}

test('an abandoned session is reported through the outbox (outcome abandoned) and its transcript captured, once', async (t) => {
  const c = crashed(t);
  assert.deepEqual(await c.start(), [ID]);
  assert.equal(discord.messages.length, 1);
  const embed = discord.messages[0].body.embeds[0];
  assert.equal(embed.title, 'gardener: abandoned');
  assert.ok(embed.fields.some((f: { name: string; value: string }) => f.name === 'Error' && /supervisor died/.test(f.value)));
  const box = Outbox.open(outboxFile(c.config.state_dir));
  assert.deepEqual(box.rows().map((r) => [r.key, r.state]), [[`session:${ID}`, 'sent']]);
  box.close();
  const stored = c.observations();
  assert.ok(stored.some((o) => o.includes('The index note was stale before the crash')), stored.join('\n'));
  assert.ok(stored.some((o) => o.startsWith(`Session ${ID} of gardener ended abandoned after 3 turns`)));
  assert.ok(!stored.some((o) => o.includes('QUOTED')));

  // A second start does neither again.
  assert.deepEqual(await c.start(), []);
  assert.equal(discord.messages.length, 1);
  assert.deepEqual(c.observations(), stored);

  // Negative control: without the ledger's follow-up mark the same start captures a second time
  // (the outbox alone keeps the report single, by its key).
  const raw = new Database(c.ledgerFile);
  raw.prepare('UPDATE sessions SET followed_up_at = NULL').run();
  raw.close();
  assert.deepEqual(await c.start(), [ID]);
  assert.equal(discord.messages.length, 1);
  assert.ok(c.observations().length > stored.length, 'captured again');
});

test('negative control: reconcile alone settles the session but neither reports nor captures it', async (t) => {
  const c = crashed(t);
  await c.start(false);
  const l = Ledger.open(c.ledgerFile);
  t.after(() => l.close());
  assert.equal(l.get(ID)!.outcome, 'abandoned');
  assert.equal(discord.messages.length, 0);
  assert.equal(fs.existsSync(path.join(c.config.state_dir, 'memory.db')), false);
});

test('a ledger from before the follow-up mark does not report its old abandoned sessions again', async (t) => {
  const c = crashed(t);
  await c.start(false);
  // Back to version 1: no follow-up column.
  const raw = new Database(c.ledgerFile);
  raw.exec('ALTER TABLE sessions DROP COLUMN followed_up_at; PRAGMA user_version = 1');
  raw.close();
  assert.deepEqual(await c.start(), []);
  assert.equal(discord.messages.length, 0);
});
