// The one config module: read YAML, validate with the schema (schema.ts), resolve paths and durations.
// Problems come back as `field: message` lines naming the file; nothing starts before they pass.
import fs from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { CONFIG_DEFAULT_FILE, CONFIG_ENV, DEFAULTS } from './defaults.js';
import { ConfigError } from '../core/errors.js';
import { crossFieldProblems, unknownDispatchAgents } from './rules.js';
import { agentNames } from './agent-names.js';
import { ConfigSchema, show, type Config } from './schema.js';
import { issueLines, withLines, yamlMessage } from './issues.js';
// Where the config comes from: --config, else $NIGHTSHIFT_CONFIG, else ./nightshift.yaml.
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  return path.resolve(cwd, flag ?? env[CONFIG_ENV] ?? CONFIG_DEFAULT_FILE);
}


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
  const result = validateConfig(data, file);
  // Each bad field with the line it is on (FILE:LINE), for an editor to jump to.
  if (result.problems) throw new ConfigError(file, withLines(result.problems, doc, lines, file));
  const unknown = unknownDispatchAgents(result.config, agentNames(result.config.agents_dir));
  if (unknown.length) throw new ConfigError(file, withLines(unknown, doc, lines, file));
  return result.config;
}

