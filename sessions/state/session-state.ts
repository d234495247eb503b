// The state a session starts with: gathered, rendered within state.max_chars, written to
// `<vault>/.nightshift/session-state.md` (kept out of the vault's commits through
// `.git/info/exclude`, never the user's .gitignore) and beside the transcript. Never throws: a
// session without its state still runs, and the reason is logged.
import { giveToFolderOwner } from '../../core/file-access.js';
import fs from 'node:fs';
import path from 'node:path';
import type { Ledger } from '../../budget/ledger.js';
import type { Config } from '../../config/schema.js';
import { addExcludes, OWN_DIR, OWN_EXCLUDE } from '../../vault/info-exclude.js';
import { cleanDerived } from '../../memory/text/text-hygiene.js';
import { gatherState } from './state-data.js';
import { injectedMemories, renderState, type RenderedState } from './state.js';

export const STATE_DIR = OWN_DIR;
export const STATE_FILE = 'session-state.md';
const EXCLUDE_LINE = OWN_EXCLUDE;

type Log = { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };

const isLink = (p: string) => {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
};

// Where the state of session `id` is kept beside its transcript.
export const stateBesideTranscript = (transcript: string) => transcript.replace(/\.jsonl$/, '') + '.state.md';

// Adds `/.nightshift/` to the vault's .git/info/exclude whenever the vault is a repository
// nightshift trusts, git sync on or off: a state written while git was off must not be tracked
// once it is turned on (vault/info-exclude.ts: never through a link).
export async function excludeStateDir(config: Pick<Config, 'vault' | 'state_dir' | 'git'>, onlyWithGit = false): Promise<boolean> {
  if (onlyWithGit && !config.git.enabled) return false;
  return addExcludes(config.vault, config.state_dir, "# nightshift's session state", [OWN_EXCLUDE]);
}

export type SessionStateInput = {
  config: Config;
  agent: { name: string; maxRunsPerDay: number | null };
  sessionId: string;
  ledger: Ledger;
  now: Date;
  transcript: string;
  redact: (text: string) => string;
  logger: Log;
  // Test-only: the exclude written only while git.enabled, as before (the negative control).
  excludeOnlyWithGit?: boolean;
  // Whether the vault is a git work tree, as the session just asked (state-data.ts's GatherInput).
  repo?: boolean;
};

// The rendered state, written where the session and the operator find it; null when it could not
// be built (logged).
export async function prepareSessionState(i: SessionStateInput): Promise<RenderedState | null> {
  try {
    const data = await gatherState({ config: i.config, agent: i.agent, sessionId: i.sessionId, unattended: true, ledger: i.ledger, now: i.now, redact: i.redact, repo: i.repo });
    const state = renderState(data, i.config.state.max_chars);
    state.injected = injectedMemories(data, state.text);
    // Whatever an older version let into the store, the session's system prompt holds text only.
    state.text = cleanDerived(state.text);
    await excludeStateDir(i.config, i.excludeOnlyWithGit).catch((err) => i.logger.warn({ event: 'state_exclude_failed', err }, `could not add ${EXCLUDE_LINE} to .git/info/exclude: ${(err as Error).message}`));
    const dir = path.join(i.config.vault, STATE_DIR);
    // The vault is the session's: a link planted at the folder or the file is replaced, never
    // written through.
    if (isLink(dir)) fs.rmSync(dir, { force: true });
    fs.mkdirSync(dir, { recursive: true });
    const tmp = path.join(dir, `.${STATE_FILE}.${process.pid}.tmp`);
    fs.rmSync(tmp, { force: true });
    fs.writeFileSync(tmp, `${state.text}\n`, { flag: 'wx' });
    fs.renameSync(tmp, path.join(dir, STATE_FILE));
    fs.writeFileSync(stateBesideTranscript(i.transcript), `${state.text}\n`);
    giveToFolderOwner(stateBesideTranscript(i.transcript));
    i.logger.info({ event: 'session_state', chars: state.chars, max_chars: state.maxChars, cut: state.cut }, `session state: ${state.chars} chars${state.cut.length ? `, cut: ${state.cut.map((c) => c.section).join(', ')}` : ''}`);
    return state;
  } catch (err) {
    i.logger.warn({ event: 'session_state_failed', err }, `session state not built: ${i.redact((err as Error)?.message ?? String(err))}`);
    return null;
  }
}
