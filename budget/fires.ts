// The fires table, the one owner of its SQLite file (state_dir/fires.db): every start of the
// supervisor (a tick of the timer, of the daemon or by hand, and `nightshift run`) writes its row
// before it decides and settles it after, so a fire that did nothing still leaves a trace. A file
// of its own, not the ledger's: a ledger that cannot be opened (damaged, a failed migration) still
// gets a fire that says so. A row a dead supervisor left open is settled `crashed` by the next open.
import path from 'node:path';
import Database from 'better-sqlite3';
import { openForLook, openWalFile } from './wal-file.js';

export type FireKind = 'tick' | 'run';
// What started it: the systemd timer, `nightshift daemon`'s cron, or a person (`tick`, `run`).
export type FireTrigger = 'timer' | 'daemon' | 'hand';
export type FireAction = 'session' | 'skip' | 'dream' | 'refused' | 'failed to start' | 'locked' | 'crashed';
// A due rule the fire passed over, and why (the hold, the invalid file, the day's budget, a usage
// window, a stop request).
export type PassedOver = { rule: number | null; agent: string; cause: 'held' | 'invalid' | 'busy' | 'budget' | 'window' | 'stopped'; why: string };

export type FireStart = {
  at: string;
  kind: FireKind;
  trigger: FireTrigger;
  // The daemon's cron slot (null: the timer does not pass its slot on).
  slot: string | null;
  // Why the fire came late (daemon/schedule/late.ts), else null.
  late: string | null;
  supervisor_pid: number;
  supervisor_start: string | null;
};

export type FireEnd = {
  action: FireAction;
  agent: string | null;
  rule: number | null;
  session: string | null;
  outcome: string | null;
  reason: string;
  passed_over: PassedOver[];
  exit_code: number | null;
  ended_at: string;
  // The fire's OpenTelemetry trace (logs/telemetry.ts) and the spans of it the collector did not
  // take by the fire's end; both null with telemetry off.
  trace_id?: string | null;
  spans_dropped?: number | null;
};

