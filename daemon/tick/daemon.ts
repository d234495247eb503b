// `nightshift daemon`: the tick on node-cron schedules, for hosts without systemd timers. Never two
// ticks at once (in this process; the run lock covers other processes). On SIGTERM/SIGINT it stops
// scheduling, lets a running session finish within daemon.shutdown_grace, then ends and settles it.
import cron, { type ScheduledTask } from 'node-cron';
import type { Config } from '../../config/schema.js';
import type { RunDeps } from './types.js';
import { tick } from './tick.js';

export type DaemonDeps = Omit<RunDeps, 'signal'> & { stopSignal: AbortSignal };

export async function runDaemon(config: Config, deps: DaemonDeps): Promise<number> {
  const log = deps.logger;
  let running: Promise<void> | null = null;
  let session: AbortController | null = null;
  let ticks = 0;

  const fire = (schedule: string, slot: Date | null) => {
    if (deps.stopSignal.aborted) return;
    if (running) {
      log.info({ event: 'tick_overlap', schedule }, `schedule ${schedule} fired while a tick runs: skipped`);
      return;
    }
    session = new AbortController();
    const n = ++ticks;
    running = (async () => {
      try {
        const r = await tick(config, { ...deps, signal: session!.signal, slot }, 'daemon');
        log.info({ event: 'tick_end', tick: n, schedule, action: r.action, reason: r.reason, outcome: r.session?.outcome ?? null }, `tick ${n}: ${r.action} (${r.reason})`);
      } catch (err) {
        log.error({ event: 'tick_failed', tick: n, schedule, err }, `tick ${n} failed: ${(err as Error).message}`);
      } finally {
        running = null;
        session = null;
      }
    })();
  };

  const tasks: ScheduledTask[] = config.daemon.schedule.map((expr) => {
    const task = cron.schedule(expr, (ctx) => fire(expr, ctx?.date instanceof Date ? ctx.date : null), { timezone: config.budget.timezone, name: `nightshift ${expr}` });
    // A missed slot is said in our own log: unheard, node-cron prints a coloured line of its own
    // to stderr, which is no JSON line for journald or the daily log.
    task.on('execution:missed', (ctx) => {
      log.warn({ event: 'tick_missed', schedule: expr, at: ctx?.date instanceof Date ? ctx.date.toISOString() : null }, `daemon: a ${expr} slot was missed (the process was busy)`);
    });
    return task;
  });
  log.info({ event: 'daemon_start', schedules: config.daemon.schedule }, `daemon: ${config.daemon.schedule.join(', ')} (${config.budget.timezone})`);

  await new Promise<void>((resolve) => {
    if (deps.stopSignal.aborted) resolve();
    else deps.stopSignal.addEventListener('abort', () => resolve(), { once: true });
  });
  for (const t of tasks) await t.stop();
  if (running) {
    log.info({ event: 'daemon_draining', grace_ms: config.daemon.shutdown_grace }, 'daemon: waiting for the running session');
    const current: Promise<void> = running;
    const finished = await Promise.race([current.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), config.daemon.shutdown_grace).unref())]);
    if (!finished) {
      (session as AbortController | null)?.abort('daemon shutdown');
      await current;
    }
  }
  for (const t of tasks) await t.destroy();
  log.info({ event: 'daemon_stop', ticks }, 'daemon: stopped');
  return 0;
}
