// Falling back from one embedder to another without ever mixing their spaces.
//
// A vector means something only next to vectors of the same model, so every result here carries the
// label of the model that made it:
//   - `embed()` (the plain `Embedder` contract, whose vectors are implicitly `this.model`) calls the
//     primary only and throws when it fails. It never returns fallback vectors under the primary's
//     name.
//   - `embedLabelled()` tries the primary and, when it fails, logs the failure and returns the
//     fallback's vectors labelled with the fallback's model (or null when there is no fallback, or it
//     failed too: the caller then goes on without a vector arm).
// The store keeps each vector under the label it came back with, ranks a query vector only against
// stored vectors of the same label, and re-embeds in the background every memory that has no vector
// in `model` (the primary's space, the one it aims for) once the primary answers again. While the
// primary is down, queries rank in the fallback's space; memories stored only in the primary's space
// are then reachable through the lexical arm alone.
import { describeError, GeminiError, type LogSink } from '../gemini-client.js';
import type { Embedder } from '../types.js';

export type LabelledVectors = { model: string; dim: number; vectors: Float32Array[] };

export type EmbedKindAware = Embedder & { embed(texts: string[], kind?: 'document' | 'query'): Promise<Float32Array[]> };

export type FallbackEmbedder = Embedder & {
  readonly primary: Embedder;
  readonly fallback: Embedder | null;
  embed(texts: string[], kind?: 'document' | 'query'): Promise<Float32Array[]>;
  embedLabelled(texts: string[], kind?: 'document' | 'query'): Promise<LabelledVectors | null>;
};

export type FallbackOptions = {
  // After a failure the primary is skipped this long, so an outage costs one timeout, not one per call.
  cooldownMs?: number;
  now?: () => number;
};

// The primary with a per-call fallback; see the header for how the labels keep spaces apart.
export function withFallback(primary: Embedder, fallback: Embedder | null, logger: LogSink, o: FallbackOptions = {}): FallbackEmbedder {
  const cooldownMs = o.cooldownMs ?? 60_000;
  const now = o.now ?? Date.now;
  let downUntil = 0;
  const call = (e: Embedder, texts: string[], kind?: 'document' | 'query') => (e as EmbedKindAware).embed(texts, kind);

  async function viaFallback(texts: string[], kind?: 'document' | 'query'): Promise<LabelledVectors | null> {
    if (!fallback) return null;
    try {
      return { model: fallback.model, dim: fallback.dim, vectors: await call(fallback, texts, kind) };
    } catch (err) {
      logger.warn({ err: describeError(err), model: fallback.model, texts: texts.length }, 'memory: fallback embedding failed too, going on without vectors');
      return null;
    }
  }

  return {
    model: primary.model,
    dim: primary.dim,
    primary,
    fallback,
    // The store's path: the primary only (never another space under its name), but during an
    // outage every call fails at once for the cooldown instead of waiting out the timeout again.
    async embed(texts: string[], kind?: 'document' | 'query') {
      if (now() < downUntil) throw new GeminiError('GEMINI_UNAVAILABLE', `${primary.model} is cooling down after a failure (retry in ${downUntil - now()} ms)`);
      try {
        return await call(primary, texts, kind);
      } catch (err) {
        downUntil = now() + cooldownMs;
        throw err;
      }
    },
    async embedLabelled(texts: string[], kind?: 'document' | 'query') {
      if (!texts.length) return { model: primary.model, dim: primary.dim, vectors: [] };
      if (now() < downUntil) {
        logger.debug?.({ model: primary.model, fallback: fallback?.model ?? null, texts: texts.length }, 'memory: primary embedder cooling down, using the fallback');
        return viaFallback(texts, kind);
      }
      try {
        return { model: primary.model, dim: primary.dim, vectors: await call(primary, texts, kind) };
      } catch (err) {
        downUntil = now() + cooldownMs;
        logger.warn(
          { err: describeError(err), code: (err as { code?: string }).code, model: primary.model, fallback: fallback?.model ?? null, texts: texts.length, retry_in_ms: cooldownMs },
          `memory: embedding with ${primary.model} failed, ${fallback ? `using ${fallback.model}` : 'going on without vectors'}`,
        );
        return viaFallback(texts, kind);
      }
    },
  };
}

// Labelled vectors from any embedder: `embedLabelled` where it exists, else `embed` under the
// embedder's own name; null (logged) when it fails.
export async function embedWithLabel(e: Embedder, texts: string[], logger: LogSink, kind?: 'document' | 'query'): Promise<LabelledVectors | null> {
  const f = e as Partial<FallbackEmbedder>;
  if (typeof f.embedLabelled === 'function') return f.embedLabelled(texts, kind);
  try {
    return { model: e.model, dim: e.dim, vectors: await (e as EmbedKindAware).embed(texts, kind) };
  } catch (err) {
    logger.warn({ err: describeError(err), model: e.model, texts: texts.length }, `memory: embedding with ${e.model} failed, going on without vectors`);
    return null;
  }
}
