// NIGHTSHIFT_PROFILE=1: named phase marks, each in ms since the process began (node's own start
// included), written to stderr as one JSON line when the process exits. Off, a mark is one
// property read. Each phase also says how much CPU the process used in it (cpu_ms, user and
// system, every thread): the time a phase took beside a child is not all its own. The marks live on globalThis, so the bin (plain modules) and the bundle share them.
type Marks = Array<[string, number, number?]>;
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const KEY = Symbol.for('nightshift.profile');

export function profileOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.NIGHTSHIFT_PROFILE && env.NIGHTSHIFT_PROFILE !== '0';
}

export function mark(name: string): void {
  const g = globalThis as unknown as Record<symbol, Marks | false | undefined>;
  let marks = g[KEY];
  if (marks === false) return;
  if (marks === undefined) {
    if (!profileOn()) {
      g[KEY] = false;
      return;
    }
    const list: Marks = (marks = g[KEY] = []);
    process.once('exit', () => process.stderr.write(`${JSON.stringify({ nightshift_profile: formatMarks(list, performance.now(), cpuNow()) })}\n`));
  }
  marks.push([name, performance.now(), cpuNow()]);
}

// Pure: each mark's time and the time since the one before it, rounded to 0.1 ms; with CPU times,
// the CPU used since the one before (the first counts from the process's start).
export function formatMarks(marks: Marks, exitAt: number, exitCpu?: number): Array<{ phase: string; at_ms: number; took_ms: number; cpu_ms?: number }> {
  const r = (n: number) => Math.round(n * 10) / 10;
  const all: Marks = [...marks, ['exit', exitAt, exitCpu]];
  return all.map(([phase, at, cpu], i) => {
    const before = i ? all[i - 1][2] : 0;
    return { phase, at_ms: r(at), took_ms: r(at - (i ? all[i - 1][1] : 0)), ...(cpu !== undefined && before !== undefined ? { cpu_ms: r(cpu - before) } : {}) };
  });
}
