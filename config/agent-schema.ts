// An agent file's front matter through its zod schema, and its prompt: what a file's text gives
// before the config's fallbacks (agent-text.ts). Loaded only for a text not validated before.
import { LineCounter, parse as parseYaml, parseDocument } from 'yaml';
import { z } from 'zod';
import { issueLines, withLines, yamlMessage } from './issues.js';
import { duration, network, toolSet } from './schema.js';
import { ConfigError } from '../core/errors.js';
import { NEVER_IN_SESSION } from './session-env.js';

// Splits `---\nyaml\n---\nbody`; a file without front matter is all prompt.
export function splitFrontMatter(text: string): { data: string | null; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  return m ? { data: m[1], body: m[2] } : { data: null, body: text };
}

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
  // In a fleet (docs/fleet.md), the host whose tick runs it (`fleet.host` there): where its memory
  // is. The other hosts pass it over. Without a fleet, unread.
  host: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'Expected a host name like `vps-1` (the `fleet.host` of the host that runs it)').optional(),
  // Hosts its sessions may reach (the site's `network:` when absent): none, open, or a list.
  network: network.optional(),
  // Server tools (a tool type, e.g. web_fetch_20250910) its calls may carry though the meter knows
  // no price for them: sent uncounted. Any other unknown server tool is refused (budget/server-tools.ts).
  server_tools: z.array(z.string().min(1)).default([]),
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

// What the schema makes of an agent's front matter, and the prompt after it.
export type AgentFrontMatter = z.output<typeof AgentSchema>;
export type AgentText = { front: AgentFrontMatter; prompt: string };
