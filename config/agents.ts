// Agents are `<agents_dir>/<name>.md`: YAML front matter (all optional, falling back to config)
// and the prompt as body, checked by one zod schema (agent-schema.ts); errors name the agent file.
// agent-file.ts gives the same without loading the schema for a text this build validated before.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './schema.js';
import { didYouMean } from '../core/suggest.js';
import { ConfigError, UsageError } from '../core/errors.js';
import { AGENT_NAME, agentOf, collectAgents, readAgentFiles, type Agent, type BrokenAgent } from './agent-text.js';
import { validateAgentText } from './agent-schema.js';

export { AGENT_NAME, offeredTools, ruleTool, type Agent, type BrokenAgent } from './agent-text.js';
export { splitFrontMatter, validateAgentText, type AgentFrontMatter, type AgentText } from './agent-schema.js';

// Pure: builds an Agent from the file text and the config it falls back to.
export function parseAgent(name: string, file: string, text: string, config: Config): Agent {
  return agentOf(name, file, validateAgentText(file, text), config);
}

// Every agent in agents_dir, sorted by name. A bad file fails the whole listing, naming it.
export function loadAgents(config: Config): Agent[] {
  return readAgentFiles(config).map(({ name, file, text }) => {
    if (!AGENT_NAME.test(name)) throw new ConfigError(file, [`(file name): Expected an agent name of a-z, 0-9, - and _, got \`${name}\``], { what: 'agent file' });
    if (text instanceof Error) throw text;
    return parseAgent(name, file, text, config);
  });
}

// Every agent that validates, and the ones that do not: one bad file never stops the rest (a
// timer's every tick would fail on it). agents_dir itself unreadable still throws.
export function readAgents(config: Config): { agents: Agent[]; broken: BrokenAgent[] } {
  return collectAgents(config, readAgentFiles(config), validateAgentText);
}

// One agent by name; an unknown name is a usage error that lists the known ones.
export function loadAgent(config: Config, name: string): Agent {
  if (!AGENT_NAME.test(name)) throw new UsageError(`Expected an agent name of a-z, 0-9, - and _, got \`${name}\``);
  const file = path.join(config.agents_dir, `${name}.md`);
  if (!fs.existsSync(file)) {
    const known = fs.existsSync(config.agents_dir) ? fs.readdirSync(config.agents_dir).filter((f) => f.endsWith('.md')).map((f) => f.slice(0, -3)) : [];
    throw new UsageError(`Unknown agent \`${name}\`: no ${file} (known: ${known.join(', ') || 'none'}).${didYouMean(name, known)}`);
  }
  return parseAgent(name, file, fs.readFileSync(file, 'utf8'), config);
}
