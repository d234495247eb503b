// SIGTERM (systemd stopping us), SIGINT, or SIGHUP (a closed terminal) ends the session the same
// way a watchdog does, and the ledger is still settled before we exit. While a handler is
// installed no signal kills us outright (execa's exit hook re-raises only when it is alone).
import type { Logger } from '../logs/logger.js';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
export async function withStopSignal<T>(logger: Logger, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    logger.warn({ event: 'signal', signal: sig }, `received ${sig}: ${what}`);
    controller.abort(sig);
  };
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
  try {
    return await fn(controller.signal);
  } finally {
    for (const sig of STOP_SIGNALS) process.off(sig, onSignal);
  }
}
