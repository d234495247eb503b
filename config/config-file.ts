// Finding and reading the config file, and the config a build already validated
// (validated-cache.ts): on a hit neither the YAML parser nor the schema loads.
import path from 'node:path';
import { DEFAULTS } from './defaults.js';
import { configPath, readConfigText } from './config-path.js';
import { unknownDispatchAgents } from './rules.js';
import { agentNames } from './agent-names.js';
import type { Config } from './schema.js';
import { bundleBuild, validatedCache } from './validated-cache.js';

export { configPath, readConfigText };

// Pure: where a config text's state_dir most likely is, read off its top-level line without a
// YAML parser. Only where the kept validation is looked for: a hit must hold this exact text
// validated to this very state_dir, so a wrong guess can only miss.
export function stateDirGuess(text: string, file: string): string {
  const m = /^state_dir:[ \t]*(?:"([^"\\\n]*)"|'([^'\n]*)'|([^\s#'"][^#\n]*?))[ \t]*(?:#.*)?$/m.exec(text);
  const raw = m ? (m[1] ?? m[2] ?? m[3]) : DEFAULTS.state_dir;
  return path.resolve(path.dirname(file), raw || DEFAULTS.state_dir);
}

// The config, as loadConfig (config.ts) gives it, without loading the YAML parser or the schema
// when this build validated this exact text before; the agents named by dispatch are looked for
// every time.
export async function loadConfigCached(file: string, build: string | null = bundleBuild()): Promise<Config> {
  const text = readConfigText(file);
  const stateDir = stateDirGuess(text, file);
  const cache = validatedCache(stateDir, build);
  const key = `config:${file}`;
  const hit = cache?.get(key, text) as Config | undefined;
  if (hit && hit.state_dir === stateDir && !unknownDispatchAgents(hit, agentNames(hit.agents_dir)).length) return hit;
  // A miss, or a kept config whose dispatch names an agent gone since: validated in full, which
  // fails with that agent's line.
  const [{ readConfigDoc }, { configOfDoc }] = await Promise.all([import('./config-doc.js'), import('./config.js')]);
  const config = configOfDoc(readConfigDoc(file, text), file);
  if (config.state_dir === stateDir) cache?.put(key, text, config);
  return config;
}
