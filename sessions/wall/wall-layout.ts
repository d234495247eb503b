// What a walled session may see and write: the vault and the extra dirs, its own folder as HOME;
// the supervisor's state, logs, config, env files, memory store and sockets hidden; the vault's
// push credentials and the CLI's user settings replaced by files of ours.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/schema.js';
import { ENV_FILE_VAR } from '../../config/env-file.js';
import { outOfReach, type SessionUser } from '../../config/session-user.js';
import type { Logger } from '../../logs/logger.js';
import { memoryDbPath } from '../../memory/store/db-path.js';
import { WALL_API } from './bridge.js';
import { withoutCredentials } from './git-credentials.js';
import { resolveCommand, type SandboxLayout } from './sandbox.js';

// The folder to bind read-only so the CLI runs from under a hidden one: its package, or its folder.
export function cliRoot(real: string): string {
  for (let d = path.dirname(real); d !== path.dirname(d); d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'package.json'))) return d;
  }
  return path.dirname(real);
}

// What a session sees of the host, read-only, and nothing more: the system's programs and
// libraries, the parts of /etc they read, the CLI's and node's installs. A read-only view of all of
// `/` left every world-connectable unix socket of the host in reach (connect() writes nothing: a
// service's 0777 socket under /var/lib answered with its secret), and Landlock scopes abstract
// sockets only (ABI 6 and up), never a path one. Left out: credentials an operator keeps in /etc
// (npmrc, pip.conf, ssh host keys), and everything under /var, /srv, /opt, /home, /root, /mnt, /sys.
export const SYSTEM_VIEW = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
export const ETC_VIEW = [
  // users, names and the network's own files
  'passwd', 'group', 'nsswitch.conf', 'hosts', 'host.conf', 'gai.conf', 'resolv.conf', 'services', 'protocols', 'networks',
  // TLS roots, the dynamic linker, Debian's alternatives (links /usr/bin goes through)
  'ssl', 'ca-certificates', 'ca-certificates.conf', 'pki', 'crypto-policies', 'alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d',
  // time, shells, locale, the system's name, file types
  'localtime', 'timezone', 'bash.bashrc', 'profile', 'profile.d', 'environment', 'inputrc', 'shells', 'locale.alias', 'locale.conf',
  'os-release', 'lsb-release', 'debian_version', 'mime.types', 'magic', 'magic.mime', 'terminfo', 'mtab',
  // the tools' own system-wide settings, and the CLI's managed policy
  'gitconfig', 'python3', 'perl', 'wgetrc', 'ssh/ssh_config', 'ssh/ssh_config.d', 'claude-code',
].map((e) => `/etc/${e}`);

// The folder an executable was installed into: `<root>/bin/x` gives `<root>` (/opt/node/bin/node).
export function installRoot(real: string): string {
  const dir = path.dirname(real);
  return path.basename(dir) === 'bin' && path.dirname(dir) !== '/' ? path.dirname(dir) : dir;
}

// Pure: the host's paths a session sees (missing ones are skipped where the mounts are made).
export function hostView(cliRootDir: string | null, node: string | null): string[] {
  return [...SYSTEM_VIEW, ...ETC_VIEW, ...(cliRootDir ? [cliRootDir] : []), ...(node ? [installRoot(node)] : [])];
}

// The view as doctor says it: what of the host a walled session sees, the missing paths left out.
export function describeView(view: string[], exists: (p: string) => boolean = (p) => fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined): string {
  const there = view.filter(exists);
  const etc = there.filter((p) => p.startsWith('/etc/')).length;
  const rest = there.filter((p) => !p.startsWith('/etc/') && !SYSTEM_VIEW.includes(p));
  return `of the host a session sees ${there.filter((p) => SYSTEM_VIEW.includes(p)).join(', ')}, ${etc} entries of /etc${rest.length ? `, ${rest.join(', ')}` : ''} (read-only), the vault and the extra dirs; nothing else (no /var, /srv, /home, /run)`;
}

