// A dream with the operator's config: Gemini for abstractions and contradiction checks when a key
// is set, offline otherwise. Shared by `nightshift memory dream` and the tick.
import type { Config } from '../../config/schema.js';
import { dream, type DreamOptions, type DreamReport } from './dream.js';
import { geminiModels, geminiSettingsFrom } from '../gemini-client.js';
import type { MemoryStore } from '../store.js';

export function dreamGemini(config: Config, env: NodeJS.ProcessEnv): DreamOptions['gemini'] {
  const g = geminiSettingsFrom(config as never, env);
  return g ? { models: geminiModels(g), model: g.model ?? 'gemini-2.5-flash', apiKey: g.apiKey } : null;
}

export function dreamWithConfig(store: MemoryStore, config: Config, env: NodeJS.ProcessEnv, opts: Omit<DreamOptions, 'gemini'>): Promise<DreamReport> {
  return dream(store, { ...opts, gemini: dreamGemini(config, env) });
}
