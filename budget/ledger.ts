// The budget ledger, the one owner of its SQLite file. A session is charged when it is opened:
// its row, written in one transaction before the spawn, is the day's count, so a supervisor that
// dies mid-session cannot lose it. Cost and outcome are settled at the end; a later supervisor
// settles what a dead one left open as `abandoned`.
import path from 'node:path';
import Database from 'better-sqlite3';
import { openWalFile, openForLook } from './wal-file.js';
import type { MeterState } from './meter.js';
import { dayTotalsOf, type DayTotals } from './policy.js';
import type { Reservation } from './reservation.js';
import type { UsageWindow } from './windows.js';

export type SessionRow = {
  id: string;
  agent: string;
  day: string;
  status: 'running' | 'settled';
  outcome: string | null;
  started_at: string;
  ended_at: string | null;
  duration_ms: number | null;
  cost_usd: number;
  cost_estimated: number;
  turns: number;
  exit_code: number | null;
  result: string | null;
  error: string | null;
  transcript: string | null;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  supervisor_pid: number | null;
  supervisor_start: string | null;
  child_pid: number | null;
  // When an abandoned session was reported and captured (null: not yet; see followUp).
  followed_up_at?: string | null;
  // Whether the session had its memory tools: 'served', 'unavailable' (the store could not be
  // served), or null (not known: a session before version 3, or one that never reached its start).
  memory?: 'served' | 'unavailable' | null;
  // A rate-limited session: when the API said the limit lifts (else null).
  retry_at: string | null;
  // What the charge reserved of the day (null: a session from before reservations).
  reserved_usd?: number | null;
  // While it runs: the worst case of its API calls in flight (the meter's; cost_usd is its spend).
  pending_usd?: number | null;
  // The calls the meter priced (null: the meter never recorded this session).
  metered_calls?: number | null;
  // The CLI's own reported total, kept beside the meter's (null: it reported none).
  cli_cost_usd?: number | null;
  // Connections the egress proxy refused (null: the agent had no network, or before version 5).
  egress_refused?: number | null;
  // Connections to the API the wall refused, not the CLI's (null: unwalled, or before version 10).
  api_refused?: number | null;
  // The git outcome as JSON (vault/git-sync.ts GitReport; null: git off, or before version 11).
  git?: string | null;
};

export type OpenSession = Pick<SessionRow, 'id' | 'agent' | 'day' | 'started_at' | 'transcript' | 'model' | 'supervisor_pid' | 'supervisor_start'>;
export type Settlement = Pick<SessionRow, 'outcome' | 'ended_at' | 'duration_ms' | 'cost_usd' | 'turns' | 'exit_code' | 'result' | 'error' | 'input_tokens' | 'output_tokens'> & { cost_estimated: boolean; retry_at?: string | null; cli_cost_usd?: number | null; metered_calls?: number | null };

