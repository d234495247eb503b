// `<config folder>/nightshift.env` (or --environment-file: Node 20 takes `--env-file` anywhere in
// argv as its own flag, so ours cannot have that name) for every command, read the way systemd's
// EnvironmentFile= reads it, so a manual `nightshift run` or `doctor` sees what the units see. A
// variable already in the environment wins. A file holding secrets that its group or others may
// read is refused, as ssh refuses such a key: the fix is one chmod.
import fs from 'node:fs';
import path from 'node:path';
import { secretValues } from '../core/redact.js';
import { EnvFileError } from '../core/errors.js';

export const ENV_FILE_NAME = 'nightshift.env';

export type ParsedEnv = { vars: Record<string, string>; problems: string[] };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Pure: KEY=VALUE lines; `#` and `;` start a comment line; blank lines; a value in single quotes is
// taken as it is, in double quotes with \" \\ \n \t \$ \` read as escapes; unquoted, trimmed. A
// line that is none of these is a problem (systemd skips it with a warning; so do we).
export function parseEnvFile(text: string): ParsedEnv {
  const vars: Record<string, string> = {};
  const problems: string[] = [];
  // systemd joins a line ending in a backslash with the next; problems name the first line's number.
  const lines: Array<[string, number]> = [];
  let pending: [string, number] | null = null;
  text.split(/\r?\n/).forEach((l, i) => {
    const joined: [string, number] = pending ? [pending[0] + l, pending[1]] : [l, i];
    if (l.endsWith('\\')) pending = [joined[0].slice(0, -1), joined[1]];
    else (lines.push(joined), (pending = null));
  });
  if (pending) lines.push(pending);
  lines.forEach(([raw, i]) => {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) return;
    const eq = line.indexOf('=');
    const key = eq === -1 ? '' : line.slice(0, eq).trim();
    if (!NAME.test(key)) {
      problems.push(`line ${i + 1}: Expected KEY=VALUE with a variable name as KEY, got \`${line.slice(0, 40).replace(/=.*/, '=...')}\``);
      return;
    }
    let value = line.slice(eq + 1).trim();
    const q = value[0];
    if ((q === '"' || q === "'") && value.length >= 2 && value.endsWith(q)) {
      value = value.slice(1, -1);
      if (q === '"') value = value.replace(/\\(["\\$`nt])/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
    }
    vars[key] = value;
  });
  return { vars, problems };
}

// Pure: the names whose values redaction would treat as secret.
export function secretNames(vars: Record<string, string>): string[] {
  return Object.entries(vars).filter(([k, v]) => secretValues({ [k]: v }).length > 0).map(([k]) => k);
}

// Pure: the file's mode lets its group or others read it.
export const readableByOthers = (mode: number) => (mode & 0o044) !== 0;

// `insecure`: why the file was refused (only when not strict: doctor reports it as a check).
export type EnvFileResult = { file: string; loaded: string[]; problems: string[]; skipped: string | null; insecure: string | null };

// The supervisor's own note of the env file it read, so that the wall hides it wherever it lies.
export const ENV_FILE_VAR = 'NIGHTSHIFT_ENV_FILE';

// Where the env file is: --environment-file, else beside the config.
export function envFilePath(flag: string | undefined, configFile: string, cwd: string): string {
  return flag ? path.resolve(cwd, flag) : path.join(path.dirname(configFile), ENV_FILE_NAME);
}

// Reads the file into a copy of `env` (the environment wins). A missing file is nothing unless it
// was named with --environment-file; one this user may not read is skipped when not named (under systemd
// the service user runs with what systemd already read from a root-only file).
export function loadEnvFile(file: string, env: NodeJS.ProcessEnv, explicit: boolean, strict = true): { env: NodeJS.ProcessEnv; result: EnvFileResult } {
  const none = (skipped: string | null) => ({ env, result: { file, loaded: [], problems: [], skipped, insecure: null } });
  let text: string;
  let mode: number;
  try {
    mode = fs.statSync(file).mode;
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!explicit && (code === 'ENOENT' || code === 'EACCES' || code === 'EPERM' || code === 'ENOTDIR')) return none(code === 'ENOENT' ? 'not found' : `cannot be read (${code})`);
    throw new EnvFileError(file, [code === 'ENOENT' ? 'file not found' : `cannot read: ${code ?? String(err)}`], { cause: err });
  }
  const parsed = parseEnvFile(text);
  const secrets = secretNames(parsed.vars);
  const insecure = secrets.length && readableByOthers(mode)
    ? `its mode ${(mode & 0o777).toString(8).padStart(4, '0')} lets its group or others read the secrets in it (${secrets.join(', ')}); fix: chmod 600 ${file}`
    : null;
  if (insecure && strict) throw new EnvFileError(file, [insecure]);
  const out = { ...env };
  const loaded: string[] = [];
  for (const [k, v] of Object.entries(parsed.vars)) {
    if (out[k] !== undefined) continue;
    out[k] = v;
    loaded.push(k);
  }
  return { env: out, result: { file, loaded, problems: parsed.problems, skipped: null, insecure } };
}
