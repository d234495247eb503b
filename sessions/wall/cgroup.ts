// The I/O of the session's bounds (./bounds.ts decides): the facts read from /proc and
// /sys/fs/cgroup, and a session's own cgroup, its "cell": made with the limits written before the
// CLI starts, the CLI moved in before it can fork (the runner's gate), its counters read while it
// runs, and everything left in it killed when the session is over.
import fs from 'node:fs';
import path from 'node:path';
import { boundReached, counter, planBounds, rlimitArgs, type BoundsFacts, type BoundsPlan, type Wanted } from './bounds.js';
import { resolveCommand } from './sandbox.js';

// The leaf a cgroup v2 supervisor moves itself into: a cgroup that hands controllers to its
// children may hold no process itself.
const SUPERVISOR_LEAF = 'nightshift-supervisor';

type Mount = { root: string; at: string; fstype: string; options: string[] };

// Pure: the cgroup mounts in /proc/self/mountinfo.
export function cgroupMounts(mountinfo: string): Mount[] {
  const out: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!right) continue;
    const f = left.split(' ');
    const [fstype, , opts] = right.split(' ');
    if (fstype === 'cgroup' || fstype === 'cgroup2') out.push({ root: f[3], at: f[4].replace(/\\040/g, ' '), fstype, options: (opts ?? '').split(',') });
  }
  return out;
}

// Pure: where our own cgroup lies in the v2 hierarchy and in each v1 controller's, as folders.
// `leafUp` false: the v2 folder we are in, even our leaf.
export function cgroupDirs(procCgroup: string, mounts: Mount[], leafUp = true): { v2: string | null; v1: Partial<Record<'pids' | 'memory', string>> } {
  const v1: Partial<Record<'pids' | 'memory', string>> = {};
  let v2: string | null = null;
  const under = (m: Mount, p: string) => {
    if (m.root !== '/' && p !== m.root && !p.startsWith(`${m.root}/`)) return null;
    return path.resolve(path.join(m.at, m.root === '/' ? p : p.slice(m.root.length)));
  };
  for (const line of procCgroup.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    const [, id, ctrls, p] = m;
    if (id === '0' && ctrls === '') {
      const mount = mounts.find((x) => x.fstype === 'cgroup2');
      if (mount) v2 = under(mount, p);
      continue;
    }
    for (const c of ['pids', 'memory'] as const) {
      if (!ctrls.split(',').includes(c)) continue;
      const mount = mounts.find((x) => x.fstype === 'cgroup' && x.options.includes(c));
      const dir = mount ? under(mount, p) : null;
      if (dir) v1[c] = dir;
    }
  }
  // Moved into our leaf by an earlier session of this process: the cgroup we hand out is its parent.
  if (leafUp && v2 && path.basename(v2) === SUPERVISOR_LEAF) v2 = path.dirname(v2);
  return { v2, v1 };
}

