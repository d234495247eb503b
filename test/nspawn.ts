// A real systemd for a test: boots the host's own root as a throw-away container (systemd-nspawn
// --volatile=overlay), as ../shared/systemd-nspawn.md describes. Needs root and the Debian package
// systemd-container; `unavailable()` says why not, so a test can skip with the reason.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type Bind = { from: string; to: string; readOnly?: boolean };
export type Ran = { code: number | null; stdout: string; stderr: string };
export type Machine = {
  name: string;
  pid1: number;
  // A command inside the container (all its namespaces), with a clean environment.
  run(args: string[], opts?: { input?: string; timeoutMs?: number; env?: Record<string, string> }): Promise<Ran>;
  // Powers the container off and removes what the boot left on the host. Safe to call twice.
  stop(): Promise<void>;
};

const CONTAINER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

// Why a container cannot be booted here, or null when it can.
export function unavailable(): string | null {
  if (process.getuid?.() !== 0) return 'needs root (systemd-nspawn, mounts and cgroups)';
  for (const tool of ['systemd-nspawn', 'nsenter', 'mount']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed (Debian package ${tool === 'systemd-nspawn' ? 'systemd-container' : 'util-linux'})`;
  }
  if (!cgroupRoots().length) return 'no writable cgroup hierarchy under /sys/fs/cgroup';
  return null;
}

// The hierarchies nspawn's cgroup must be made in: the named systemd one and the unified one on a
// hybrid host, the root on a pure cgroup v2 host.
function cgroupRoots(): string[] {
  const hybrid = ['/sys/fs/cgroup/systemd', '/sys/fs/cgroup/unified'].filter((d) => fs.existsSync(path.join(d, 'cgroup.procs')));
  if (hybrid.length) return hybrid;
  return fs.existsSync('/sys/fs/cgroup/cgroup.controllers') ? ['/sys/fs/cgroup'] : [];
}

function exec(cmd: string, args: string[], opts: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { encoding: 'utf8', timeout: opts.timeoutMs ?? 60_000, env: opts.env ?? { PATH: process.env.PATH }, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr: `${stderr}${err && typeof err.code !== 'number' ? `\n${err.message}` : ''}` }));
    // A command that never reads its stdin may be gone before the write: no EPIPE from that.
    child.stdin?.on('error', () => {});
    child.stdin?.end(opts.input ?? '');
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function childPid(parent: number, comm: string): number | null {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const c = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && c === comm) return Number(name);
    } catch {
      // gone
    }
  }
  return null;
}

// Boots a container; resolves once its systemd says `running` or `degraded`.
export async function boot(binds: Bind[], log: (line: string) => void = () => {}): Promise<Machine> {
  const name = `ns-test-${randomBytes(4).toString('hex')}`;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-nspawn-'));
  const cgroups = cgroupRoots().map((r) => path.join(r, name));
  let nspawn: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let output = '';
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (nspawn && nspawn.exitCode === null && nspawn.signalCode === null) {
      nspawn.kill('SIGTERM');
      const done = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
      if (!done) {
        nspawn.kill('SIGKILL');
        await exited;
      }
    }
    if (spawnSync('umount', [root]).status !== 0) spawnSync('umount', ['-l', root]);
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(`/run/systemd/nspawn/propagate/${name}`, { recursive: true, force: true });
    // nspawn leaves payload/ and supervisor/ behind in the cgroup it started from: deepest first.
    for (const cg of cgroups) {
      const dirs: string[] = [];
      const walk = (d: string) => {
        if (!fs.existsSync(d)) return;
        for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
        dirs.push(d);
      };
      walk(cg);
      for (const d of dirs) {
        try {
          fs.rmdirSync(d);
        } catch (err) {
          log(`cannot remove cgroup ${d}: ${(err as Error).message}`);
        }
      }
    }
  };

  try {
    // nspawn refuses -D /: the host root, bound (non-recursively) to a folder, is the lower layer.
    const mounted = spawnSync('mount', ['--bind', '/', root], { encoding: 'utf8' });
    if (mounted.status !== 0) throw new Error(`mount --bind / ${root}: ${mounted.stderr}`);
    for (const cg of cgroups) fs.mkdirSync(cg);
    const args = [
      '-q', '-D', root, '--volatile=overlay', '--register=no', '--keep-unit', '--console=passive', '-M', name,
      ...binds.map((b) => `--bind${b.readOnly ? '-ro' : ''}=${b.from}:${b.to}`),
      // nspawn's own seccomp allowlist (systemd 252) lacks Landlock, which a host's systemd lacks
      // not: without it the units' walled sessions are refused here for the container's sake.
      '--system-call-filter=landlock_create_ruleset landlock_add_rule landlock_restrict_self',
      '-b',
    ];
    // The shell moves itself into the container's own cgroups, then becomes nspawn, in a mount
    // namespace of its own where the host's /proc has a mount on top (a read-only /proc/sys).
    // Without that, the host's /proc stays in the container's mount namespace, unreachable (nspawn
    // moves the new root over the old one), and its being fully visible lets any procfs mount in a
    // user namespace pass the kernel's mount_too_revealing() check: observed, bwrap's --proc then
    // worked in units whose /proc has mounts on top (ProtectKernelTunables=), though the same
    // overmount refuses it outside nspawn. Covered, the host's /proc no longer counts.
    const cover = 'mount --bind -o ro /proc/sys /proc/sys && exec systemd-nspawn "$@"';
    const script = `${cgroups.map((cg) => `echo $$ > ${cg}/cgroup.procs`).join(' && ')} && exec unshare --mount --propagation slave sh -c '${cover}' sh "$@"`;
    nspawn = spawn('sh', ['-c', script, 'sh', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
    nspawn.stdout!.on('data', (d) => (output += d));
    nspawn.stderr!.on('data', (d) => (output += d));
    exited = new Promise((r) => nspawn!.on('close', () => r()));

    let pid1: number | null = null;
    const deadline = Date.now() + 60_000;
    while (!pid1) {
      if (nspawn.exitCode !== null || nspawn.signalCode !== null) throw new Error(`systemd-nspawn ended (${nspawn.exitCode ?? nspawn.signalCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`no systemd in the container after 60 s:\n${output}`);
      await sleep(100);
      pid1 = childPid(nspawn.pid!, 'systemd');
    }
    const run: Machine['run'] = (cmd, opts = {}) =>
      exec('nsenter', ['-t', String(pid1), '-a', 'env', '-i', `PATH=${CONTAINER_PATH}`, ...Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`), ...cmd], opts);
    let state = '';
    while (!['running', 'degraded'].includes(state)) {
      if (Date.now() > deadline) throw new Error(`the container's systemd is \`${state}\` after 60 s:\n${output}`);
      await sleep(200);
      state = (await run(['systemctl', 'is-system-running'])).stdout.trim();
    }
    log(`booted ${name} (pid 1 on the host: ${pid1}, state ${state})`);
    return { name, pid1, run, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
