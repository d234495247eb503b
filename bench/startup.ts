// Bare start-up: `nightshift --help` against `node -e 0`, interleaved, medians. The goal is a
// ratio of at most 2 (issue 10); what keeps it there is test/cli/startup.test.ts.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { median } from './timing.js';

function time(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stderr}`);
  return ms;
}

// `bin` defaults to the built one; an installed copy can be measured the same way.
export function startupBench(runs = 30, bin = path.join(import.meta.dirname, '..', 'cli', 'bin.js')) {
  const floor: number[] = [];
  const help: number[] = [];
  for (let i = 0; i < runs; i++) {
    floor.push(time(['-e', '0']));
    help.push(time([bin, '--help']));
  }
  const f = median(floor);
  const h = median(help);
  console.log(`start-up: nightshift --help ${h.toFixed(0)} ms vs node -e 0 ${f.toFixed(0)} ms (median of ${runs}): ratio ${(h / f).toFixed(2)}`);
  return { runs, node_floor_median_ms: Math.round(f), help_median_ms: Math.round(h), ratio: +(h / f).toFixed(2) };
}
