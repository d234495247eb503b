// Renders deploy/systemd/* with the real paths of this install. `install` writes the files and
// prints the systemctl line to run; the command starts only the dry tick (nightshift-check.service).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Agent } from '../config/agents.js';
import type { Config } from '../config/schema.js';
import { passwdEntry } from '../core/passwd.js';
import { NODE_FLAGS } from '../core/node-flags.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TEMPLATES = path.join(ROOT, 'deploy', 'systemd');
export const UNIT_FILES = [
  'nightshift.service', 'nightshift.timer', 'nightshift-daemon.service', 'nightshift-alert@.service', 'nightshift-watch.service', 'nightshift-watch.timer',
  'nightshift-check.service',
] as const;

// `unitDir`: the folder the units will be read from (nightshift-alert.sh is written beside them).
export type RenderOptions = { user?: string; onCalendar?: string; watchOnCalendar?: string; node?: string; path?: string; unitDir?: string };

// The alarm's shell path (deploy/systemd/nightshift-alert.sh), written beside the units so that it
// outlives a broken or deleted nightshift install.
export const ALERT_SCRIPT = 'nightshift-alert.sh';
// Beside the env file, 0600: what nightshift-alert.sh needs and cannot read from the config
// without nightshift (the monitor's ping URL, a secret; Discord's API base). Never in a unit's
// text: units are 0644, readable by every user.
export const monitorEnvFile = (c: Config) => path.join(c.dir, 'nightshift-monitor.env');

// systemd's own PATH for system units (systemd.exec(5), split-usr): where a bare claude.command is
// looked up when the unit names no PATH.
export const SYSTEMD_DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
// Where `systemd install` writes the units unless --prefix says elsewhere, and so where doctor,
// `next` and `status` look for the installed ones.
export const UNIT_DIR = '/etc/systemd/system';
// The folders systemd reads system units from: units written elsewhere are only staged.
export const SYSTEM_UNIT_DIRS = ['/etc/systemd/system', '/run/systemd/system', '/usr/local/lib/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system'];