export type FireRow = FireStart & { id: number; status: 'open' | 'settled' } & { [K in keyof FireEnd]: FireEnd[K] | null } & { passed_over: PassedOver[] };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS fires (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  kind TEXT NOT NULL,
  trigger TEXT NOT NULL,
  slot TEXT,
  late TEXT,
  status TEXT NOT NULL CHECK (status IN ('open', 'settled')),
  action TEXT,
  agent TEXT,
  rule INTEGER,
  session TEXT,
  outcome TEXT,
  reason TEXT,
  passed_over TEXT NOT NULL DEFAULT '[]',
  exit_code INTEGER,
  ended_at TEXT,
  supervisor_pid INTEGER,
  supervisor_start TEXT,
  trace_id TEXT,
  spans_dropped INTEGER
);
CREATE INDEX IF NOT EXISTS fires_at ON fires (at);
`;

// Columns added since the table was first made: an older file gets them at its next open.
const ADDED: Array<[string, string]> = [['trace_id', 'TEXT'], ['spans_dropped', 'INTEGER']];
function addColumns(db: Database.Database): void {
  const have = new Set((db.prepare('PRAGMA table_info(fires)').all() as Array<{ name: string }>).map((c) => c.name));
  for (const [name, type] of ADDED) if (!have.has(name)) db.exec(`ALTER TABLE fires ADD COLUMN ${name} ${type}`);
}

// Where the fires live: one file under state_dir, beside the ledger.
export function firesFile(config: { state_dir: string }): string {
  return path.join(config.state_dir, 'fires.db');
}

type Raw = Omit<FireRow, 'passed_over'> & { passed_over: string };
// A file not yet migrated (read by a look) has no trace columns: null.
const row = (r: Raw): FireRow => ({ ...r, trace_id: r.trace_id ?? null, spans_dropped: r.spans_dropped ?? null, passed_over: JSON.parse(r.passed_over || '[]') as PassedOver[] });

export class Fires {
  private constructor(private readonly db: Database.Database, readonly file: string) {}

  static open(file: string): Fires {
    // NORMAL sync for the settle: one lost to a power cut leaves the row open, and the next open
    // settles it `crashed`. The row itself is written FULL (see begin).
    const db = openWalFile(file, {
      label: 'Fires', what: 'fires', damaged: 'It is damaged: move it aside; a new one is made on the next start.',
      prepare: (d) => {
        d.exec(SCHEMA);
        addColumns(d);
      },
    });
    return new Fires(db, file);
  }

  // A look that writes nothing: the file read-only (the caller checks it exists; an empty table in
  // memory where it does not).
  static look(file: string): Fires {
    const db = openForLook(file, { label: 'Fires', what: 'fires', damaged: 'It is damaged: move it aside; a new one is made on the next start.', prepare: (d) => d.exec(SCHEMA) });
    return new Fires(db, file);
  }

  close(): void {
    this.db.close();
  }

  // The fire's row, on disk before the tick decides anything (FULL for this one commit).
  begin(s: FireStart): number {
    this.db.pragma('synchronous = FULL');
    try {
      return Number(this.db.prepare(`INSERT INTO fires (at, kind, trigger, slot, late, status, supervisor_pid, supervisor_start)
        VALUES (@at, @kind, @trigger, @slot, @late, 'open', @supervisor_pid, @supervisor_start)`).run(s).lastInsertRowid);
    } finally {
      this.db.pragma('synchronous = NORMAL');
    }
  }

  // What is known while it runs (the agent chosen, the session charged): a crash keeps it.
  note(id: number, n: { agent?: string | null; rule?: number | null; session?: string | null }): void {
    this.db.prepare(`UPDATE fires SET agent = coalesce(@agent, agent), rule = coalesce(@rule, rule), session = coalesce(@session, session) WHERE id = @id AND status = 'open'`)
      .run({ id, agent: n.agent ?? null, rule: n.rule ?? null, session: n.session ?? null });
  }

  settle(id: number, e: FireEnd): void {
    this.db.prepare(`UPDATE fires SET status = 'settled', action = @action, agent = coalesce(@agent, agent), rule = coalesce(@rule, rule),
      session = coalesce(@session, session), outcome = @outcome, reason = @reason, passed_over = @passed_over, exit_code = @exit_code, ended_at = @ended_at,
      trace_id = coalesce(@trace_id, trace_id), spans_dropped = coalesce(@spans_dropped, spans_dropped)
      WHERE id = @id`).run({ ...e, id, passed_over: JSON.stringify(e.passed_over), trace_id: e.trace_id ?? null, spans_dropped: e.spans_dropped ?? null });
  }

  // The final count of a traced fire's spans the collector did not take (known after its settle).
  dropped(id: number, spans: number): void {
    this.db.prepare('UPDATE fires SET spans_dropped = ? WHERE id = ? AND trace_id IS NOT NULL').run(spans, id);
  }

  // Rows whose supervisor is gone, settled `crashed` (what they noted kept); `alive` says whether
  // a (pid, start) still runs.
  settleDead(alive: (pid: number, start: string | null) => boolean, at: Date): FireRow[] {
    const dead = this.dead(alive);
    for (const r of dead) {
      const reason = `the supervisor (pid ${r.supervisor_pid}) died before the fire was settled${r.session ? `: its session ${r.session} is settled abandoned by the ledger` : ''}`;
      this.settle(r.id, { action: 'crashed', agent: r.agent, rule: r.rule, session: r.session, outcome: r.session ? 'abandoned' : null, reason, passed_over: [], exit_code: null, ended_at: at.toISOString() });
    }
    return dead.map((r) => this.get(r.id)!);
  }

  // Open rows whose supervisor is gone (read only).
  dead(alive: (pid: number, start: string | null) => boolean): FireRow[] {
    const open = (this.db.prepare(`SELECT * FROM fires WHERE status = 'open'`).all() as Raw[]).map(row);
    return open.filter((r) => !(r.supervisor_pid && alive(r.supervisor_pid, r.supervisor_start)));
  }

  // The trace of each of these sessions' fires (telemetry on); a file from before traces has none.
  traces(sessions: string[]): Map<string, string> {
    const out = new Map<string, string>();
    if (!sessions.length) return out;
    try {
      const rows = this.db.prepare(`SELECT session, trace_id FROM fires WHERE trace_id IS NOT NULL AND session IN (${sessions.map(() => '?').join(',')})`).all(...sessions) as Array<{ session: string; trace_id: string }>;
      for (const r of rows) out.set(r.session, r.trace_id);
    } catch {
      // no trace_id column yet (a look at a file no supervisor has opened since): no traces
    }
    return out;
  }

  get(id: number): FireRow | null {
    const r = this.db.prepare('SELECT * FROM fires WHERE id = ?').get(id) as Raw | undefined;
    return r ? row(r) : null;
  }

  // Newest first: since an instant, for one agent, at most `limit`.
  list(f: { since?: string; agent?: string; limit?: number } = {}): FireRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.since) where.push('at >= ?'), args.push(f.since);
    if (f.agent) where.push('agent = ?'), args.push(f.agent);
    const sql = `SELECT * FROM fires${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY at DESC, id DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...args, f.limit ?? -1) as Raw[]).map(row);
  }
}
