// NIGHTSHIFT_PROFILE=1: named phase marks, each in ms since the process began (node's own start
// included), written to stderr as one JSON line when the process exits. Off, a mark is one
// property read. The marks live on globalThis, so the bin (plain modules) and the bundle share them.
type Marks = Array<[string, number]>;
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
    process.once('exit', () => process.stderr.write(`${JSON.stringify({ nightshift_profile: formatMarks(list, performance.now()) })}\n`));
  }
  marks.push([name, performance.now()]);
}

// Pure: each mark's time and the time since the one before it, rounded to 0.1 ms.
export function formatMarks(marks: Marks, exitAt: number): Array<{ phase: string; at_ms: number; took_ms: number }> {
  const r = (n: number) => Math.round(n * 10) / 10;
  const all: Marks = [...marks, ['exit', exitAt]];
  return all.map(([phase, at], i) => ({ phase, at_ms: r(at), took_ms: r(at - (i ? all[i - 1][1] : 0)) }));
}
