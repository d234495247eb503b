// `nightshift daemon`: ticks on daemon.schedule until SIGTERM.
import { runDeps, type FullContext } from '../context.js';
import { withStopSignal } from '../stop-signal.js';

export const help = `Usage: nightshift daemon [--config PATH]

Runs the tick on each cron expression of daemon.schedule (in budget.timezone), never two at once.
SIGTERM/SIGINT: stop scheduling, let a running session finish within daemon.shutdown_grace, then end
it and settle it; exit 0.`;

export const stage = 'full';

export async function run({ config, io, logger, env }: FullContext): Promise<number> {
  const { runDaemon } = await import('../../daemon/tick/daemon.js');
  return withStopSignal(logger, 'stopping the daemon', (stopSignal) => runDaemon(config, { ...runDeps(io, logger, env), stopSignal }));
}
