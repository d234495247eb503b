// `nightshift state [--agent NAME] [--json]`: the state a session of NAME would start with now.
import { ledgerFile } from '../../budget/ledger.js';
import { loadAgent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { EXIT } from '../../core/errors.js';
import { lookAtLedger } from './reconcile.js';
import type { Logger } from '../../logs/logger.js';
import { gatherState } from '../../sessions/state/state-data.js';
import { renderState } from '../../sessions/state/state.js';

export async function stateCommand(config: Config, flags: { agent?: string; json?: boolean }, io: { out: (t: string) => void; redact: (t: string) => string }, logger: Logger): Promise<number> {
  const agent = flags.agent ? loadAgent(config, flags.agent) : null;
  const ledger = await lookAtLedger(ledgerFile(config), { logger, now: () => new Date() });
  try {
    const data = await gatherState({ config, agent, sessionId: null, unattended: true, ledger, now: new Date(), redact: io.redact });
    const state = renderState(data, config.state.max_chars);
    if (flags.json) io.out(JSON.stringify({ text: state.text, chars: state.chars, max_chars: state.maxChars, cut: state.cut, data }));
    else io.out(state.text);
    return EXIT.OK;
  } finally {
    ledger.close();
  }
}
