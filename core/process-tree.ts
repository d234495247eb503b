// Finding and ending every process a session started. The CLI runs Bash tools under setsid, so
// they leave claude's process group, and a tool's own children are reparented to init once their
// parent dies. Two nets catch them: the process tree below the CLI (walked before anything is
// killed), and a marker variable in the environment that every descendant inherits, which still
// finds processes that were reparented or double-forked.
import fs from 'node:fs';

export const SESSION_MARKER = 'NIGHTSHIFT_SESSION_ID';

export type Proc = { pid: number; ppid: number; state: string; start: string };

// One /proc/<pid>/stat, or null when the process is gone. The command name may hold spaces and
// parentheses, so fields are counted after its last `)`.
export function readProc(pid: number): Proc | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, state: rest[0], ppid: Number(rest[1]), start: rest[19] };
  } catch {
    return null;
  }
}

export function listProcs(): Proc[] {
  const out: Proc[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(Number(name));
    if (p) out.push(p);
  }
  return out;
}

// The start time (clock ticks since boot) tells a live process from a reused pid.
export function isAlive(pid: number, start?: string | null): boolean {
  const p = readProc(pid);
  return !!p && p.state !== 'Z' && (!start || p.start === start);
}

export function descendants(root: number, procs: Proc[]): number[] {
  const children = new Map<number, number[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

// The first process below `root` (breadth first) whose argv[0] is `command`: a wrapped CLI.
export function innerPid(root: number, command: string): number | null {
  for (const pid of descendants(root, listProcs())) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === command) return pid;
    } catch {
      // gone
    }
  }
  return null;
}

// Live processes whose environment carries `marker=value`.
export function withMarker(value: string, procs: Proc[], marker = SESSION_MARKER): number[] {
  const needle = `${marker}=${value}\0`;
  const out: number[] = [];
  for (const p of procs) {
    if (p.pid === process.pid || p.state === 'Z') continue;
    try {
      if (fs.readFileSync(`/proc/${p.pid}/environ`, 'latin1').includes(needle)) out.push(p.pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

// Everything that belongs to the session now: the tree under root and every marked process.
export function sessionProcs(root: number | null, marker: string): number[] {
  const procs = listProcs();
  const set = new Set<number>(withMarker(marker, procs));
  if (root) {
    if (procs.some((p) => p.pid === root && p.state !== 'Z')) set.add(root);
    for (const pid of descendants(root, procs)) set.add(pid);
  }
  set.delete(process.pid);
  return [...set];
}

function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

// SIGTERM to the whole session, then SIGKILL after `graceMs`. Processes are stopped before the
// kill so none can fork a new child between the look and the shot; it repeats until none is left.
export async function killSession(root: number | null, marker: string, graceMs: number): Promise<number> {
  let pids = sessionProcs(root, marker);
  if (!pids.length) return 0;
  const seen = new Set(pids);
  signal(pids, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && (pids = sessionProcs(root, marker)).length) await sleep(50);
  for (let round = 0; round < 20; round++) {
    pids = sessionProcs(root, marker);
    if (!pids.length) break;
    pids.forEach((p) => seen.add(p));
    signal(pids, 'SIGSTOP');
    signal(pids, 'SIGKILL');
    await sleep(25);
  }
  return seen.size;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
