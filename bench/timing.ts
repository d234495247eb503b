// Shared bench timing: a median, and one timed `nightshift run` that must succeed.
import { nightshift } from '../test/helpers.js';

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Wall time of `nightshift run bench --json` in `cwd`; a failed run fails the bench loudly.
export async function timedRun(env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  const t0 = performance.now();
  const r = await nightshift(['run', 'bench', '--json'], env, cwd);
  if (r.code !== 0) throw new Error(`nightshift run failed: ${r.stderr}`);
  return performance.now() - t0;
}
