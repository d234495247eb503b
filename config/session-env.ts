// The session's environment, built from an allowlist: never the supervisor's whole environment.
// The model API is reached through the supervisor's proxy with a per-session token, so no
// long-lived credential is ever among these variables.

// Always passed when set: what a shell and the CLI need to behave.
const BASE = ['PATH', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'COLORTERM', 'NO_COLOR', 'USER', 'LOGNAME', 'SHELL'];
// The CLI's own settings (models, timeouts, retries, telemetry switches).
const CLI_PATTERNS = [/^LC_[A-Z_]+$/, /^CLAUDE_CODE_[A-Z0-9_]+$/, /^DISABLE_[A-Z0-9_]+$/, /^ANTHROPIC_(DEFAULT_[A-Z0-9_]+_MODEL|MODEL|SMALL_FAST_MODEL)$/, /^(API_TIMEOUT_MS|MAX_THINKING_TOKENS|BASH_DEFAULT_TIMEOUT_MS|BASH_MAX_TIMEOUT_MS|MCP_TIMEOUT|MCP_TOOL_TIMEOUT|IS_SANDBOX)$/];

// The variables by which tools find a proxy (curl, git, pip, node, the CLI itself).
const PROXY_VARS = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY'].flatMap((v) => [v, v.toLowerCase()]);
// Never proxied: the supervisor's endpoints on the wall's loopback. The CLI sends its API calls
// through HTTPS_PROXY (even to an http:// base URL) unless NO_PROXY names the host (probed, 2.1.197).
export const NO_PROXY = '127.0.0.1,localhost,::1';

// Never inside a session, even when an agent's `env:` names them: the supervisor's credentials and
// its own configuration.
export const NEVER_IN_SESSION = new Set([
  'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_UNIX_SOCKET',
  'DISCORD_WEBHOOK_URL', 'NIGHTSHIFT_WEBHOOK_URL', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'NIGHTSHIFT_CONFIG', 'NIGHTSHIFT_LOG_LEVEL', 'NIGHTSHIFT_ENV_FILE',
  // The fleet's database: its URL may carry a password, and a session has no business there.
  'NIGHTSHIFT_DATABASE_URL',
  'CLAUDE_CONFIG_DIR', 'HOME', 'TMPDIR', 'CLAUDECODE',
  // Set from the agent's `network:` alone (the egress proxy), never passed through.
  ...PROXY_VARS,
]);

export type SessionEnvInput = {
  // The supervisor's environment, where values come from.
  env: NodeJS.ProcessEnv;
  // Names the operator passes to this agent (its front matter's `env:`).
  agentEnv: string[];
  home: string;
  // The supervisor's API proxy and the token that stands in for the credential; walled, the
  // bridge's socket the CLI reaches it by (sessions/wall/bridge.ts), apiUrl then giving the host.
  apiUrl: string;
  apiSocket?: string | null;
  apiToken: string;
  // The CLI sends an OAuth token with betas of its own; it gets the stand-in in the same variable.
  oauth?: boolean;
  // The session's egress proxy (its token in the URL), only for an agent with a `network:`.
  proxyUrl?: string | null;
};

// A credential-like name is passed only when the operator names it for the agent.
const SECRET_LIKE = /(_KEY|_TOKEN|_SECRET|_PASSWORD|_PAT|_CREDENTIALS?)$/;
const allowed = (name: string) => !SECRET_LIKE.test(name) && (BASE.includes(name) || CLI_PATTERNS.some((re) => re.test(name)));

// Pure: the session's environment.
export function sessionEnv(i: SessionEnvInput): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(i.env)) {
    if (v !== undefined && !NEVER_IN_SESSION.has(k) && allowed(k)) out[k] = v;
  }
  for (const k of i.agentEnv) {
    const v = i.env[k];
    if (v !== undefined && !NEVER_IN_SESSION.has(k)) out[k] = v;
  }
  out.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  // The memory server is connected before the CLI's start goes on, so the first turn never waits
  // in its poll for a pending server (2.1.332: ~50 ms sooner; memory/mcp/mcp-config.ts). An
  // agent's `env:` may still name it.
  out.MCP_CONNECTION_NONBLOCKING ??= '0';
  out.HOME = i.home;
  out.CLAUDE_CONFIG_DIR = `${i.home}/.claude`;
  out.TMPDIR = '/tmp';
  out.ANTHROPIC_BASE_URL = i.apiUrl;
  if (i.apiSocket) out.ANTHROPIC_UNIX_SOCKET = i.apiSocket;
  if (i.oauth) out.CLAUDE_CODE_OAUTH_TOKEN = i.apiToken;
  else out.ANTHROPIC_API_KEY = i.apiToken;
  if (i.proxyUrl) {
    for (const v of ['HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy']) out[v] = i.proxyUrl;
    out.NO_PROXY = out.no_proxy = NO_PROXY;
  }
  return out;
}
