// Finding and reading the config file: the YAML, not yet the schema, so a command whose config
// is already known valid (validated-cache.ts) need not load the schema at all.
import fs from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { CONFIG_DEFAULT_FILE, CONFIG_ENV, DEFAULTS } from './defaults.js';
import { ConfigError } from '../core/errors.js';
import { withLines, yamlMessage } from './issues.js';
import { unknownDispatchAgents } from './rules.js';
import { agentNames } from './agent-names.js';
import type { Config } from './schema.js';
import { bundleBuild, validatedCache } from './validated-cache.js';
import { show } from './show.js';

// Where the config comes from: --config, else $NIGHTSHIFT_CONFIG, else ./nightshift.yaml.
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  return path.resolve(cwd, flag ?? env[CONFIG_ENV] ?? CONFIG_DEFAULT_FILE);
}

export type ConfigDoc = { text: string; doc: Document; lines: LineCounter; data: Record<string, unknown> | null | undefined };

// Reads the file and parses its YAML; throws ConfigError for a file that cannot be read, is not
// YAML, or is not a mapping.
export function readConfigDoc(file: string): ConfigDoc {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found (pass --config PATH or set NIGHTSHIFT_CONFIG)' : `cannot read: ${code ?? String(err)}`;
    throw new ConfigError(file, [why], { cause: err });
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter: lines });
  if (doc.errors.length) {
    // The library's own message keeps its snippet of the line and the caret under the column.
    throw new ConfigError(file, doc.errors.map((e) => `YAML: ${yamlMessage(e.message)}`));
  }
  const data = doc.toJS();
  if (data !== null && data !== undefined && (typeof data !== 'object' || Array.isArray(data))) {
    throw new ConfigError(file, [`(top level): Expected a mapping of settings, got ${show(data)}`]);
  }
  return { text, doc, lines, data };
}

// Dispatch rules must name agents that exist in agents_dir now, valid config or not.
export function checkDispatchAgents(config: Config, { doc, lines }: Pick<ConfigDoc, 'doc' | 'lines'>, file: string): void {
  const unknown = unknownDispatchAgents(config, agentNames(config.agents_dir));
  if (unknown.length) throw new ConfigError(file, withLines(unknown, doc, lines, file));
}

// The config, as loadConfig (config.ts) gives it, without loading the schema when this build has
// validated this exact text before (validated-cache.ts); the agents named by dispatch are looked
// for every time.
export async function loadConfigCached(file: string, build: string | null = bundleBuild()): Promise<Config> {
  const read = readConfigDoc(file);
  // Where this text's state would be: the cache sits there, so it is found before validating.
  const raw = read.data?.state_dir;
  const stateDir = path.resolve(path.dirname(file), typeof raw === 'string' && raw ? raw : DEFAULTS.state_dir);
  const cache = validatedCache(stateDir, build);
  const key = `config:${file}`;
  const hit = cache?.get(key, read.text) as Config | undefined;
  if (hit && hit.state_dir === stateDir) {
    checkDispatchAgents(hit, read, file);
    return hit;
  }
  const config = (await import('./config.js')).configOfDoc(read, file);
  if (config.state_dir === stateDir) cache?.put(key, read.text, config);
  return config;
}
