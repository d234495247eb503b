// Which embedder the store gets: Gemini when GEMINI_API_KEY is set (the offline arm as its
// per-call fallback), else the offline arm chosen by `memory.embeddings`.
import { createGeminiEmbedder } from './embeddings-gemini.js';
import { withFallback } from './embeddings-fallback.js';
import { createUseEmbedder } from './embeddings-use.js';
import { geminiSettingsFrom, type GeminiConfig, type LogSink } from '../gemini-client.js';
import type { Embedder } from '../types.js';

// The offline arm: `auto` is the measured default, `none` is lexical and structure only, `use` is
// Universal Sentence Encoder lite (offline, ~290 MB RSS).
export const EMBEDDING_CHOICES = ['auto', 'none', 'use'] as const;
export type EmbeddingChoice = (typeof EMBEDDING_CHOICES)[number];

// Measured by bench/embeddings.ts on locomo-dev (231 questions): USE alone reaches 0.356 at @10
// against BM25's 0.610; fused with BM25 by rank it costs 0.07-0.12 at @1 at every weight tried and
// gains at @10 only at weight 0.25 (+0.03), for ~290 MB RSS. It does not earn its memory, so the
// offline default is no vectors; USE stays an opt-in.
export const OFFLINE_DEFAULT: Exclude<EmbeddingChoice, 'auto'> = 'none';

export type EmbedderConfig = GeminiConfig & { memory?: { embeddings?: string | null } | null };

// The offline embedder a choice names, or null for none.
export function offlineEmbedder(choice: string | null | undefined): Embedder | null {
  const c = !choice || choice === 'auto' ? OFFLINE_DEFAULT : choice;
  if (c === 'none') return null;
  if (c === 'use') return createUseEmbedder();
  throw new Error(`Expected \`memory.embeddings\` to be one of ${EMBEDDING_CHOICES.join(', ')}, got \`${choice}\``);
}

/** The store's embedder: Gemini (with the offline arm as fallback) when GEMINI_API_KEY is set, else the offline arm, or null for none. Nothing loads until the first `embed`. */
export function makeEmbedder(config: EmbedderConfig, env: NodeJS.ProcessEnv, logger: LogSink): Embedder | null {
  const offline = offlineEmbedder(config.memory?.embeddings);
  const s = geminiSettingsFrom(config, env);
  if (!s) return offline;
  const gemini = createGeminiEmbedder({ apiKey: s.apiKey, baseUrl: s.baseUrl, model: s.embeddingModel });
  return withFallback(gemini, offline, logger);
}