// `open` charges at open (the rule). `settle` charges only at the end: it exists so tests can
// show, as a negative control, the loss the rule prevents.
export type ChargeOn = 'open' | 'settle';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  day TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'settled')),
  outcome TEXT,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  duration_ms INTEGER,
  cost_usd REAL NOT NULL DEFAULT 0,
  cost_estimated INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  exit_code INTEGER,
  result TEXT,
  error TEXT,
  transcript TEXT,
  model TEXT,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  supervisor_pid INTEGER,
  supervisor_start TEXT,
  child_pid INTEGER,
  retry_at TEXT
);
CREATE INDEX IF NOT EXISTS sessions_day_agent ON sessions (day, agent);
CREATE INDEX IF NOT EXISTS sessions_started ON sessions (started_at);
CREATE TABLE IF NOT EXISTS usage_windows (
  name TEXT PRIMARY KEY,
  utilization REAL NOT NULL,
  resets_at TEXT,
  seen_at TEXT NOT NULL
);
`;

// Each later version adds one column; `backfill` runs once when it is added. The version is read
// first, so a current file takes no write lock at open.
const COLUMNS: Array<{ version: number; column: string; type?: 'REAL' | 'INTEGER'; backfill?: string }> = [
  // Sessions settled before it are taken as followed up: an upgrade must not report every old
  // abandoned session again.
  { version: 2, column: 'followed_up_at', backfill: `UPDATE sessions SET followed_up_at = coalesce(ended_at, started_at) WHERE status = 'settled'` },
  // A session that ran without its memory tools says so in status.
  { version: 3, column: 'memory' },
  // The hold a rate limit sets (budget/holds.ts).
  { version: 4, column: 'retry_at' },
  // The meter (budget/meter.ts): the reservation, the worst case in flight, the calls priced and
  // the CLI's own total beside the meter's. A session settled before them keeps its CLI total as
  // cost_usd, and it is also shown as the CLI's.
  { version: 5, column: 'reserved_usd', type: 'REAL' },
  { version: 6, column: 'pending_usd', type: 'REAL' },
  { version: 7, column: 'metered_calls', type: 'INTEGER' },
  { version: 8, column: 'cli_cost_usd', type: 'REAL', backfill: `UPDATE sessions SET cli_cost_usd = cost_usd WHERE status = 'settled' AND cost_estimated = 0` },
  // What the egress proxy refused (sessions/wall/egress-proxy.ts).
  { version: 9, column: 'egress_refused', type: 'INTEGER' },
  // What the bridge refused at the API's socket (sessions/wall/bridge.ts).
  { version: 10, column: 'api_refused', type: 'INTEGER' },
  // Where the session's work went (vault/git-sync.ts GitReport, as JSON; null: git sync off).
  { version: 11, column: 'git' },
];

function addColumns(db: Database.Database): void {
  const at = db.pragma('user_version', { simple: true }) as number;
  for (const c of COLUMNS) {
    if (at >= c.version) continue;
    db.transaction(() => {
      const cols = (db.prepare('PRAGMA table_info(sessions)').all() as Array<{ name: string }>).map((x) => x.name);
      if (!cols.includes(c.column)) {
        db.exec(`ALTER TABLE sessions ADD COLUMN ${c.column} ${c.type ?? 'TEXT'}`);
        if (c.backfill) db.exec(c.backfill);
      }
      db.pragma(`user_version = ${c.version}`);
    }).immediate();
  }
}

// Where the ledger lives: one file under state_dir.
export function ledgerFile(config: { state_dir: string }): string {
  return path.join(config.state_dir, 'ledger.db');
}

export class Ledger {
  private constructor(private readonly db: Database.Database, readonly file: string, private readonly chargeOn: ChargeOn) {}

  static open(file: string, options: { chargeOn?: ChargeOn } = {}): Ledger {
    // NORMAL sync for progress and settle: a settle lost to a power cut leaves the row `running`,
    // and the next start settles it `abandoned`, still counted. The charge itself is FULL (see open).
    const db = openWalFile(file, {
      label: 'Ledger', what: 'ledger', damaged: 'It is damaged or not a ledger: move it aside; a new one is made on the next start.',
      prepare: (d) => {
        d.exec(SCHEMA);
        addColumns(d);
      },
    });
    return new Ledger(db, file, options.chargeOn ?? 'open');
  }

  // A look that writes nothing: the existing file opened read-only, or, where there is none yet,
  // an empty ledger in memory (`empty`), so a screen shows an empty day and makes no file.
  static look(file: string): Ledger {
    const db = openForLook(file, {
      label: 'Ledger', what: 'ledger', damaged: 'It is damaged or not a ledger: move it aside; a new one is made on the next start.',
      prepare: (d) => {
        d.exec(SCHEMA);
        addColumns(d);
      },
    });
    return new Ledger(db, db.memory ? ':memory:' : file, 'open');
  }

  // No ledger file yet: no session has ever been charged.
  get empty(): boolean {
    return this.db.memory;
  }

  // Whether the file's columns are all there (false: an older ledger the next writer upgrades).
  current(): boolean {
    return (this.db.pragma('user_version', { simple: true }) as number) >= COLUMNS[COLUMNS.length - 1].version;
  }

  // Statements are compiled once per handle: settle runs on every session and in the bench.
  private readonly statements = new Map<string, Database.Statement>();
  private stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) this.statements.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  close(): void {
    this.db.close();
  }

  // Charges the session: from here on it counts against today, whatever happens next. `reserve`
  // decides its reservation from today's totals read in the same transaction, so two charges
  // cannot both take what is left; a refusal writes nothing and is returned.
  open<R extends { ok: true; usd: number } | { ok: false } = Reservation>(s: OpenSession, reserve?: (today: DayTotals) => R): R | null {
    if (this.chargeOn === 'settle') return reserve ? reserve(this.dayTotals(s.day)) : null;
    // FULL for this one commit: it is on disk before the spawn, so a power loss cannot roll the
    // charge back. (Per commit, not for the connection: FULL on every progress write costs ~10x.)
    this.db.pragma('synchronous = FULL');
    try {
      const r = this.db.transaction(() => {
        const decided = reserve ? reserve(this.dayTotals(s.day)) : null;
        if (decided && !decided.ok) return decided;
        this.insert(s, decided && decided.ok ? decided.usd : null);
        return decided;
      }).immediate();
      this.chargedWith = this.synchronous();
      return r;
    } finally {
      this.db.pragma('synchronous = NORMAL');
    }
  }

  private insert(s: OpenSession, reserved: number | null = null): void {
    this.stmt(`INSERT INTO sessions (id, agent, day, status, started_at, transcript, model, supervisor_pid, supervisor_start, reserved_usd)
      VALUES (@id, @agent, @day, 'running', @started_at, @transcript, @model, @supervisor_pid, @supervisor_start, @reserved)`).run({ ...s, reserved });
  }

  setMemory(id: string, memory: 'served' | 'unavailable'): void {
    this.stmt('UPDATE sessions SET memory = ? WHERE id = ?').run(memory, id);
  }

  setEgressRefused(id: string, refused: number): void {
    this.stmt('UPDATE sessions SET egress_refused = ? WHERE id = ?').run(refused, id);
  }

  setApiRefused(id: string, refused: number): void {
    this.stmt('UPDATE sessions SET api_refused = ? WHERE id = ?').run(refused, id);
  }

  setGit(id: string, json: string): void {
    this.stmt('UPDATE sessions SET git = ? WHERE id = ?').run(json, id);
  }

  setChild(id: string, pid: number): void {
    this.stmt('UPDATE sessions SET child_pid = ? WHERE id = ?').run(pid, id);
  }

  // The turns so far (the spend is the meter's, below: never the stream's word).
  progress(id: string, turns: number): void {
    this.stmt(`UPDATE sessions SET turns = ? WHERE id = ? AND status = 'running'`).run(turns, id);
  }

  // The meter's record as calls start and end, so a session whose supervisor dies still carries
  // its spend and the worst case of the call it was making.
  meter(id: string, m: MeterState): void {
    this.stmt(`UPDATE sessions SET cost_usd = ?, pending_usd = ?, metered_calls = ?, cost_estimated = ? WHERE id = ? AND status = 'running'`)
      .run(m.spentUsd, m.pendingUsd, m.calls, m.pendingUsd > 0 || m.worstCaseCalls > 0 ? 1 : 0, id);
  }

  settle(open: OpenSession, s: Settlement): void {
    const row = { ...open, ...s, cost_estimated: s.cost_estimated ? 1 : 0, retry_at: s.retry_at ?? null, cli_cost_usd: s.cli_cost_usd ?? null, metered_calls: s.metered_calls ?? null };
    // IMMEDIATE: a deferred transaction that reads first cannot wait for the write lock in WAL
    // mode (busy_timeout never applies), so settle would fail at once under a concurrent writer.
    this.db.transaction(() => {
      const exists = this.stmt('SELECT 1 FROM sessions WHERE id = ?').get(open.id);
      if (!exists) {
        this.insert(open);
      }
      this.stmt(`UPDATE sessions SET status = 'settled', outcome = @outcome, ended_at = @ended_at, duration_ms = @duration_ms,
        cost_usd = @cost_usd, cost_estimated = @cost_estimated, turns = @turns, exit_code = @exit_code, result = @result,
        error = @error, input_tokens = @input_tokens, output_tokens = @output_tokens, retry_at = @retry_at, cli_cost_usd = @cli_cost_usd,
        metered_calls = coalesce(@metered_calls, metered_calls), pending_usd = 0 WHERE id = @id`).run(row);
    }).immediate();
  }

  // The last value of each subscription usage window a reply carried (budget/windows.ts).
  recordWindows(windows: UsageWindow[]): void {
    if (!windows.length) return;
    const st = this.stmt(`INSERT INTO usage_windows (name, utilization, resets_at, seen_at) VALUES (@name, @utilization, @resets_at, @seen_at)
      ON CONFLICT (name) DO UPDATE SET utilization = excluded.utilization, resets_at = excluded.resets_at, seen_at = excluded.seen_at`);
    this.db.transaction(() => {
      for (const w of windows) st.run(w);
    }).immediate();
  }

  windows(): UsageWindow[] {
    return this.stmt('SELECT name, utilization, resets_at, seen_at FROM usage_windows ORDER BY name').all() as UsageWindow[];
  }

  // Sessions running now: their supervisor still runs (`alive`, as for orphans).
  live(alive: (pid: number, start: string | null) => boolean): SessionRow[] {
    const rows = this.stmt(`SELECT * FROM sessions WHERE status = 'running'`).all() as SessionRow[];
    return rows.filter((r) => !!r.supervisor_pid && alive(r.supervisor_pid, r.supervisor_start));
  }

  // Sessions whose supervisor is gone; `alive` says whether a (pid, start) still runs.
  orphans(alive: (pid: number, start: string | null) => boolean): SessionRow[] {
    const rows = this.stmt(`SELECT * FROM sessions WHERE status = 'running'`).all() as SessionRow[];
    return rows.filter((r) => !(r.supervisor_pid && alive(r.supervisor_pid, r.supervisor_start)));
  }

  // Settles a dead supervisor's session as abandoned. What counts: the meter's record (its spend
  // and the worst case of the call in flight) when it kept one, else the whole reservation.
  abandon(row: SessionRow, endedAt: Date): void {
    const duration = Math.max(0, endedAt.getTime() - Date.parse(row.started_at));
    this.stmt(`UPDATE sessions SET status = 'settled', outcome = 'abandoned', ended_at = ?, duration_ms = ?, cost_estimated = 1,
      cost_usd = CASE WHEN metered_calls IS NOT NULL THEN cost_usd + coalesce(pending_usd, 0) ELSE max(cost_usd, coalesce(reserved_usd, 0)) END, pending_usd = 0,
      exit_code = 1, error = 'the supervisor died before the session ended' WHERE id = ? AND status = 'running'`).run(endedAt.toISOString(), duration, row.id);
  }

  // Abandoned sessions not yet reported and captured, oldest first.
  unfollowedAbandoned(): SessionRow[] {
    return this.stmt(`SELECT * FROM sessions WHERE outcome = 'abandoned' AND followed_up_at IS NULL ORDER BY started_at, rowid`).all() as SessionRow[];
  }

  // Takes an abandoned session's follow-up for this process: true once, for one caller, ever.
  claimFollowUp(id: string, at: Date): boolean {
    return this.stmt(`UPDATE sessions SET followed_up_at = ? WHERE id = ? AND followed_up_at IS NULL`).run(at.toISOString(), id).changes === 1;
  }

  // A running session counts what it committed (its spend and its call in flight) as spent, and
  // the rest of its reservation as reserved; a settled one its cost.
  dayTotals(day: string): DayTotals {
    const rows = this.stmt(`SELECT agent, COUNT(*) AS n,
      TOTAL(cost_usd + CASE WHEN status = 'running' THEN coalesce(pending_usd, 0) ELSE 0 END) AS usd,
      TOTAL(CASE WHEN status = 'running' THEN max(0, coalesce(reserved_usd, 0) - cost_usd - coalesce(pending_usd, 0)) ELSE 0 END) AS reserved
      FROM sessions WHERE day = ? GROUP BY agent`).all(day) as Array<{ agent: string; n: number; usd: number; reserved: number }>;
    return dayTotalsOf(rows);
  }

  // Per agent: sessions today and when the last one (any day) began; for dispatch.
  history(day: string): Record<string, { today: number; lastStartedAt: Date | null }> {
    const rows = this.stmt(`SELECT agent, SUM(day = ?) AS today, MAX(started_at) AS last FROM sessions GROUP BY agent`).all(day) as Array<{ agent: string; today: number; last: string | null }>;
    const out: Record<string, { today: number; lastStartedAt: Date | null }> = {};
    for (const r of rows) out[r.agent] = { today: r.today ?? 0, lastStartedAt: r.last ? new Date(r.last) : null };
    return out;
  }

  lastOkAt(): string | null {
    const r = this.stmt(`SELECT MAX(ended_at) AS at FROM sessions WHERE outcome = 'ok'`).get() as { at: string | null };
    return r.at;
  }

  recent(limit: number): SessionRow[] {
    return this.stmt('SELECT * FROM sessions ORDER BY started_at DESC, rowid DESC LIMIT ?').all(limit) as SessionRow[];
  }

  // Settled sessions matching the filters, newest first (`nightshift sessions`).
  list(f: { limit: number; agent?: string; outcome?: string; since?: string }): SessionRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.agent) where.push('agent = ?'), args.push(f.agent);
    if (f.outcome) where.push(f.outcome === 'running' ? "status = 'running'" : 'outcome = ?'), f.outcome === 'running' || args.push(f.outcome);
    if (f.since) where.push('started_at >= ?'), args.push(f.since);
    const sql = `SELECT * FROM sessions${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at DESC, rowid DESC LIMIT ?`;
    return this.db.prepare(sql).all(...args, f.limit) as SessionRow[];
  }

  // Each agent's last `n` settled sessions, newest first: what holds and backoff are read from.
  lastSettled(n: number): Record<string, SessionRow[]> {
    const rows = this.stmt(`SELECT * FROM (SELECT *, rowid AS rid, ROW_NUMBER() OVER (PARTITION BY agent ORDER BY started_at DESC, rowid DESC) AS k
      FROM sessions WHERE status = 'settled') WHERE k <= ? ORDER BY agent, k`).all(n) as Array<SessionRow & { k?: number; rid?: number }>;
    const out: Record<string, SessionRow[]> = {};
    for (const { k: _k, rid: _rid, ...r } of rows) (out[r.agent] ??= []).push(r);
    return out;
  }

  get(id: string): SessionRow | null {
    return (this.stmt('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined) ?? null;
  }

  // The synchronous level the last charge was committed with (2 = FULL), for tests.
  chargedWith: number | null = null;

  // The connection's synchronous level (1 = NORMAL, 2 = FULL).
  synchronous(): number {
    return Number(this.db.pragma('synchronous', { simple: true }));
  }

  integrity(): string {
    return String(this.db.pragma('integrity_check', { simple: true }));
  }
}
