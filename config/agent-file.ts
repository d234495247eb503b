// The agents as readAgents and loadAgent (agents.ts) give them, without loading the schema for a
// file whose exact text this build has validated before (validated-cache.ts): a timer's tick
// over unchanged agents never loads it.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './schema.js';
import type { AgentText } from './agent-schema.js';
import { AGENT_NAME, agentOf, collectAgents, readAgentFiles, type Agent, type AgentFile, type BrokenAgent } from './agent-text.js';
import { bundleBuild, validatedCache } from './validated-cache.js';

export type { Agent, BrokenAgent };

// As readAgents (agents.ts), loading the schema only for a text not validated before.
export async function readAgentsCached(config: Config, build: string | null = bundleBuild()): Promise<{ agents: Agent[]; broken: BrokenAgent[] }> {
  const files = readAgentFiles(config);
  const cache = validatedCache(config.state_dir, build);
  const known = (f: AgentFile) => (typeof f.text === 'string' && cache ? (cache.get(`agent:${f.file}`, f.text) as AgentText | undefined) : undefined);
  const schema = files.every((f) => !AGENT_NAME.test(f.name) || typeof f.text !== 'string' || known(f)) ? null : await import('./agents.js');
  return collectAgents(config, files, (file, text) => {
    const hit = known({ name: '', file, text });
    if (hit) return hit;
    const v = schema!.validateAgentText(file, text);
    cache?.put(`agent:${file}`, text, v);
    return v;
  });
}

// As loadAgent (agents.ts), loading the schema only for a text not validated before.
export async function loadAgentCached(config: Config, name: string, build: string | null = bundleBuild()): Promise<Agent> {
  const file = path.join(config.agents_dir, `${name}.md`);
  let text: string | null = null;
  try {
    if (AGENT_NAME.test(name)) text = fs.readFileSync(file, 'utf8');
  } catch {
    // unknown or unreadable: loadAgent says which, with the known names
  }
  const cache = text === null ? null : validatedCache(config.state_dir, build);
  const hit = text !== null ? (cache?.get(`agent:${file}`, text) as AgentText | undefined) : undefined;
  if (hit) return agentOf(name, file, hit, config);
  const { loadAgent, validateAgentText } = await import('./agents.js');
  if (text === null) return loadAgent(config, name);
  const v = validateAgentText(file, text);
  cache?.put(`agent:${file}`, text, v);
  return agentOf(name, file, v, config);
}
