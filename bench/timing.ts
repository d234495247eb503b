// Shared bench timing: a median, and one timed `nightshift run` that must succeed.
import { nightshift } from '../test/helpers.js';

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Each variant timed `runs` times, each round starting at the next variant (no variant always runs
// first: the first of a round ran ~1 s slower), a dot a round on stderr; the median of each.
export async function rotatedMedians<K extends string>(variants: Array<[K, () => Promise<number>]>, runs: number): Promise<Record<K, number>> {
  const times = Object.fromEntries(variants.map(([k]) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < runs; i++) {
    for (let j = 0; j < variants.length; j++) {
      const [k, f] = variants[(i + j) % variants.length];
      times[k].push(await f());
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v as number[])])) as Record<K, number>;
}

// Wall time of `nightshift run bench --json` in `cwd`; a failed run fails the bench loudly.
export async function timedRun(env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  const t0 = performance.now();
  const r = await nightshift(['run', 'bench', '--json'], env, cwd);
  if (r.code !== 0) throw new Error(`nightshift run failed: ${r.stderr}`);
  return performance.now() - t0;
}
