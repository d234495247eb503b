// Agents are `<agents_dir>/<name>.md`: YAML front matter (all optional, falling back to config)
// and the prompt as body. One zod schema, errors name the agent file.
import fs from 'node:fs';
import path from 'node:path';
import { LineCounter, parse as parseYaml, parseDocument } from 'yaml';
import { z } from 'zod';
import { issueLines, withLines, yamlMessage } from './issues.js';
import { duration, network, toolSet, type Config } from './schema.js';
import type { NetworkPolicy } from './egress-policy.js';
import { didYouMean } from '../core/suggest.js';
import { ConfigError, UsageError } from '../core/errors.js';
import { NEVER_IN_SESSION } from './session-env.js';

const AgentSchema = z.strictObject({
  name: z.string().optional(), // informative only: the file name is the agent's name
  description: z.string().default(''),
  model: z.string().min(1).optional(),
  max_turns: z.number().int().positive().optional(),
  timeout: duration(1000).optional(),
  idle_timeout: duration(1000).optional(),
  allowed_tools: z.array(z.string().min(1)).min(1).optional(),
  // The built-in tools this agent's sessions get (else claude.tools); with allowed_tools, at most
  // those its rules name (offeredTools).
  tools: toolSet.optional(),
  max_runs_per_day: z.number().int().positive().optional(),
  // Hosts its sessions may reach (the site's `network:` when absent): none, open, or a list.
  network: network.optional(),
  // Variables of the supervisor's environment passed into this agent's sessions (by name only).
  env: z
    .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'Expected a variable name'))
    .default([])
    .superRefine((names, ctx) => {
      names.forEach((n, i) => {
        if (NEVER_IN_SESSION.has(n)) ctx.addIssue({ code: 'custom', path: [i], message: `Expected a variable a session may hold, got \`${n}\` (the supervisor's own; never passed to a session)` });
      });
    }),
});

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
};

export const AGENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

// Splits `---\nyaml\n---\nbody`; a file without front matter is all prompt.
export function splitFrontMatter(text: string): { data: string | null; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  return m ? { data: m[1], body: m[2] } : { data: null, body: text };
}

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

// Pure: builds an Agent from the file text and the config it falls back to.
export function parseAgent(name: string, file: string, text: string, config: Config): Agent {
  const { data, body } = splitFrontMatter(text);
  // A front matter that never closes would be read as prompt text with every default.
  if (data === null && /^---[ \t]*\r?\n/.test(text)) throw new ConfigError(file, ['front matter: opened with `---` on the first line and never closed with a `---` line'], { what: 'agent file' });
  let raw: unknown = {};
  if (data !== null) {
    try {
      raw = parseYaml(data) ?? {};
    } catch (err) {
      throw new ConfigError(file, [`front matter: ${yamlMessage((err as Error).message)}`], { cause: err, what: 'agent file' });
    }
  }
  const parsed = AgentSchema.safeParse(raw);
  if (!parsed.success) {
    // Each bad field with its line in the file (the front matter begins on line 2).
    const lines = new LineCounter();
    const doc = parseDocument(data ?? '', { lineCounter: lines });
    throw new ConfigError(file, withLines(issueLines(parsed.error.issues, raw, AgentSchema), doc, lines, file, 1), { what: 'agent file' });
  }
  const prompt = body.trim();
  if (!prompt) throw new ConfigError(file, ['(body): Expected a prompt after the front matter, got nothing'], { what: 'agent file' });
  const a = parsed.data;
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
  };
}

// Every agent in agents_dir, sorted by name. A bad file fails the whole listing, naming it.
export function loadAgents(config: Config): Agent[] {
  let names: string[];
  try {
    names = fs.readdirSync(config.agents_dir).filter((f) => f.endsWith('.md')).sort();
  } catch (err) {
    throw new ConfigError(config.file, [`agents_dir: cannot read ${config.agents_dir}: ${(err as NodeJS.ErrnoException).code}`], { cause: err });
  }
  return names.map((f) => {
    const name = f.slice(0, -3);
    const file = path.join(config.agents_dir, f);
    if (!AGENT_NAME.test(name)) throw new ConfigError(file, [`(file name): Expected an agent name of a-z, 0-9, - and _, got \`${name}\``], { what: 'agent file' });
    return parseAgent(name, file, fs.readFileSync(file, 'utf8'), config);
  });
}

// An agent file that does not validate: named, with its problems, so that the others still run.
export type BrokenAgent = { name: string; file: string; problems: string[] };

// Every agent that validates, and the ones that do not: one bad file never stops the rest (a
// timer's every tick would fail on it). agents_dir itself unreadable still throws.
export function readAgents(config: Config): { agents: Agent[]; broken: BrokenAgent[] } {
  let names: string[];
  try {
    names = fs.readdirSync(config.agents_dir).filter((f) => f.endsWith('.md')).sort();
  } catch (err) {
    throw new ConfigError(config.file, [`agents_dir: cannot read ${config.agents_dir}: ${(err as NodeJS.ErrnoException).code}`], { cause: err });
  }
  const agents: Agent[] = [];
  const broken: BrokenAgent[] = [];
  for (const f of names) {
    const name = f.slice(0, -3);
    const file = path.join(config.agents_dir, f);
    try {
      if (!AGENT_NAME.test(name)) throw new ConfigError(file, [`(file name): Expected an agent name of a-z, 0-9, - and _, got \`${name}\``], { what: 'agent file' });
      agents.push(parseAgent(name, file, fs.readFileSync(file, 'utf8'), config));
    } catch (err) {
      broken.push({ name, file, problems: err instanceof ConfigError ? err.problems : [`cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`] });
    }
  }
  return { agents, broken };
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