const executable = (p: string) => {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

// The folder of PATH a bare command is found in (not followed through links: an nvm or --prefix
// bin folder holds a link into its package), or null.
export function foundIn(command: string, pathEnv: string): string | null {
  if (command.includes('/')) return executable(command) ? path.dirname(command) : null;
  return pathEnv.split(':').filter((d) => d.startsWith('/')).find((d) => executable(path.join(d, command))) ?? null;
}

// The PATH the units run with: the CLI's folder as found now (a bare claude.command), this node's
// (the CLI's `#!/usr/bin/env node` needs it), then systemd's own. `problem`: the units could not
// start the CLI, said with why.
export function unitPath(command: string, installPath: string, node: string): { path: string; problem: string | null } {
  const dir = foundIn(command, installPath);
  const dirs = [...new Set([...(dir && !command.includes('/') ? [dir] : []), path.dirname(node), ...SYSTEMD_DEFAULT_PATH.split(':')])];
  const out = dirs.join(':');
  if (!dir) {
    const where = command.includes('/') ? `${command} is not an executable file` : `\`${command}\` is not on this shell's PATH (${installPath || 'empty'})`;
    return { path: out, problem: `claude.command: ${where}, so the units could not start it either: install Claude Code (npm i -g @anthropic-ai/claude-code), or set claude.command to its absolute path` };
  }
  let real = path.join(dir, path.basename(command));
  try {
    real = fs.realpathSync(real);
  } catch {
    // found above; raced away
  }
  if (/^\/(var\/)?tmp(\/|$)/.test(real)) return { path: out, problem: `claude.command: ${real} is under /tmp or /var/tmp, which the units' PrivateTmp= hides from them: install it elsewhere (e.g. npm i -g, or under /opt)` };
  return { path: out, problem: null };
}

// How a path is written into a unit (systemd.syntax(7), systemd.exec(5)). `%` starts a specifier in
// every setting we write one into. ExecStart=, Environment= and ReadWritePaths= split their value
// into words at whitespace and unquote "..." with C escapes; ExecStart= also expands $VAR. A word
// is quoted only when it must be. WorkingDirectory= and EnvironmentFile= take the rest of the line
// as it is: quotes there are part of the path (systemd-analyze verify: "path is not absolute").
const specifiers = (s: string) => s.replace(/%/g, '%%');
export function unitWord(s: string, exec = false): string {
  const v = exec ? specifiers(s).replace(/\$/g, '$$$$') : specifiers(s);
  return /[\s"'\\]/.test(v) ? `"${v.replace(/["\\]/g, '\\$&')}"` : v;
}
const unitVerbatim = specifiers;

// What no quoting carries into every setting a path goes in: a control character (a newline ends
// the setting), and whitespace at the end (systemd strips it where the path is taken as it is).
export function unitPathProblems(paths: Array<[string, string]>): string[] {
  return paths
    .filter(([, p]) => /[\x00-\x1f\x7f]/.test(p) || /\s$/.test(p))
    .map(([key, p]) => `${key} ${JSON.stringify(p)} ${/[\x00-\x1f\x7f]/.test(p) ? 'holds a control character' : 'ends in whitespace'}, which a unit file cannot carry: move it to a path without`);
}

// Pure: the value of the last `Environment=PATH=` a unit's text sets (either form unitWord writes), or null.
export function unitPathSetting(text: string): string | null {
  const set = [...text.matchAll(/^[ \t]*Environment[ \t]*=[ \t]*("PATH=(?:[^"\\\n]|\\.)*"|PATH=\S*)[ \t]*$/gm)].at(-1);
  if (!set) return null;
  const word = set[1].startsWith('"') ? set[1].slice(1, -1).replace(/\\(.)/g, '$1') : set[1];
  return word.slice('PATH='.length).replace(/%%/g, '%');
}

// The PATH an installed unit runs with: its Environment=PATH=, else systemd's own; null: no unit.
export function installedUnitPath(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  return unitPathSetting(text) ?? SYSTEMD_DEFAULT_PATH;
}

// The OnCalendar= of an installed timer as systemd reads it: the file, then its drop-ins
// (<file>.d/*.conf, in name order), where an empty OnCalendar= clears what came before. Null:
// none installed.
export function installedTimer(file: string): { file: string; specs: string[] } | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const dropIns = (() => {
    try {
      return fs.readdirSync(`${file}.d`).filter((f) => f.endsWith('.conf')).sort().map((f) => fs.readFileSync(path.join(`${file}.d`, f), 'utf8'));
    } catch {
      return [];
    }
  })();
  let specs: string[] = [];
  for (const t of [text, ...dropIns]) {
    for (const m of t.matchAll(/^[ \t]*OnCalendar[ \t]*=[ \t]*(.*?)[ \t]*$/gm)) specs = m[1] ? [...specs, m[1]] : [];
  }
  return { file, specs };
}

const seconds = (ms: number) => `${Math.ceil(ms / 1000)}s`;

// What a root service keeps of its capabilities: enough to hand each session to session_user
// (measured: see the comment in deploy/systemd/nightshift.service). A service user keeps none.
export const ROOT_CAPABILITIES = 'CAP_SETUID CAP_SETGID CAP_CHOWN CAP_DAC_OVERRIDE CAP_KILL';

// Paths the service writes: the vault, state, logs and the git lock's folder, each once.
function writablePaths(c: Config): string[] {
  const all = [c.vault, c.state_dir, c.log_dir, path.dirname(c.git.lock_file)].map((p) => path.resolve(p));
  return [...new Set(all)].filter((p, _, xs) => !xs.some((q) => q !== p && p.startsWith(`${q}/`)));
}

// PrivateTmp= gives each unit its own /tmp and /var/tmp, so a vault, state or log folder under
// either is hidden from it (the unit fails with 226/NAMESPACE). One line per such folder.
export function privateTmpWarnings(c: Config): string[] {
  const under = (p: string) => /^\/(var\/)?tmp(\/|$)/.test(path.resolve(p));
  return ([['vault', c.vault], ['state_dir', c.state_dir], ['log_dir', c.log_dir], ['git.lock_file', c.git.lock_file]] as const)
    .filter(([, p]) => under(p))
    .map(([key, p]) => `warning: ${key} ${path.resolve(p)} is under /tmp or /var/tmp, which the units' PrivateTmp= hides from them: move it (e.g. under /srv or /var/lib)`);
}

// A remote on this host (a path, or file://) that the units cannot write: ProtectSystem= makes it
// read-only unless ReadWritePaths= names it, and every push fails ("remote unpack failed"). null:
// not a path, or writable to them.
export function pathRemoteWarning(c: Config, remote: string, url: string | null): string | null {
  if (!url) return null;
  const local = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : /^[a-z][a-z0-9+.-]*:\/\/|^[^/]+:/i.test(url) ? null : url;
  if (local === null) return null;
  const at = path.resolve(c.vault, local);
  if (writablePaths(c).some((p) => at === p || at.startsWith(`${p}/`))) return null;
  return `warning: git remote \`${remote}\` is ${at}, outside the units' ReadWritePaths= (${writablePaths(c).join(' ')}): every push from the units fails there ("remote unpack failed"); move the remote under one of them, or use a URL (ssh://, https://)`;
}

export function renderUnits(c: Config, agents: Agent[], o: RenderOptions = {}): Array<{ name: string; text: string }> {
  const longest = Math.max(c.claude.timeout, ...agents.map((a) => a.timeoutMs));
  const user = o.user ?? os.userInfo().username;
  const node = o.node ?? process.execPath;
  const unitPathEnv = o.path ?? unitPath(c.claude.command, process.env.PATH ?? '', node).path;
  const values: Record<string, string> = {
    DOC_URL: specifiers(pathToFileURL(path.join(ROOT, 'README.md')).href),
    USER: user,
    CAPABILITIES: user === 'root' ? ROOT_CAPABILITIES : '',
    WORKDIR: unitVerbatim(c.dir),
    ENV_FILE: unitVerbatim(path.join(c.dir, 'nightshift.env')),
    MONITOR_ENV_FILE: unitVerbatim(monitorEnvFile(c)),
    ALERT_SH: unitWord(path.join(o.unitDir ?? UNIT_DIR, ALERT_SCRIPT), true),
    ENV_CONFIG: unitWord(`NIGHTSHIFT_CONFIG=${c.file}`),
    ENV_PATH: unitWord(`PATH=${unitPathEnv}`),
    ENV_CLAUDE_CONFIG_DIR: unitWord(`CLAUDE_CONFIG_DIR=${path.join(c.state_dir, 'claude')}`),
    CONFIG: unitWord(c.file, true),
    NODE: unitWord(node, true),
    NODE_FLAGS: NODE_FLAGS.map((f) => unitWord(f)).join(' '),
    BIN: unitWord(path.join(ROOT, 'dist', 'cli', 'bin.js'), true),
    SESSION_TIMEOUT: seconds(longest),
    // Session, kill grace, two git lock waits and a margin.
    TIMEOUT_START: seconds(longest + c.claude.kill_grace + 2 * c.git.lock_timeout + 5 * 60_000),
    TIMEOUT_STOP: seconds(c.daemon.shutdown_grace + c.claude.kill_grace + 30_000),
    RW_PATHS: writablePaths(c).map((p) => unitWord(p)).join(' '),
    // For the alert and watch units: a missing folder (`-`) must not stop the report of it.
    RW_PATHS_OPTIONAL: writablePaths(c).map((p) => unitWord(`-${p}`)).join(' '),
    ON_CALENDAR: o.onCalendar ?? 'hourly',
    WATCH_ON_CALENDAR: o.watchOnCalendar ?? '*-*-* *:17:00',
  };
  return UNIT_FILES.map((name) => {
    const text = fs.readFileSync(path.join(TEMPLATES, name), 'utf8').replace(/\{\{([A-Z_]+)\}\}/g, (m, key: string) => {
      if (!(key in values)) throw new Error(`unknown placeholder ${m} in ${name}`);
      return values[key];
    });
    return { name, text };
  });
}

export function installUnits(units: Array<{ name: string; text: string }>, prefix: string): string[] {
  fs.mkdirSync(prefix, { recursive: true });
  const all = [...units, { name: ALERT_SCRIPT, text: fs.readFileSync(path.join(TEMPLATES, ALERT_SCRIPT), 'utf8') }];
  return all.map((u) => {
    const file = path.join(prefix, u.name);
    fs.writeFileSync(file, u.text, { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    return file;
  });
}

// Pure: the monitor env file's text. Values are single words (a URL), so systemd's EnvironmentFile=
// reads them as they are.
export function monitorEnvText(c: Config): string {
  const line = (k: string, v: string | undefined) => (v && !/[\s"'\\]/.test(v) ? `${k}=${v}` : `# ${k}: not set`);
  return [
    '# Written by `nightshift systemd install` from the config, for nightshift-alert.sh; 0600 (the ping URL is a secret).',
    line('NIGHTSHIFT_PING_URL', c.monitor.ping_url),
    line('NIGHTSHIFT_DISCORD_API', c.discord.api_base),
    line('NIGHTSHIFT_WEBHOOK_FORMAT', c.webhook.format),
    '',
  ].join('\n');
}

// Written 0600 (owned by whoever installs: systemd reads EnvironmentFile= as root, before it
// drops to the units' user).
export function writeMonitorEnv(c: Config): string {
  const file = monitorEnvFile(c);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, monitorEnvText(c), { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
  return file;
}

// A ReadWritePaths= entry that does not exist fails the unit with 226/NAMESPACE, so `install`
// makes the missing folders, owned by the service user when it runs as root. Folders that exist
// are left as they are. Returns one line per folder made, and warnings.
export function makeWritablePaths(c: Config, user = os.userInfo().username, passwd?: string): { made: string[]; warnings: string[] } {
  const made: string[] = [];
  const warnings: string[] = [];
  const owner = process.getuid?.() === 0 ? passwdEntry(user, passwd) : null;
  if (process.getuid?.() === 0 && !owner) warnings.push(`warning: user ${user} has no entry in /etc/passwd: the folders made are owned by root; chown them to the service user`);
  for (const p of writablePaths(c)) {
    if (fs.existsSync(p)) {
      const uid = fs.statSync(p).uid;
      if (owner && uid !== owner.uid) warnings.push(`warning: ${p} is owned by uid ${uid}, not ${user}: the units write there as ${user}; chown it unless its mode lets them`);
      continue;
    }
    const first = fs.mkdirSync(p, { recursive: true }) ?? p;
    // Every folder made, from the first one down to p.
    for (let d = p; ; d = path.dirname(d)) {
      if (owner) fs.chownSync(d, owner.uid, owner.gid);
      if (d === first || d === path.dirname(d)) break;
    }
    made.push(p);
  }
  return { made, warnings };
}
