// Gemini embeddings through @google/genai: batched (`batchEmbedContents`, 100 texts a request),
// checked (count, dimension, finite numbers) and scaled to unit length. Any failure throws a
// GeminiError; falling back is the caller's choice (see embeddings-fallback.ts).
import { describeError, GeminiError, geminiModels, type GeminiModels } from '../gemini-client.js';
import type { Embedder } from '../types.js';
import { toUnit } from './unit-vector.js';

export const GEMINI_EMBEDDING_MODEL = 'gemini-embedding-001';
// gemini-embedding-001 is trained to be cut down (Matryoshka); 768 keeps 4x less than its 3072 for
// about the same retrieval quality. A different size would be a different space.
export const GEMINI_EMBEDDING_DIM = 768;
const MAX_BATCH = 100; // the API's limit on requests in one batchEmbedContents call

// What the text is for: stored texts and queries are embedded with matching task types.
export type EmbedKind = 'document' | 'query';

export type GeminiEmbedderOptions = {
  apiKey: string;
  model?: string;
  baseUrl?: string | null;
  dim?: number;
  batchSize?: number;
  timeoutMs?: number;
  models?: GeminiModels; // injected in tests; by default the SDK's, made on first use
};

export type GeminiEmbedder = Embedder & { embed(texts: string[], kind?: EmbedKind): Promise<Float32Array[]> };

// Gemini as an `Embedder`; its vectors are labelled `gemini:<model>`.
export function createGeminiEmbedder(o: GeminiEmbedderOptions): GeminiEmbedder {
  const name = o.model ?? GEMINI_EMBEDDING_MODEL;
  const dim = o.dim ?? GEMINI_EMBEDDING_DIM;
  const batchSize = Math.min(o.batchSize ?? MAX_BATCH, MAX_BATCH);
  const models = o.models ?? geminiModels({ apiKey: o.apiKey, baseUrl: o.baseUrl, timeoutMs: o.timeoutMs });
  const label = `gemini:${name}`;

  async function batch(texts: string[], kind: EmbedKind): Promise<Float32Array[]> {
    let res: Awaited<ReturnType<GeminiModels['embedContent']>>;
    try {
      res = await models.embedContent({
        model: name,
        // The API refuses an empty text; a lone full stop embeds as "nothing in particular".
        contents: texts.map((t) => (t.trim() ? t : '.')),
        config: { taskType: kind === 'query' ? 'RETRIEVAL_QUERY' : 'RETRIEVAL_DOCUMENT', outputDimensionality: dim },
      });
    } catch (err) {
      // A body that is not JSON fails inside the SDK's parse: the service answered, but unusably. The
      // cause is left out: its text is already in the message, with the key scrubbed.
      const code = err instanceof SyntaxError ? 'GEMINI_MALFORMED' : 'GEMINI_UNAVAILABLE';
      throw new GeminiError(code, `Gemini embedContent (${name}) failed: ${describeError(err, o.apiKey)}`);
    }
    const got = res?.embeddings;
    if (!Array.isArray(got) || got.length !== texts.length) {
      throw new GeminiError('GEMINI_MALFORMED', `Expected ${texts.length} embeddings from ${label}, got ${Array.isArray(got) ? got.length : typeof got}`);
    }
    return got.map((e, i) => {
      const v = e?.values;
      if (!Array.isArray(v) || v.length !== dim || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new GeminiError('GEMINI_MALFORMED', `Expected embedding ${i} from ${label} to be ${dim} finite numbers, got ${Array.isArray(v) ? `${v.length} values` : typeof v}`);
      }
      try {
        return toUnit(Float32Array.from(v));
      } catch (err) {
        throw new GeminiError('GEMINI_MALFORMED', `Expected embedding ${i} from ${label} to be non-zero: ${describeError(err)}`);
      }
    });
  }

  return {
    model: label,
    dim,
    async embed(texts: string[], kind: EmbedKind = 'document'): Promise<Float32Array[]> {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) out.push(...(await batch(texts.slice(i, i + batchSize), kind)));
      return out;
    },
  };
}
