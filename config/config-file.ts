// Finding and reading the config file, and the config a build already validated
// (validated-cache.ts): on a hit neither the YAML parser nor the schema loads.
import fs from 'node:fs';
import path from 'node:path';
import { CONFIG_DEFAULT_FILE, CONFIG_ENV, DEFAULTS } from './defaults.js';
import { ConfigError } from '../core/errors.js';
import { unknownDispatchAgents } from './rules.js';
import { agentNames } from './agent-names.js';
import type { Config } from './schema.js';
import { bundleBuild, validatedCache } from './validated-cache.js';

// Where the config comes from: --config, else $NIGHTSHIFT_CONFIG, else ./nightshift.yaml.
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  return path.resolve(cwd, flag ?? env[CONFIG_ENV] ?? CONFIG_DEFAULT_FILE);
}

export function readConfigText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found (pass --config PATH or set NIGHTSHIFT_CONFIG)' : `cannot read: ${code ?? String(err)}`;
    throw new ConfigError(file, [why], { cause: err });
  }
}

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
  const [{ readConfigDoc, checkDispatchAgents }, { configOfDoc }] = await Promise.all([import('./config-doc.js'), import('./config.js')]);
  const read = readConfigDoc(file, text);
  // A kept config whose dispatch names an agent gone since: the same error, with its line.
  if (hit && hit.state_dir === stateDir) checkDispatchAgents(hit, read, file);
  const config = configOfDoc(read, file);
  if (config.state_dir === stateDir) cache?.put(key, text, config);
  return config;
}