const read = (f: string) => {
  try {
    return fs.readFileSync(f, 'utf8');
  } catch {
    return null;
  }
};
const writable = (...files: string[]) => files.every((f) => {
  try {
    fs.accessSync(f, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
});
const ppid = (pid: number) => Number(/^PPid:\s*(\d+)/m.exec(read(`/proc/${pid}/status`) ?? '')?.[1] ?? -1);
const procsIn = (dir: string) => (read(path.join(dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number);

// The facts planBounds decides from, read from this machine.
export function boundsFacts(envPath: string, pid = process.pid): BoundsFacts {
  const dirs = cgroupDirs(read(`/proc/${pid}/cgroup`) ?? '', cgroupMounts(read(`/proc/${pid}/mountinfo`) ?? ''));
  let v2: BoundsFacts['v2'] = null;
  if (dirs.v2 && fs.existsSync(dirs.v2)) {
    const d = dirs.v2;
    // Ours: this process, its children (a probe running beside), and our leaf's.
    const others = procsIn(d).filter((p) => p !== pid && ppid(p) !== pid);
    v2 = {
      dir: d,
      controllers: (read(path.join(d, 'cgroup.controllers')) ?? '').trim().split(/\s+/).filter(Boolean),
      writable: writable(d, path.join(d, 'cgroup.procs'), path.join(d, 'cgroup.subtree_control')),
      othersInside: others.length > 0,
    };
  }
  const v1: BoundsFacts['v1'] = {};
  for (const [c, d] of Object.entries(dirs.v1) as Array<['pids' | 'memory', string]>) {
    if (fs.existsSync(d)) v1[c] = { dir: d, writable: writable(d, path.join(d, 'cgroup.procs')) };
  }
  return { v2, v1, prlimit: resolveCommand('prlimit', envPath) };
}

// A session's bounds as the runner uses them: `wrap` puts prlimit before the command where only
// rlimits can be had; `join` moves the gated child into the cell; `reached` says why it must end.
export type Cell = {
  plan: BoundsPlan;
  // The cgroups made for it (none under rlimits or no bound): recorded in the session's folder, so
  // a start after a killed supervisor removes them with the folder (session-dirs.ts).
  dirs: readonly string[];
  wrap(command: string, args: string[]): { command: string; args: string[] };
  // Whether the runner must hold the child at its gate until `join` has moved it in.
  gated: boolean;
  join(pid: number): void;
  // Warms the kernel's lock for moving processes (see prime); never rejects.
  prime(): Promise<void>;
  reached(): string | null;
  close(): Promise<void>;
};

// The first move of a process into a cgroup after a quiet spell waits out an RCU grace period (the
// kernel's cgroup_threadgroup_rwsem: 6 to 40 ms on this 2-core machine, the longer the busier);
// a move within about one grace period after the last one ended does not (~0.1 ms). So this
// process is moved into the cgroup it is already in, a no-op but for that wait, in the thread
// pool: early (a session is all but certain), as the cell is made, and just before the gate is
// spawned, each keeping the lock warm for the next, so the gate's join is quick. Only speed is at
// stake: a failure is ignored.
function prime(ownDir: string | null | undefined): Promise<void> {
  if (!ownDir) return Promise.resolve();
  return fs.promises.writeFile(path.join(ownDir, 'cgroup.procs'), String(process.pid)).catch(() => {});
}

// The early prime: our own cgroup as /proc/self/cgroup names it, where cells would be made.
export function primeOwnCgroup(wanted: Wanted, pid = process.pid): Promise<void> {
  if (wanted.pids === 'off' && wanted.memory === 'off') return Promise.resolve();
  const dirs = cgroupDirs(read(`/proc/${pid}/cgroup`) ?? '', cgroupMounts(read(`/proc/${pid}/mountinfo`) ?? ''), false);
  return prime(dirs.v1.pids ?? dirs.v1.memory ?? dirs.v2);
}

const write = (dir: string, file: string, value: string) => fs.writeFileSync(path.join(dir, file), value);
const tryWrite = (dir: string, file: string, value: string) => {
  if (fs.existsSync(path.join(dir, file))) write(dir, file, value);
};

// The session's cell, made with its limits before anything is spawned. Throws when the cgroup
// cannot be made (the caller falls back to rlimits, saying why).
export function openCell(plan: BoundsPlan, sessionId: string): Cell {
  const name = `nightshift-${sessionId}`;
  const w = plan.wanted;
  if (plan.mechanism === 'rlimit') {
    const prlimit = plan.prlimit;
    return { plan, dirs: [], gated: false, wrap: (command, args) => ({ command: prlimit, args: [...rlimitArgs(w), command, ...args] }), join: () => {}, prime: () => Promise.resolve(), reached: () => null, close: async () => {} };
  }
  if (plan.mechanism === 'none') return { plan, dirs: [], gated: false, wrap: (command, args) => ({ command, args }), join: () => {}, prime: () => Promise.resolve(), reached: () => null, close: async () => {} };
  const dirs: string[] = [];
  let pidsDir: string | null = null;
  let memoryDir: string | null = null;
  let oomFile = 'memory.events';
  // Our own cgroup, where the prime moves us (never a cell: we would be killed with it).
  let ownDir: string | undefined;
  try {
    if (plan.mechanism === 'cgroup2') {
      ownDir = enterLeaf(plan.dir);
      const d = path.join(plan.dir, name);
      fs.mkdirSync(d);
      dirs.push(d);
      if (w.pids !== 'off') (write(d, 'pids.max', String(w.pids)), (pidsDir = d));
      if (w.memory !== 'off') {
        write(d, 'memory.max', String(w.memory));
        tryWrite(d, 'memory.swap.max', '0');
        // The kernel's OOM ends the whole session at once, not one process of it.
        tryWrite(d, 'memory.oom.group', '1');
        memoryDir = d;
      }
    } else {
      ownDir = plan.dirs.pids ?? plan.dirs.memory;
      if (plan.dirs.pids && w.pids !== 'off') {
        const d = path.join(plan.dirs.pids, name);
        fs.mkdirSync(d);
        dirs.push(d);
        write(d, 'pids.max', String(w.pids));
        pidsDir = d;
      }
      if (plan.dirs.memory && w.memory !== 'off') {
        const d = path.join(plan.dirs.memory, name);
        fs.mkdirSync(d);
        dirs.push(d);
        write(d, 'memory.limit_in_bytes', String(w.memory));
        // Swap counted too, where the kernel accounts it (the limit must not be below memory's).
        tryWrite(d, 'memory.memsw.limit_in_bytes', String(w.memory));
        memoryDir = d;
        oomFile = 'memory.oom_control';
      }
    }
  } catch (err) {
    for (const d of dirs.reverse()) {
      try {
        fs.rmdirSync(d);
      } catch {
        // nothing was moved in: it goes with the next boot at worst
      }
    }
    throw err;
  }
  void prime(ownDir);
  return {
    plan,
    dirs: [...dirs],
    gated: true,
    wrap: (command, args) => ({ command, args }),
    prime: () => prime(ownDir),
    join(pid) {
      for (const d of dirs) write(d, 'cgroup.procs', String(pid));
    },
    reached() {
      const c = {
        pidsMax: pidsDir ? counter(read(path.join(pidsDir, 'pids.events')), 'max') : 0,
        oomKills: memoryDir ? counter(read(path.join(memoryDir, oomFile)), 'oom_kill') : 0,
      };
      return boundReached(c, w);
    },
    async close() {
      for (const d of dirs) await emptyAndRemove(d);
    },
  };
}

// cgroup v2: we (and what we started) move into our leaf once, and the controllers are handed
// down, so that session cells can be made beside it.
// Returns the leaf.
function enterLeaf(base: string): string {
  const leaf = path.join(base, SUPERVISOR_LEAF);
  fs.mkdirSync(leaf, { recursive: true });
  for (const p of procsIn(base)) {
    try {
      write(leaf, 'cgroup.procs', String(p));
    } catch (err) {
      // A child of ours that ended meanwhile.
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
  const have = (read(path.join(base, 'cgroup.subtree_control')) ?? '').split(/\s+/);
  const add = ['pids', 'memory'].filter((c) => !have.includes(c));
  if (add.length) write(base, 'cgroup.subtree_control', add.map((c) => `+${c}`).join(' '));
  return leaf;
}

// Kills whatever is left in a cell and removes it; a cell that will not go is left (logged by the
// caller through the rejection).
async function emptyAndRemove(dir: string): Promise<void> {
  if (!fs.existsSync(dir)) return;
  if (fs.existsSync(path.join(dir, 'cgroup.kill'))) {
    try {
      write(dir, 'cgroup.kill', '1');
    } catch {
      // an older kernel: killed one by one below
    }
  }
  // The kernel frees a cell a few ms after its last process: short waits, 1 s at most.
  for (let i = 0; i < 200; i++) {
    for (const p of procsIn(dir)) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone
      }
    }
    try {
      fs.rmdirSync(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || i === 199) throw err;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

// The session's cell under the config's limits: the best mechanism this machine gives, falling
// back to rlimits (then none) when the cgroup cannot be made. `warn` hears why.
export function cellFor(wanted: Wanted, sessionId: string, envPath: string, warn: (msg: string) => void, facts: BoundsFacts = boundsFacts(envPath)): Cell {
  const plan = planBounds(facts, wanted);
  try {
    return openCell(plan, sessionId);
  } catch (err) {
    const fallback = planBounds({ ...facts, v2: null, v1: {} }, wanted);
    warn(`could not make the session's cgroup (${plan.mechanism}): ${(err as Error).message}; ${fallback.mechanism === 'rlimit' ? 'rlimits only' : 'no bound'} for this session`);
    return openCell(fallback, sessionId);
  }
}
