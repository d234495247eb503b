// doctor's checks of what bounds a session: which mechanism holds limits.pids and limits.memory on
// this machine (sessions/wall/bounds.ts), and the free space on the disks nightshift writes.
import type { Config } from '../../config/schema.js';
import { formatSize } from '../../config/size.js';
import { diskFacts, diskFullReason, lowDisks } from '../../config/disk-space.js';
import { describePlan, HOST_SHARE, planBounds, splitBounds } from '../../sessions/wall/bounds.js';
import { boundsFacts } from '../../sessions/wall/cgroup.js';
import type { CheckFacts } from '../../report/embed.js';

// A cgroup, or rlimits (weaker: said so), or nothing (a warning, with the fix).
export function boundsCheck(c: Pick<Config, 'limits'>, env: NodeJS.ProcessEnv): CheckFacts {
  const facts = boundsFacts(env.PATH ?? '');
  const plan = planBounds(facts, { pids: c.limits.pids, memory: c.limits.memory });
  // What a start from here gets; the tick's and the daemon's units delegate a subtree of their own.
  const fromUnits = plan.mechanism !== 'cgroup2' && plan.mechanism !== 'cgroup1' && facts.v2?.controllers.includes('pids') ? ' (a start from here; the tick\'s and the daemon\'s units delegate a cgroup v2 subtree, Delegate=pids memory, and there each session gets a cgroup)' : '';
  const detail = `${describePlan(plan)}${fromUnits}`;
  if (plan.mechanism === 'none' && !/are off$/.test(plan.why)) {
    return { name: 'bounds', status: 'warn', detail, fix: 'install util-linux (prlimit), or run nightshift from its unit (Delegate=pids memory), or as root on cgroup v1' };
  }
  return { name: 'bounds', status: 'ok', detail, fix: null };
}

// Sessions side by side (sessions.max_concurrent) each get limits.memory, at most their share of
// the host (sessions/wall/bounds.ts splitBounds): said, so the operator knows what each really gets.
export function concurrencyCheck(maxConcurrent: number, memory: number | 'off', hostMemory: number): CheckFacts {
  const name = 'concurrency';
  if (maxConcurrent === 1) return { name, status: 'ok', detail: 'one session at a time (sessions.max_concurrent 1)', fix: null };
  if (memory === 'off') return { name, status: 'warn', detail: `up to ${maxConcurrent} sessions at once with no memory bound each (limits.memory off): together they can take all of the host's ${formatSize(hostMemory)}`, fix: 'set limits.memory so that sessions.max_concurrent of them fit in the host\'s memory' };
  const each = splitBounds({ pids: 'off', memory }, maxConcurrent, { memory: hostMemory, threads: null }).wanted.memory as number;
  if (each < memory) {
    return { name, status: 'warn', detail: `sessions.max_concurrent ${maxConcurrent} × limits.memory ${formatSize(memory)} = ${formatSize(maxConcurrent * memory)}, more than ${Math.round(HOST_SHARE * 100)}% of the host's ${formatSize(hostMemory)}: each session gets ${formatSize(each)}`, fix: `lower sessions.max_concurrent to ${Math.max(1, Math.floor((hostMemory * HOST_SHARE) / memory))}, or limits.memory to ${formatSize(each)} (what each gets now)` };
  }
  return { name, status: 'ok', detail: `up to ${maxConcurrent} sessions at once, ${formatSize(maxConcurrent * memory)} of the host's ${formatSize(hostMemory)} at most (limits.memory ${formatSize(memory)} each)`, fix: null };
}

// Fails below limits.disk_free, where no session would start.
export function diskCheck(c: Pick<Config, 'vault' | 'state_dir' | 'log_dir' | 'limits'>): CheckFacts {
  const facts = diskFacts(c);
  const low = lowDisks(facts, c.limits.disk_free);
  if (low.length) {
    return { name: 'disk', status: 'fail', detail: diskFullReason(low, c.limits.disk_free), fix: `free space on ${low.map((d) => d.path).join(' and ')} (what the last session left in the vault first: git status), or lower limits.disk_free` };
  }
  const seen = new Set<number>();
  const free = facts.filter((f) => !seen.has(f.dev) && seen.add(f.dev)).map((f) => `${facts.filter((g) => g.dev === f.dev).map((g) => g.what).join(', ')} ${formatSize(f.free)} free`);
  return { name: 'disk', status: 'ok', detail: `${free.join('; ')} (limits.disk_free ${c.limits.disk_free ? formatSize(c.limits.disk_free) : 'off'})`, fix: null };
}
