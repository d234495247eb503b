// What a store needs while an MCP server serves it, over stdio (`nightshift mcp`) or HTTP (a
// session's own server): background re-embedding, and Gemini's contradiction check on each new memory.
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logs/logger.js';
import { checkContradictions } from '../learning/contradiction-check.js';
import { dreamGemini } from '../dream/dream-run.js';
import type { MemoryStore } from '../store.js';

export type Serving = {
  afterObserve?: (memory: { id: number; text: string }) => void;
  // Before the store closes: late failures of the background work are no longer worth a warning.
  stop(): void;
};

export function serveStore(store: MemoryStore, config: Config, env: NodeJS.ProcessEnv, logger: Logger, sessionId: string | null): Serving {
  // After a change of embedding model the memories are re-embedded in the background while the
  // server answers; meanwhile the vector arm ranks only the new model's vectors, never a mix.
  let serving = true;
  void store
    .reembed()
    .then((n) => n && logger.info({ event: 'reembedded', count: n }, `memory: embedded ${n} ${n === 1 ? 'memory' : 'memories'} with the current model`))
    .catch((err) => serving && logger.warn({ event: 'reembed_failed', err }, `memory: background re-embedding stopped: ${(err as Error).message}`));
  // With Gemini, each new memory is checked against its neighbours for contradictions as it
  // arrives (the offline heuristic already ran inside observe); candidates only, never applied.
  const gemini = dreamGemini(config, env);
  const afterObserve = gemini
    ? (m: { id: number; text: string }) =>
        void checkContradictions(store, [m], { actor: { surface: 'mcp', sessionId }, gemini, logger }).catch(
          (err) => serving && logger.warn({ event: 'contradiction_check_failed', err }, `memory: contradiction check failed: ${(err as Error).message}`),
        )
    : undefined;
  return {
    afterObserve,
    stop: () => {
      serving = false;
    },
  };
}
