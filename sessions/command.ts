// The claude command line for one session, and the environment it runs in.
import type { Agent } from '../daemon/agents.js';
import type { Config } from '../daemon/config.js';
import { memoryMcpConfig, MEMORY_TOOLS_RULE } from './mcp-config.js';

// `more`: the session's own flags (its state, its hook settings), placed before the variadic ones.
export function claudeArgs(agent: Agent, config: Config, sessionId: string, more: string[] = []): string[] {
  const args = [
    '-p', agent.prompt,
    // Variadic: it must be followed by another flag, never by the prompt.
    '--mcp-config', memoryMcpConfig(config.file, sessionId),
    '--output-format', 'stream-json',
    '--verbose',
    // The API's own per-call usage (message_start/message_delta) for a running cost estimate.
    '--include-partial-messages',
    '--max-turns', String(agent.maxTurns),
    '--model', agent.model,
    // The CLI checks this only after each call and overshoots; our estimate enforces it too.
    '--max-budget-usd', String(config.budget.max_usd_per_session),
    // The CLI would keep its own unredacted copy of the session under CLAUDE_CONFIG_DIR/projects.
    '--no-session-persistence',
    ...more,
    ...config.claude.extra_args,
  ];
  // Last, because --allowedTools takes every value up to the next flag.
  // MCP tools need an explicit allow; the memory server's are always allowed.
  if (agent.allowedTools) args.push('--allowedTools', ...agent.allowedTools, MEMORY_TOOLS_RULE);
  else if (typeof config.claude.permission_mode === 'string') args.push('--permission-mode', config.claude.permission_mode);
  return args;
}

// The child's environment: ours, unchanged (API keys and base URL pass through), minus
// CLAUDECODE, which a parent Claude Code session sets and which makes a nested `claude -p` misbehave.
export function claudeEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env };
  delete out.CLAUDECODE;
  return out;
}
