// Agents are `<agents_dir>/<name>.md`: YAML front matter (all optional, falling back to config)
// and the prompt as body. One zod schema, errors name the agent file.
import fs from 'node:fs';
import path from 'node:path';
import { LineCounter, parse as parseYaml, parseDocument } from 'yaml';
import { z } from 'zod';
import { issueLines, withLines, yamlMessage } from './issues.js';
import { duration, network, toolSet, type Config } from './schema.js';
import { didYouMean } from '../core/suggest.js';
import { ConfigError, UsageError } from '../core/errors.js';
import { NEVER_IN_SESSION } from './session-env.js';
import { AGENT_NAME, agentOf, collectAgents, readAgentFiles, splitFrontMatter, type Agent, type AgentText, type BrokenAgent } from './agent-file.js';

export { AGENT_NAME, offeredTools, ruleTool, splitFrontMatter, type Agent, type BrokenAgent } from './agent-file.js';

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

// Pure: what an agent file's text gives before the config's fallbacks: its front matter through
// the schema and its prompt; a ConfigError names each bad field with its line.
export function validateAgentText(file: string, text: string): AgentText {
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
  return { front: parsed.data, prompt };
}

// Pure: builds an Agent from the file text and the config it falls back to.
export function parseAgent(name: string, file: string, text: string, config: Config): Agent {
  return agentOf(name, file, validateAgentText(file, text), config);
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

// What the schema makes of an agent's front matter.
export type AgentFrontMatter = z.output<typeof AgentSchema>;
