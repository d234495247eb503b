// Pure: names that are probably typos, said as warnings (never errors: a gateway's model or a
// variable an agent passes on may be a name nightshift does not know). A model or an env file
// variable is warned about only when it is close to a name nightshift knows, and then the warning
// names the file and the closest name.
import { closest } from '../core/suggest.js';
import { readAgentsCached, type Agent } from './agent-file.js';
import type { EnvFileResult } from './env-file.js';
import type { Config } from './schema.js';
import { NEVER_IN_SESSION } from './session-env.js';

// The CLI's model aliases (claude --help names fable, opus and sonnet; `[1m]` asks for the long
// context). A full name (claude-...) is the CLI's to check.
export const MODEL_ALIASES = ['default', 'fable', 'opus', 'sonnet', 'haiku', 'opusplan'];

export function modelWarning(model: string, where: string, priced: readonly string[] = []): string | null {
  const base = model.replace(/\[1m\]$/i, '');
  if (MODEL_ALIASES.includes(base.toLowerCase()) || /^claude-/i.test(base) || priced.some((p) => model.includes(p))) return null;
  const near = closest(base, MODEL_ALIASES);
  return near ? `${where}: \`${model}\` is not a model the CLI knows. Did you mean \`${near}\`?` : null;
}

// Every model this site names: the config's, and each agent's own (front matter) where it differs.
export function modelWarnings(config: Config, agents: readonly Agent[]): string[] {
  const priced = Object.keys(config.budget.prices ?? {});
  const out = [modelWarning(config.claude.model, `${config.file}: claude.model`, priced)];
  for (const a of agents) if (a.model !== config.claude.model) out.push(modelWarning(a.model, `${a.file}: model`, priced));
  return out.filter((w): w is string => w !== null);
}

// The model one agent's sessions run with, warned about where it is set.
export function agentModelWarning(config: Config, agent: Agent): string | null {
  const priced = Object.keys(config.budget.prices ?? {});
  return agent.model === config.claude.model ? modelWarning(agent.model, `${config.file}: claude.model`, priced) : modelWarning(agent.model, `${agent.file}: model`, priced);
}

// The variables nightshift itself reads, or passes into a session (config/session-env.ts).
export const KNOWN_ENV = [
  ...NEVER_IN_SESSION,
  'NIGHTSHIFT_PING_URL', 'ANTHROPIC_MODEL', 'ANTHROPIC_SMALL_FAST_MODEL', 'ANTHROPIC_DEFAULT_OPUS_MODEL', 'ANTHROPIC_DEFAULT_SONNET_MODEL',
  'ANTHROPIC_DEFAULT_HAIKU_MODEL', 'API_TIMEOUT_MS', 'MAX_THINKING_TOKENS', 'BASH_DEFAULT_TIMEOUT_MS', 'BASH_MAX_TIMEOUT_MS', 'MCP_TIMEOUT',
  'MCP_TOOL_TIMEOUT', 'IS_SANDBOX', 'NO_COLOR', 'TZ', 'LANG', 'LANGUAGE', 'PATH', 'TERM', 'COLORTERM', 'USER', 'LOGNAME', 'SHELL',
];
// Whole families the CLI reads: never a typo of one of ours.
const FAMILIES = /^(CLAUDE_CODE_|DISABLE_|LC_)/;

// The env file's variables that look like a misspelt known one: `name` is not known, and a known
// name is close to it. `passed`: names an agent's `env:` passes on (never warned about).
export function envNameWarnings(names: readonly string[], file: string, passed: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const n of names) {
    if (KNOWN_ENV.includes(n) || FAMILIES.test(n) || passed.includes(n)) continue;
    const near = closest(n, KNOWN_ENV);
    if (near) out.push(`${file}: \`${n}\` is not a variable nightshift reads. Did you mean \`${near}\`?`);
  }
  return out;
}

// The env file's likely typos; the agents are read only when there is one, for the names their
// `env:` passes on.
export async function envFileTypos(f: EnvFileResult, config: Config): Promise<string[]> {
  if (!envNameWarnings(f.loaded, f.file).length) return [];
  let passed: string[] = [];
  try {
    passed = (await readAgentsCached(config)).agents.flatMap((a) => a.env);
  } catch {
    // agents_dir unreadable: the commands that need it say so.
  }
  return envNameWarnings(f.loaded, f.file, passed);
}
