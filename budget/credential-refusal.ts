// A key the API refused today (a 401 the proxy relayed from upstream): marked in state_dir so the
// next start refuses before the pull and the charge, instead of reserving a session that can only
// fail the same way. The mark keeps a short hash of the credential, never the credential, and the
// env file's identity then (inode and mtime: said in the message when it changed since). A changed
// key does not match, so the mark clears itself; the next day, or `nightshift hold release`, too.
// One small file, replaced whole (written aside, then renamed).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export type RefusalMark = {
  fingerprint: string;
  // api_key, oauth or auth_token: which variable held it.
  kind: string;
  at: string;
  // The budget day (budget.timezone) the key was refused on.
  day: string;
  session: string | null;
  env_file: string | null;
  env_ino: number | null;
  env_mtime_ms: number | null;
};

export const refusalFile = (stateDir: string) => path.join(stateDir, 'credential-refused.json');

// Pure: 16 hex digits of a salted SHA-256: tells keys apart, and gives nothing of the key away.
export function credentialFingerprint(value: string): string {
  return createHash('sha256').update(`nightshift-credential\0${value.trim()}`).digest('hex').slice(0, 16);
}

// The env file's identity (null fields when there is none).
export function envFileIdentity(file: string | null): { env_file: string | null; env_ino: number | null; env_mtime_ms: number | null } {
  if (!file) return { env_file: null, env_ino: null, env_mtime_ms: null };
  try {
    const st = fs.statSync(file);
    return { env_file: file, env_ino: st.ino, env_mtime_ms: Math.floor(st.mtimeMs) };
  } catch {
    return { env_file: file, env_ino: null, env_mtime_ms: null };
  }
}

// The mark, or null: none, or one that cannot be read (it only saves a failing session; a damaged
// one must not stop a good key).
export function readRefusal(stateDir: string): RefusalMark | null {
  try {
    const m = JSON.parse(fs.readFileSync(refusalFile(stateDir), 'utf8')) as Partial<RefusalMark>;
    if (typeof m.fingerprint !== 'string' || typeof m.day !== 'string' || typeof m.at !== 'string') return null;
    return { kind: 'api_key', session: null, env_file: null, env_ino: null, env_mtime_ms: null, ...m } as RefusalMark;
  } catch {
    return null;
  }
}

export function writeRefusal(stateDir: string, mark: RefusalMark): void {
  fs.mkdirSync(stateDir, { recursive: true });
  const file = refusalFile(stateDir);
  const aside = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(aside, `${JSON.stringify(mark, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(aside, file);
}

// Removes the mark; returns what it said (null: there was none).
export function clearRefusal(stateDir: string): RefusalMark | null {
  const mark = readRefusal(stateDir);
  try {
    fs.unlinkSync(refusalFile(stateDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return mark;
}

// Pure: whether this start is refused. The same credential (by its hash), refused on this budget
// day. Anything else (another key, another day, no mark) starts as usual.
export function refusedKeyVerdict(mark: RefusalMark | null, now: { fingerprint: string; day: string }): RefusalMark | null {
  return mark && mark.fingerprint === now.fingerprint && mark.day === now.day ? mark : null;
}

// Pure: the refusal in words: the env file, when the key was refused, and the fixes.
export function refusedKeyMessage(mark: RefusalMark, o: { envFile: string; agent: string; hhmm: string; envNow: { env_ino: number | null; env_mtime_ms: number | null } }): string {
  const variable = mark.kind === 'oauth' ? 'CLAUDE_CODE_OAUTH_TOKEN' : mark.kind === 'auth_token' ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_API_KEY';
  const changed = mark.env_ino !== null && (mark.env_ino !== o.envNow.env_ino || mark.env_mtime_ms !== o.envNow.env_mtime_ms);
  return [
    `refused key: the API refused this ${variable} (401) at ${o.hhmm} today${mark.session ? ` (session ${mark.session})` : ''}, and it is still the one in use${changed ? ` (${o.envFile} changed since, but the key in use is the same one; a variable already in the environment wins over the file)` : ''}; nothing was started or charged.`,
    `Fix: put a valid ${variable} in ${o.envFile} (a changed key clears this by itself), or, once the key is fixed where it is set, \`nightshift hold release ${o.agent}\``,
  ].join(' ');
}

// HH:MM of an ISO time in a timezone.
export function hhmm(iso: string, timezone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
}
