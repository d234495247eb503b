// A read-only view of the memory store for the session state: the identity candidates (active,
// confirmed beliefs and values by salience), which the store has no list for. Its own read-only connection,
// so it never writes and never waits on a writer. Faded and superseded memories are never
// returned. It knows nothing of sessions.
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { checkFile } from './schema.js';

export type IdentityCandidate = { id: number; text: string; category: string; salience: number };

export class StateView {
  private constructor(private readonly db: Database.Database) {}

  /** Null when there is no store yet; throws MemoryError for a file that is not ours or is corrupt. */
  static open(file: string): StateView | null {
    if (!fs.existsSync(file) || !checkFile(file)) return null;
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 2000');
    return new StateView(db);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  // Active, confirmed beliefs and values, most salient first: an agent's unconfirmed claim is not
  // who the agent is (memory/claims.ts).
  identityCandidates(limit: number): IdentityCandidate[] {
    return this.db
      .prepare(`SELECT id, text, category, salience FROM memories WHERE faded = 0 AND superseded_by IS NULL AND confirmed = 1 AND category IN ('belief', 'value') ORDER BY salience DESC, id DESC LIMIT ?`)
      .all(limit) as IdentityCandidate[];
  }
}
