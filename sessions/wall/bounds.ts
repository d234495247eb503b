// The session's pids and memory bounds (limits.pids, limits.memory), decided from plain facts about
// this machine: a cgroup of the session's own where one can be had (cgroup v2 in a subtree delegated
// to us, as the units' Delegate= gives; cgroup v1 hierarchies we may write, as root), else rlimits
// (prlimit: per user for processes, per process for memory), else none. The I/O is ./cgroup.ts.
import { formatSize } from '../../config/size.js';
import { counted } from '../../core/words.js';

export type Wanted = { pids: number | 'off'; memory: number | 'off' };

// What ./cgroup.ts reads: the supervisor's own cgroup in each hierarchy, and prlimit's path.
export type BoundsFacts = {
  // The unified hierarchy (cgroup2), where our own cgroup lies in it. `controllers`: what it may
  // hand to children; `writable`: we may make children and move processes there; `othersInside`:
  // processes not ours share it (a login session's scope), so it cannot hand controllers down.
  v2: { dir: string; controllers: string[]; writable: boolean; othersInside: boolean } | null;
  // cgroup v1: our own cgroup's folder in each controller's hierarchy, when it is mounted.
  v1: Partial<Record<'pids' | 'memory', { dir: string; writable: boolean }>>;
  prlimit: string | null;
};

export type BoundsPlan =
  | { mechanism: 'cgroup2'; dir: string; wanted: Wanted }
  | { mechanism: 'cgroup1'; dirs: Partial<Record<'pids' | 'memory', string>>; wanted: Wanted }
  | { mechanism: 'rlimit'; prlimit: string; wanted: Wanted; why: string }
  | { mechanism: 'none'; wanted: Wanted; why: string };

const needed = (w: Wanted) => (['pids', 'memory'] as const).filter((k) => w[k] !== 'off');

// The part of the host's memory, and of its threads (kernel.threads-max), that sessions side by side
// may take together: each gets at most this share divided among sessions.max_concurrent.
export const HOST_SHARE = 0.8;

// Pure: beside other sessions (`n` above 1), each session's bounds are at most its share of the
// host, so that n sessions together cannot exhaust it; one at a time, the limits as written.
// `lowered` says which bound was lowered, and to what, for the session's log.
export function splitBounds(w: Wanted, n: number, host: { memory: number; threads: number | null }): { wanted: Wanted; lowered: string[] } {
  if (n <= 1) return { wanted: w, lowered: [] };
  const out: Wanted = { ...w };
  const lowered: string[] = [];
  const memShare = Math.floor((host.memory * HOST_SHARE) / n);
  if (w.memory !== 'off' && w.memory > memShare) {
    out.memory = memShare;
    lowered.push(`limits.memory ${formatSize(w.memory)} lowered to ${formatSize(memShare)} (${Math.round(HOST_SHARE * 100)}% of the host's ${formatSize(host.memory)} over sessions.max_concurrent ${n})`);
  }
  if (host.threads !== null && w.pids !== 'off') {
    const pidShare = Math.max(1, Math.floor((host.threads * HOST_SHARE) / n));
    if (w.pids > pidShare) {
      out.pids = pidShare;
      lowered.push(`limits.pids ${w.pids} lowered to ${pidShare} (${Math.round(HOST_SHARE * 100)}% of kernel.threads-max ${host.threads} over sessions.max_concurrent ${n})`);
    }
  }
  return { wanted: out, lowered };
}

// Pure: which mechanism bounds a session here, and why not a better one.
export function planBounds(f: BoundsFacts, wanted: Wanted): BoundsPlan {
  const want = needed(wanted);
  if (!want.length) return { mechanism: 'none', wanted, why: 'limits.pids and limits.memory are off' };
  const v2 = f.v2;
  if (v2 && v2.writable && !v2.othersInside && want.every((c) => v2.controllers.includes(c))) return { mechanism: 'cgroup2', dir: v2.dir, wanted };
  if (want.every((c) => f.v1[c]?.writable)) return { mechanism: 'cgroup1', dirs: Object.fromEntries(want.map((c) => [c, f.v1[c]!.dir])), wanted };
  const why = noCgroup(f, want);
  if (f.prlimit) return { mechanism: 'rlimit', prlimit: f.prlimit, wanted, why };
  return { mechanism: 'none', wanted, why: `${why}, and prlimit (util-linux) is not on PATH` };
}

function noCgroup(f: BoundsFacts, want: Array<'pids' | 'memory'>): string {
  const v2 = f.v2;
  if (v2 && v2.controllers.length) {
    if (!v2.writable) return `cgroup v2: ${v2.dir} is not delegated to us (the unit's Delegate=pids memory)`;
    if (v2.othersInside) return `cgroup v2: ${v2.dir} holds other processes than ours (run nightshift from its unit, which has Delegate=)`;
    const missing = want.filter((c) => !v2.controllers.includes(c));
    return `cgroup v2: ${v2.dir} cannot hand down ${missing.join(' and ')}`;
  }
  const missing = want.filter((c) => !f.v1[c]);
  if (missing.length === want.length && !v2) return 'no cgroup hierarchy is mounted';
  if (missing.length) return `cgroup v1: no ${missing.join(' or ')} hierarchy is mounted`;
  return `cgroup v1: ${want.map((c) => f.v1[c]!.dir).join(' and ')} cannot be written (root only)`;
}

// Pure: one line for doctor and the session log.
export function describePlan(p: BoundsPlan): string {
  const w = p.wanted;
  const what = [w.pids === 'off' ? null : `${w.pids} processes`, w.memory === 'off' ? null : `${formatSize(w.memory)} of memory`].filter(Boolean).join(' and ');
  switch (p.mechanism) {
    case 'cgroup2':
      return `each session gets a cgroup of its own under ${p.dir} (cgroup v2): ${what}; reaching a bound ends the session`;
    case 'cgroup1':
      return `each session gets a cgroup of its own (cgroup v1: ${Object.values(p.dirs).join(', ')}): ${what}; reaching a bound ends the session`;
    case 'rlimit':
      return `rlimits only (${p.why}): ${w.pids === 'off' ? '' : `${w.pids} processes for the session's user as a whole, `}${w.memory === 'off' ? '' : `${formatSize(w.memory)} of data per process, `}a fork or an allocation past them fails, the session goes on`;
    case 'none':
      return `no bound (${p.why})`;
  }
}

// The prlimit arguments that bound a command where no cgroup can be had.
export function rlimitArgs(w: Wanted): string[] {
  return [...(w.pids === 'off' ? [] : [`--nproc=${w.pids}`]), ...(w.memory === 'off' ? [] : [`--data=${w.memory}`]), '--'];
}

// The counters a cgroup keeps of its bounds: `max` in pids.events, `oom_kill` in memory.events
// (v2) or memory.oom_control (v1). Pure over the files' text.
export function counter(text: string | null, name: string): number {
  if (!text) return 0;
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

// Pure: why the session must end, from its cgroup's counters, or null.
export function boundReached(c: { pidsMax: number; oomKills: number }, w: Wanted): string | null {
  if (c.oomKills > 0) return `limits.memory: the session reached its ${w.memory === 'off' ? '' : `${formatSize(w.memory)} `}memory bound (the kernel ended ${counted(c.oomKills, 'process', 'processes')})`;
  if (c.pidsMax > 0) return `limits.pids: the session reached its ${w.pids === 'off' ? '' : `${w.pids} `}processes bound (${counted(c.pidsMax, 'fork')} refused)`;
  return null;
}
