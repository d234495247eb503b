// The claude command line for one session. Its environment is config/session-env.ts.
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { MEMORY_TOOLS_RULE } from '../../memory/mcp/mcp-config.js';

// `more`: the session's own flags (its memory server, state and hook settings), placed before the
// variadic ones.
export function claudeArgs(agent: Agent, config: Config, more: string[] = []): string[] {
  const args = [
    '-p', agent.prompt,
    // One comma-joined value, followed by a flag: --tools takes every value up to the next one.
    ...(agent.tools === 'default' ? [] : ['--tools', agent.tools.join(',')]),
    '--output-format', 'stream-json',
    '--verbose',
    // No --include-partial-messages: its every delta a line to read cost ~1.5 ms of our CPU a call
    // (docs/benchmarks.md). The cost is the API proxy's meter's, and the idle limit's sign of life
    // while an answer streams is the proxy's bytes (sessions/run/runner.ts signsOfLife).
    '--max-turns', String(agent.maxTurns),
    '--model', agent.model,
    // The CLI checks this only after each call and overshoots; our estimate enforces it too.
    '--max-budget-usd', String(config.budget.max_usd_per_session),
    // The CLI would keep its own unredacted copy of the session under CLAUDE_CONFIG_DIR/projects.
    '--no-session-persistence',
    // The CLI's configuration comes from the supervisor alone: the vault's .claude/settings.json,
    // .mcp.json and CLAUDE.md are what an earlier session wrote (an API endpoint, permissions,
    // disableAllHooks, a server to spawn). `user` is the private HOME, made fresh per session.
    ...(config.claude.project_settings ? [] : ['--setting-sources', 'user', '--strict-mcp-config']),
    ...more,
    ...config.claude.extra_args,
  ];
  // Last, because --allowedTools takes every value up to the next flag.
  // MCP tools need an explicit allow; the memory server's are always allowed.
  if (agent.allowedTools) args.push('--allowedTools', ...agent.allowedTools, MEMORY_TOOLS_RULE);
  else if (typeof config.claude.permission_mode === 'string') args.push('--permission-mode', config.claude.permission_mode);
  return args;
}