// Pure apart from existence checks: what the session may see and write.
export function layoutFor(config: Config, env: NodeJS.ProcessEnv, dir: string, home: string, cli: string | null, operatorHome: string | null): SandboxLayout {
  // A rehearsal's session sees the real site's folders no more than a real session sees its state.
  const hidden = [config.state_dir, config.log_dir, '/run', ...(config.rehearsal?.hide ?? [])];
  for (const h of [operatorHome, env.HOME]) if (h && path.resolve(h) !== '/' && path.resolve(h) !== path.resolve(config.vault)) hidden.push(h);
  const db = memoryDbPath(config);
  const memoryDir = path.dirname(db);
  const vaultInside = (d: string) => path.resolve(config.vault) === path.resolve(d) || path.resolve(config.vault).startsWith(`${path.resolve(d)}/`);
  // Every env file: the one beside the config and the one the supervisor read (--environment-file).
  const hiddenFiles = [config.file, path.join(config.dir, 'nightshift.env'), config.git.lock_file, ...(env[ENV_FILE_VAR] ? [path.resolve(env[ENV_FILE_VAR]!)] : [])];
  if (vaultInside(memoryDir)) hiddenFiles.push(...['', '-wal', '-shm', '-journal'].map((s) => db + s));
  else hidden.push(memoryDir);
  const readable: string[] = [];
  if (cli) readable.push(cliRoot(cli));
  // DNS for the session's own tools, where resolv.conf lives under the hidden /run.
  try {
    readable.push(fs.realpathSync('/etc/resolv.conf'));
  } catch {
    // no resolv.conf
  }
  // node for the session's own tools (and a CLI that is a node script), as the session's PATH finds it.
  const view = hostView(cli ? cliRoot(cli) : null, resolveCommand('node', env.PATH ?? ''));
  return { vault: config.vault, writable: config.hooks.extra_dirs, hidden, hiddenFiles, readable, view, sessionDir: dir, home, tmpBytes: config.limits.tmp, apiDir: WALL_API.dir };
}

// The vault's .git/config as the session sees it, when the real one holds push credentials.
function gitConfigOverlay(vault: string, dir: string, log: Pick<Logger, 'warn'>): Array<{ source: string; target: string }> {
  // A session's worktree has a `.git` file: its repository's config is out of its sight anyway.
  if (!fs.lstatSync(path.join(vault, '.git'), { throwIfNoEntry: false })?.isDirectory()) return [];
  const target = path.join(vault, '.git', 'config');
  const st = fs.lstatSync(target, { throwIfNoEntry: false });
  if (!st?.isFile()) return [];
  const clean = withoutCredentials(fs.readFileSync(target, 'utf8'));
  if (!clean.found.length) return [];
  const source = path.join(dir, 'git-config');
  fs.writeFileSync(source, clean.text, { mode: 0o600 });
  log.warn({ event: 'git_credentials_hidden', found: clean.found }, `the vault's .git/config holds ${clean.found.join(' and ')}: hidden from the session (move them to a credential helper: see doctor)`);
  return [{ source, target }];
}

// The CLI's user settings live in the session's own HOME, which the session writes, and the CLI
// reloads them mid-session (measured, 2.1.197: an `env` there dropped CLAUDE_CODE_SHELL_PREFIX
// for the next command). So the file is empty and read-only, and its folder a mount point of its
// own, which cannot be renamed away and made again.
function pinUserSettings(layout: SandboxLayout, home: string): void {
  const dir = path.join(home, '.claude');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'settings.json');
  fs.writeFileSync(file, '{}\n', { mode: 0o400 });
  layout.writable = [...layout.writable, dir];
  layout.overlays = [...(layout.overlays ?? []), { source: file, target: file }];
}

export type WallLayoutInput = {
  config: Config;
  // The supervisor's environment (the env file it read is hidden too).
  env: NodeJS.ProcessEnv;
  dir: string;
  home: string;
  cli: string;
  operatorHome: string | null;
  log: Pick<Logger, 'warn'>;
  walledAs: SessionUser | null;
  // false: the CLI's user settings stay writable (the test-only control).
  pinSettings: boolean;
  // The supervisor's sockets, when the bridge alone holds them (else null).
  hideSockets: string | null;
  // false: the whole host read-only in sight (the test-only control of the view).
  hostView?: boolean;
};

// The layout with its overlays written into the session's folder.
export function wallLayout(o: WallLayoutInput): SandboxLayout {
  const layout = { ...layoutFor(o.config, o.env, o.dir, o.home, o.cli, o.operatorHome), overlays: gitConfigOverlay(o.config.vault, o.dir, o.log) };
  if (o.hostView === false) delete layout.view;
  if (o.pinSettings) pinUserSettings(layout, o.home);
  // What the session user cannot reach is hidden already (an env file in a folder of root's).
  const walledAs = o.walledAs;
  if (walledAs) {
    layout.hidden = layout.hidden.filter((p) => !outOfReach(p, walledAs));
    layout.hiddenFiles = layout.hiddenFiles.filter((p) => !outOfReach(p, walledAs));
    // Nor can bwrap, started as that user, bind what lies beyond its reach into sight: a node
    // on PATH in root's 0700 home (a clone's own Node) stays out of the view, /usr's in it.
    if (layout.view) layout.view = layout.view.filter((p) => !outOfReach(p, walledAs));
  }
  // The supervisor's sockets are out of the session's sight (a path socket answers through the
  // read-only bind): the bridge gets their folder as a descriptor.
  if (o.hideSockets) layout.hidden = [...layout.hidden, o.hideSockets];
  return layout;
}
