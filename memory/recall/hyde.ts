// HyDE query expansion: Gemini writes the passage that would answer the query, and the query is
// searched together with it, so a question finds memories worded like answers. Best effort: any
// failure, refusal or empty answer gives back the query as it was.
import { describeError, geminiModels, geminiSettingsFrom, type GeminiConfig, type GeminiModels, type LogSink } from '../gemini-client.js';

export const HYDE_MODEL = 'gemini-2.5-flash';
const MAX_PASSAGE = 1000; // characters of the hypothetical passage kept

export type HydeDeps = {
  models: GeminiModels;
  model?: string;
  logger?: LogSink | null;
  apiKey?: string; // only to keep it out of logged errors
};

export function hydePrompt(query: string): string {
  return (
    'Write a short passage, at most three sentences, that answers the question or request below, ' +
    'as it might appear in a note or a conversation. Invent plausible specifics where needed. ' +
    `Reply with the passage only.\n\n${query}`
  );
}

/** The query followed by a hypothetical answer passage, or the query unchanged on any failure. */
export async function expandQuery(query: string, deps: HydeDeps): Promise<string> {
  if (!query.trim()) return query;
  const model = deps.model ?? HYDE_MODEL;
  try {
    const res = await deps.models.generateContent({
      model,
      contents: hydePrompt(query),
      // No thinking: this is on the query path, and a plain guess is all HyDE needs.
      config: { temperature: 0, maxOutputTokens: 256, thinkingConfig: { thinkingBudget: 0 } },
    });
    const text = typeof res?.text === 'string' ? res.text.trim() : '';
    if (!text) {
      deps.logger?.warn({ model }, 'memory: query expansion returned no text, searching the query as it is');
      return query;
    }
    return `${query}\n${text.slice(0, MAX_PASSAGE)}`;
  } catch (err) {
    deps.logger?.warn({ err: describeError(err, deps.apiKey), model }, 'memory: query expansion failed, searching the query as it is');
    return query;
  }
}

// An expander when GEMINI_API_KEY is set (config `gemini.model`, `gemini.base_url`), else null.
export function makeQueryExpander(config: GeminiConfig, env: NodeJS.ProcessEnv, logger: LogSink | null, timeoutMs = 8000): ((query: string) => Promise<string>) | null {
  const s = geminiSettingsFrom(config, env);
  if (!s) return null;
  const models = geminiModels({ apiKey: s.apiKey, baseUrl: s.baseUrl, timeoutMs });
  return (query) => expandQuery(query, { models, model: s.model, logger, apiKey: s.apiKey });
}
