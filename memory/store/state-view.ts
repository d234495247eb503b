// A read-only view of the memory store for the session state: the identity candidates (active,
// confirmed beliefs and values by salience), which the store has no list for. Its own read-only connection,
// so it never writes and never waits on a writer. Faded and superseded memories are never
// returned. It knows nothing of sessions.
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { checkFile } from './schema.js';
import { checkAgent, seenSql } from './scope.js';

export type IdentityCandidate = { id: number; text: string; category: string; salience: number };
// A stored anneal pass as the store keeps it (sessions/state/anneal.ts reads its fields from the text).
export type AnnealRow = { id: number; text: string; tags: string[]; created_at: string; source: string | null; faded: boolean };

export class StateView {
  private constructor(private readonly db: Database.Database, private readonly agent: string | null) {}

  /** Null when there is no store yet; throws MemoryError for a file that is not ours or is corrupt. `agent`: whose view (memory/store/scope.ts), null all. */
  static open(file: string, agent: string | null = null): StateView | null {
    const who = checkAgent(agent);
    if (!fs.existsSync(file) || !checkFile(file)) return null;
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 2000');
    return new StateView(db, who);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  // Active, confirmed beliefs and values, most salient first: an agent's unconfirmed claim is not
  // who the agent is (memory/claims.ts).
  identityCandidates(limit: number): IdentityCandidate[] {
    return this.db
      .prepare(`SELECT id, text, category, salience FROM memories m WHERE faded = 0 AND superseded_by IS NULL AND confirmed = 1 AND category IN ('belief', 'value') AND ${seenSql(this.agent, 'm')} ORDER BY salience DESC, id DESC LIMIT ?`)
      .all(limit) as IdentityCandidate[];
  }

  // The anneal log, oldest first (faded passes too: the log is history, not what is injected).
  annealPasses(limit = 1000): AnnealRow[] {
    const rows = this.db
      .prepare(
        `SELECT m.id, m.text, m.tags, m.created_at, m.faded,
                (SELECT o.source FROM observations o WHERE o.memory_id = m.id ORDER BY o.id LIMIT 1) AS source
           FROM memories m WHERE m.category = 'anneal' AND ${seenSql(this.agent, 'm')} ORDER BY m.created_at, m.id LIMIT ?`,
      )
      .all(limit) as Array<{ id: number; text: string; tags: string; created_at: string; faded: number; source: string | null }>;
    return rows.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[], faded: !!r.faded }));
  }
}
