// The one door to Gemini: @google/genai's `models` for the Developer API, imported only when first
// used. A configured `base_url` points it at a proxy or at the loopback imitation in tests.

import { loadOptional, type Importer } from '../core/optional-package.js';

// The part of `ai.models` we call; tests may hand in their own.
export type GeminiModels = {
  embedContent(params: {
    model: string;
    contents: string[];
    config?: { taskType?: string; outputDimensionality?: number };
  }): Promise<{ embeddings?: Array<{ values?: number[] }> }>;
  generateContent(params: {
    model: string;
    contents: string;
    config?: { temperature?: number; maxOutputTokens?: number; thinkingConfig?: { thinkingBudget?: number }; responseMimeType?: string; responseSchema?: unknown };
  }): Promise<{ text?: string }>;
};

export type GeminiSettings = {
  apiKey: string;
  baseUrl?: string | null;
  timeoutMs?: number; // per HTTP attempt; the SDK does not retry unless asked, and we do not ask
  load?: Importer; // how @google/genai is imported (tests hand in one that fails)
};

// Pino-shaped, the subset used here.
export type LogSink = { warn(obj: object, msg?: string): void; debug?(obj: object, msg?: string): void };

// Failures a caller can act on: the service did not answer, or answered something unusable.
export class GeminiError extends Error {
  constructor(readonly code: 'GEMINI_UNAVAILABLE' | 'GEMINI_MALFORMED', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GeminiError';
  }
}

// A client whose SDK loads on the first call; the key goes only to the SDK, which sends it as the
// `x-goog-api-key` header.
export function geminiModels(s: GeminiSettings): GeminiModels {
  let models: Promise<GeminiModels> | null = null;
  const get = () =>
    (models ??= loadOptional<typeof import('@google/genai')>('@google/genai', 'Gemini (GEMINI_API_KEY)', s.load).then(({ GoogleGenAI }) => {
      const httpOptions: { baseUrl?: string; timeout?: number } = { timeout: s.timeoutMs ?? 15_000 };
      if (s.baseUrl) httpOptions.baseUrl = s.baseUrl;
      // vertexai: false so GOOGLE_GENAI_USE_VERTEXAI in the environment cannot reroute the key.
      return new GoogleGenAI({ apiKey: s.apiKey, vertexai: false, httpOptions }).models as unknown as GeminiModels;
    }));
  return {
    embedContent: async (p) => (await get()).embedContent(p),
    generateContent: async (p) => (await get()).generateContent(p),
  };
}

// An error message safe to log: the key never appears in it, whatever a proxy echoed back.
export function describeError(err: unknown, apiKey?: string): string {
  let msg = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (apiKey && apiKey.length >= 4) msg = msg.split(apiKey).join('[redacted]');
  return msg.length > 500 ? `${msg.slice(0, 500)}…` : msg;
}


// The config fields Gemini reads (config/config.ts `gemini`), loosely typed so this module does not
// depend on the daemon.
export type GeminiConfig = { gemini?: { model?: string; embedding_model?: string; base_url?: string | null } | null };

// Settings when GEMINI_API_KEY is set, else null. The key comes from the injected environment only.
export function geminiSettingsFrom(config: GeminiConfig, env: NodeJS.ProcessEnv): (GeminiSettings & { model?: string; embeddingModel?: string }) | null {
  const apiKey = env.GEMINI_API_KEY?.trim();
  if (!apiKey) return null;
  const g = config.gemini ?? {};
  return { apiKey, baseUrl: g.base_url ?? null, model: g.model, embeddingModel: g.embedding_model };
}
