// The one config module: read YAML, validate with the schema (schema.ts), resolve paths and durations.
// Problems come back as `field: message` lines naming the file; nothing starts before they pass.
import path from 'node:path';
import { DEFAULTS } from './defaults.js';
import { ConfigError } from '../core/errors.js';
import { crossFieldProblems } from './rules.js';
import { ConfigSchema, type Config } from './schema.js';
import { issueLines, withLines } from './issues.js';
import { configPath } from './config-path.js';
import { checkDispatchAgents, readConfigDoc, type ConfigDoc } from './config-doc.js';

export { configPath };

// Pure: validates parsed YAML; returns the config or the problems.
export function validateConfig(data: unknown, file: string): { config: Config; problems?: undefined } | { config?: undefined; problems: string[] } {
  const parsed = ConfigSchema.safeParse(data ?? {});
  if (!parsed.success) {
    return { problems: issueLines(parsed.error.issues, data, ConfigSchema) };
  }
  const dir = path.dirname(file);
  const c = parsed.data;
  const abs = (p: string) => path.resolve(dir, p);
  // A command with a slash is a path relative to the config; a bare name is looked up on PATH.
  const command = c.claude.command.includes('/') ? abs(c.claude.command) : c.claude.command;
  const config: Config = {
    ...c,
    vault: abs(c.vault),
    vaults: Object.fromEntries(Object.entries(c.vaults).map(([agent, dir]) => [agent, abs(dir)])),
    state_dir: abs(c.state_dir),
    log_dir: abs(c.log_dir),
    agents_dir: abs(c.agents_dir),
    claude: { ...c.claude, command },
    git: { ...c.git, lock_file: c.git.lock_file ? abs(c.git.lock_file) : path.join(abs(c.state_dir), 'git.lock') },
    memory: { ...c.memory, db: c.memory.db ? abs(c.memory.db) : path.join(abs(c.state_dir), DEFAULTS.memory.db) },
    hooks: { ...c.hooks, extra_dirs: c.hooks.extra_dirs.map(abs) },
    file,
    dir,
  };
  const problems = crossFieldProblems(config);
  return problems.length ? { problems } : { config };
}

// Reads and validates the file; throws ConfigError naming the file and each bad field.
export function loadConfig(file: string): Config {
  return configOfDoc(readConfigDoc(file), file);
}

// The config a read file gives, or a ConfigError with each bad field and its line.
export function configOfDoc({ doc, lines, data }: ConfigDoc, file: string): Config {
  const result = validateConfig(data, file);
  // Each bad field with the line it is on (FILE:LINE), for an editor to jump to.
  if (result.problems) throw new ConfigError(file, withLines(result.problems, doc, lines, file));
  checkDispatchAgents(result.config, { doc, lines }, file);
  return result.config;
}
