// An agent without its schema: the Agent type, the config's fallbacks, the listing of agents_dir.
// Light: the schema (agent-schema.ts) loads only for a file's text not validated before.
import fs from 'node:fs';
import path from 'node:path';
import type { NetworkPolicy } from './egress-policy.js';
import type { Config } from './schema.js';
import type { AgentText } from './agent-schema.js';
import { ConfigError } from '../core/errors.js';

export type Agent = {
  name: string;
  file: string;
  description: string;
  prompt: string;
  model: string;
  maxTurns: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  // Explicit allow-list, or null to use claude.permission_mode.
  allowedTools: string[] | null;
  // The built-in tool set (--tools): names, or `default` for the CLI's whole set.
  tools: string[] | 'default';
  maxRunsPerDay: number | null;
  // Variable names passed from the supervisor's environment into the session.
  env: string[];
  // What its sessions may reach through the egress proxy (`none`: no proxy at all).
  network: NetworkPolicy;
  // Server tools allowed uncounted (`server_tools:`).
  serverTools: string[];
  // The fleet's host that runs it (`host:`); null: any.
  host?: string | null;
};

export const AGENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

// The built-in tool a permission rule names (`Bash(git:*)` -> Bash); MCP tools are not built in.
export const ruleTool = (rule: string): string | null => (/^mcp__/.test(rule) ? null : (/^([A-Za-z][A-Za-z0-9_]*)/.exec(rule)?.[1] ?? null));

// Pure: the built-in tools (--tools) a session is offered. Without an allow-list, the agent's own
// set, else the site's (claude.tools). With one (the agent's allowed_tools, or claude.permission_mode
// as a list), exactly the built-in tools its rules name (`Bash(git:*)` names Bash), narrowed further
// by the agent's own `tools:` list, never widened: an unnamed tool offered would still run (the CLI
// approves "read-only" Bash commands and Read in the vault without any rule). The memory server's
// tools are MCP tools, outside this set, and always allowed (sessions/run/command.ts).
export function offeredTools(site: string[] | 'default', own: string[] | 'default' | undefined, allowed: string[] | null): string[] | 'default' {
  if (!allowed) return own ?? site;
  const named = [...new Set(allowed.map(ruleTool).filter((t): t is string => t !== null))];
  return Array.isArray(own) ? named.filter((t) => own.includes(t)) : named;
}

// Pure: the agent a validated file gives under this config.
export function agentOf(name: string, file: string, { front: a, prompt }: AgentText, config: Config): Agent {
  const permission = config.claude.permission_mode;
  const allowed = a.allowed_tools ?? (Array.isArray(permission) ? permission : null);
  return {
    name,
    file,
    description: a.description,
    prompt,
    model: a.model ?? config.claude.model,
    maxTurns: a.max_turns ?? config.claude.max_turns,
    timeoutMs: a.timeout ?? config.claude.timeout,
    idleTimeoutMs: a.idle_timeout ?? config.claude.idle_timeout,
    allowedTools: allowed,
    tools: offeredTools(config.claude.tools, a.tools, allowed),
    maxRunsPerDay: a.max_runs_per_day ?? null,
    env: a.env,
    network: a.network ?? config.network,
    serverTools: a.server_tools ?? [],
    host: a.host ?? null,
  };
}

// An agent file that does not validate: named, with its problems, so that the others still run.
export type BrokenAgent = { name: string; file: string; problems: string[] };

// Each `.md` in agents_dir, sorted by name, with its text or why it could not be read; agents_dir
// itself unreadable throws.
export type AgentFile = { name: string; file: string; text: string | Error };
export function readAgentFiles(config: Config): AgentFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(config.agents_dir).filter((f) => f.endsWith('.md')).sort();
  } catch (err) {
    throw new ConfigError(config.file, [`agents_dir: cannot read ${config.agents_dir}: ${(err as NodeJS.ErrnoException).code}`], { cause: err });
  }
  return names.map((f) => {
    const file = path.join(config.agents_dir, f);
    let text: string | Error;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      text = err as Error;
    }
    return { name: f.slice(0, -3), file, text };
  });
}

// Every agent that validates, and the ones that do not.
export function collectAgents(config: Config, files: AgentFile[], validate: (file: string, text: string) => AgentText): { agents: Agent[]; broken: BrokenAgent[] } {
  const agents: Agent[] = [];
  const broken: BrokenAgent[] = [];
  for (const { name, file, text } of files) {
    try {
      if (!AGENT_NAME.test(name)) throw new ConfigError(file, [`(file name): Expected an agent name of a-z, 0-9, - and _, got \`${name}\``], { what: 'agent file' });
      if (text instanceof Error) throw text;
      agents.push(agentOf(name, file, validate(file, text), config));
    } catch (err) {
      broken.push({ name, file, problems: err instanceof ConfigError ? err.problems : [`cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`] });
    }
  }
  return { agents, broken };
}
