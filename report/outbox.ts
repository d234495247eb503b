// The outbox, the one owner of `<state_dir>/outbox.db`: every report is queued here before it is
// posted, and marked sent by the statement that follows Discord's answer, so a report that could
// not be sent (network down, 5xx, rate limited past discord.js's retry, a crash mid-post) is sent
// by the next start, oldest first. The key (`session:<id>`, ...) is unique: a report is queued once.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Report } from './embed.js';

export type OutboxState = 'queued' | 'sending' | 'sent' | 'dead';
// Each channel is a queue of its own (its own order, its own sender): Discord down never holds
// the webhook's reports, nor the other way round.
export type Channel = 'discord' | 'webhook';
export type OutboxRow = {
  seq: number;
  key: string;
  kind: string;
  payload: string;
  created_at: string;
  state: OutboxState;
  attempts: number;
  last_error: string | null;
  uncertain: number;
  claimed_pid: number | null;
  claimed_start: string | null;
  sent_at: string | null;
  message_id: string | null;
  channel: Channel;
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'sending', 'sent', 'dead')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  uncertain INTEGER NOT NULL DEFAULT 0,
  claimed_pid INTEGER,
  claimed_start TEXT,
  sent_at TEXT,
  message_id TEXT
);
CREATE INDEX IF NOT EXISTS outbox_state ON outbox (state, seq);
`;
// Added after the first outboxes were written: an older file gains it, its rows Discord's.
const CHANNEL_COLUMN = `ALTER TABLE outbox ADD COLUMN channel TEXT NOT NULL DEFAULT 'discord'`;

// A webhook row's key: the report's own, in a namespace of its own (the key column is unique).
export const channelKey = (key: string, channel: Channel) => (channel === 'discord' ? key : `${channel}|${key}`);

export const outboxFile = (stateDir: string) => path.join(stateDir, 'outbox.db');

// Sent rows are kept this long, so a late duplicate of the same key is still recognised.
const KEEP_SENT_MS = 90 * 24 * 3600 * 1000;

export class Outbox {
  private constructor(private readonly db: Database.Database, readonly file: string) {}

  static open(file: string): Outbox {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const db = new Database(file);
    try {
      db.pragma('busy_timeout = 5000');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec(SCHEMA);
      const cols = db.prepare(`PRAGMA table_info(outbox)`).all() as Array<{ name: string }>;
      if (!cols.some((c) => c.name === 'channel')) db.exec(CHANNEL_COLUMN);
    } catch (err) {
      db.close();
      throw err;
    }
    return new Outbox(db, file);
  }

  // Null when there is no outbox yet: a tick with nothing to send creates nothing.
  static openIfExists(file: string): Outbox | null {
    return fs.existsSync(file) ? Outbox.open(file) : null;
  }

  close(): void {
    this.db.close();
  }

  // Queues a report; false when its key was queued before (sent or not): dedupe. Discord's row
  // keeps the embed; another channel's, the payload it is handed (its own neutral message).
  enqueue(report: Report, at: Date, channel: Channel = 'discord', payload: unknown = report.embed): boolean {
    const r = this.db
      .prepare(`INSERT OR IGNORE INTO outbox (key, kind, payload, created_at, state, channel) VALUES (?, ?, ?, ?, 'queued', ?)`)
      .run(channelKey(report.key, channel), report.kind, JSON.stringify(payload), at.toISOString(), channel);
    return r.changes === 1;
  }

  // Rows a dead sender left `sending` go back to the queue, marked uncertain: Discord may have
  // taken the post before the sender died.
  recover(alive: (pid: number, start: string | null) => boolean): number {
    const rows = this.db.prepare(`SELECT seq, claimed_pid, claimed_start FROM outbox WHERE state = 'sending'`).all() as Array<Pick<OutboxRow, 'seq' | 'claimed_pid' | 'claimed_start'>>;
    let n = 0;
    for (const r of rows) {
      if (r.claimed_pid && alive(r.claimed_pid, r.claimed_start)) continue;
      n += this.db.prepare(`UPDATE outbox SET state = 'queued', uncertain = 1, claimed_pid = NULL, claimed_start = NULL WHERE seq = ? AND state = 'sending'`).run(r.seq).changes;
    }
    return n;
  }

  // Claims the channel's oldest queued report for this process, or null. Only one sender at a
  // time per channel: while a live sender holds a row, nobody else claims (so reports arrive in order).
  claimNext(pid: number, start: string | null, channel: Channel = 'discord'): OutboxRow | null {
    return this.db.transaction(() => {
      if (this.db.prepare(`SELECT 1 FROM outbox WHERE state = 'sending' AND channel = ?`).get(channel)) return null;
      const row = this.db.prepare(`SELECT * FROM outbox WHERE state = 'queued' AND channel = ? ORDER BY seq LIMIT 1`).get(channel) as OutboxRow | undefined;
      if (!row) return null;
      this.db.prepare(`UPDATE outbox SET state = 'sending', attempts = attempts + 1, claimed_pid = ?, claimed_start = ? WHERE seq = ?`).run(pid, start, row.seq);
      return { ...row, state: 'sending' as const, attempts: row.attempts + 1, claimed_pid: pid, claimed_start: start };
    }).immediate();
  }

  // Delivery confirmed (Discord returned the message): the very next step.
  markSent(seq: number, messageId: string | null, at: Date): void {
    this.db.prepare(`UPDATE outbox SET state = 'sent', sent_at = ?, message_id = ?, last_error = NULL, claimed_pid = NULL, claimed_start = NULL WHERE seq = ?`).run(at.toISOString(), messageId, seq);
  }

  // Not delivered (or not known to be): back in the queue for the next start.
  release(seq: number, error: string, uncertain: boolean): void {
    this.db.prepare(`UPDATE outbox SET state = 'queued', last_error = ?, uncertain = MAX(uncertain, ?), claimed_pid = NULL, claimed_start = NULL WHERE seq = ?`).run(error, uncertain ? 1 : 0, seq);
  }

  // Discord refused the report's shape and took its minimal fallback: sent, with why in last_error.
  markSentAsFallback(seq: number, messageId: string | null, at: Date, error: string): void {
    this.db.prepare(`UPDATE outbox SET state = 'sent', sent_at = ?, message_id = ?, last_error = ?, claimed_pid = NULL, claimed_start = NULL WHERE seq = ?`).run(at.toISOString(), messageId, error, seq);
  }

  // Discord refuses this report for good (400: its shape), its fallback too: kept, never retried.
  markDead(seq: number, error: string): void {
    this.db.prepare(`UPDATE outbox SET state = 'dead', last_error = ?, claimed_pid = NULL, claimed_start = NULL WHERE seq = ?`).run(error, seq);
  }

  // Waiting in every channel, or in one.
  pending(channel?: Channel): number {
    const sql = `SELECT COUNT(*) AS n FROM outbox WHERE state IN ('queued', 'sending')${channel ? ' AND channel = ?' : ''}`;
    return (this.db.prepare(sql).get(...(channel ? [channel] : [])) as { n: number }).n;
  }

  oldestPending(): OutboxRow | null {
    return (this.db.prepare(`SELECT * FROM outbox WHERE state IN ('queued', 'sending') ORDER BY seq LIMIT 1`).get() as OutboxRow | undefined) ?? null;
  }

  rows(): OutboxRow[] {
    return this.db.prepare('SELECT * FROM outbox ORDER BY seq').all() as OutboxRow[];
  }

  prune(now: Date): number {
    return this.db.prepare(`DELETE FROM outbox WHERE state = 'sent' AND sent_at < ?`).run(new Date(now.getTime() - KEEP_SENT_MS).toISOString()).changes;
  }

  integrity(): string {
    return String(this.db.pragma('integrity_check', { simple: true }));
  }
}
