// `nightshift agents`: the agents in agents_dir, with their model, turns, timeout and limits.
import { formatDuration } from '../../config/duration.js';
import { EXIT } from '../../core/errors.js';
import type { FullContext } from '../context.js';

export const help = `Usage: nightshift agents [--json] [--config PATH]

Lists the agents in agents_dir with their model, turns, timeout and limits. An agent file that does
not validate is listed as INVALID with its problems (the tick skips it and runs the others), and
the exit is 78.`;

export const stage = 'full';

export async function run({ config, flags, io }: FullContext): Promise<number> {
  const { readAgents } = await import('../../config/agents.js');
  const { agents, broken } = readAgents(config);
  const rows = agents.map((a) => ({
    name: a.name, description: a.description, model: a.model, max_turns: a.maxTurns, timeout_ms: a.timeoutMs,
    idle_timeout_ms: a.idleTimeoutMs, allowed_tools: a.allowedTools, max_runs_per_day: a.maxRunsPerDay, file: a.file,
  }));
  const invalid = broken.map((b) => ({ name: b.name, file: b.file, invalid: b.problems }));
  if (flags.json) io.out(JSON.stringify([...rows, ...invalid]));
  else if (!rows.length && !invalid.length) io.out(`no agents in ${config.agents_dir}`);
  else {
    io.out([
      ...agents.map((a) => `${a.name.padEnd(16)} ${a.model.padEnd(8)} ${String(a.maxTurns).padStart(3)} ${a.maxTurns === 1 ? 'turn ' : 'turns'}  ${formatDuration(a.timeoutMs).padEnd(5)} ${a.description}`),
      ...broken.map((b) => `${b.name.padEnd(16)} INVALID  ${b.file}: ${b.problems.join('; ')}`),
    ].join('\n'));
  }
  // A broken file is the operator's to fix: listed, and the exit says so.
  return broken.length ? EXIT.CONFIG : EXIT.OK;
}
