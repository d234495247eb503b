// Renders deploy/systemd/* with the real paths of this install. `install` writes the files and
// prints the systemctl line to run; it never runs systemctl itself.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Agent } from './config/agents.js';
import type { Config } from './config/schema.js';
import { passwdEntry } from './passwd.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TEMPLATES = path.join(ROOT, 'deploy', 'systemd');
export const UNIT_FILES = [
  'nightshift.service', 'nightshift.timer', 'nightshift-daemon.service', 'nightshift-alert@.service', 'nightshift-watch.service', 'nightshift-watch.timer',
] as const;

export type RenderOptions = { user?: string; onCalendar?: string; watchOnCalendar?: string; node?: string; path?: string };

// systemd's own PATH for system units (systemd.exec(5), split-usr): where a bare claude.command is
// looked up when the unit names no PATH.
export const SYSTEMD_DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
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

// The PATH an installed unit runs with: its Environment=PATH=, else systemd's own; null: no unit.
export function installedUnitPath(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const set = [...text.matchAll(/^\s*Environment\s*=\s*"?PATH=([^"\n]*?)"?\s*$/gm)].at(-1);
  return set ? set[1] : SYSTEMD_DEFAULT_PATH;
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

export function renderUnits(c: Config, agents: Agent[], o: RenderOptions = {}): Array<{ name: string; text: string }> {
  const longest = Math.max(c.claude.timeout, ...agents.map((a) => a.timeoutMs));
  const user = o.user ?? os.userInfo().username;
  const values: Record<string, string> = {
    ROOT,
    USER: user,
    CAPABILITIES: user === 'root' ? ROOT_CAPABILITIES : '',
    WORKDIR: c.dir,
    ENV_FILE: path.join(c.dir, 'nightshift.env'),
    CONFIG: c.file,
    STATE_DIR: c.state_dir,
    NODE: o.node ?? process.execPath,
    PATH: o.path ?? unitPath(c.claude.command, process.env.PATH ?? '', o.node ?? process.execPath).path,
    BIN: path.join(ROOT, 'dist', 'cli', 'bin.js'),
    SESSION_TIMEOUT: seconds(longest),
    // Session, kill grace, two git lock waits and a margin.
    TIMEOUT_START: seconds(longest + c.claude.kill_grace + 2 * c.git.lock_timeout + 5 * 60_000),
    TIMEOUT_STOP: seconds(c.daemon.shutdown_grace + c.claude.kill_grace + 30_000),
    RW_PATHS: writablePaths(c).join(' '),
    // For the alert and watch units: a missing folder (`-`) must not stop the report of it.
    RW_PATHS_OPTIONAL: writablePaths(c).map((p) => `-${p}`).join(' '),
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
  return units.map((u) => {
    const file = path.join(prefix, u.name);
    fs.writeFileSync(file, u.text, { mode: 0o644 });
    return file;
  });
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
