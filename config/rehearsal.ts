// A rehearsal (`nightshift rehearse AGENT`) is a session of a real site against the loopback API
// imitation, run in state of its own: the site's ledger, fires, memory, logs, vault and remote are
// never opened. Pure: the config and environment it runs with, and how a rehearsal's key is known.
import path from 'node:path';
import type { Config } from './schema.js';

// Every key `nightshift rehearse` makes starts so: what marks an env file still pointed at one.
export const REHEARSAL_KEY_PREFIX = 'sk-rehearsal-';
const CREDENTIALS = ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN'] as const;

// The credential variable that holds a rehearsal's key, or null.
export function rehearsalCredential(env: NodeJS.ProcessEnv): string | null {
  return CREDENTIALS.find((k) => env[k]?.trim().startsWith(REHEARSAL_KEY_PREFIX)) ?? null;
}

// Where a site's rehearsal lives: `<state_dir>/rehearsal/`, its lock there, and `site/` made anew
// by each rehearsal (kept until the next, to look at).
export type RehearsalPaths = { root: string; lock: string; site: string; state: string; logs: string; vault: string; remote: string };
export function rehearsalPaths(config: Pick<Config, 'state_dir'>): RehearsalPaths {
  const root = path.join(config.state_dir, 'rehearsal');
  const site = path.join(root, 'site');
  return { root, lock: path.join(root, 'rehearse'), site, state: path.join(site, 'state'), logs: path.join(site, 'logs'), vault: path.join(site, 'vault'), remote: path.join(site, 'remote.git') };
}

// The config a rehearsal runs with: every path nightshift writes moved into its own site, the
// dead-man's ping off, no writable folder beyond its vault; the real site's folders hidden from the
// session as its own state is.
export function rehearsalConfig(config: Config, p: RehearsalPaths): Config {
  const memoryDb = path.resolve(config.state_dir, config.memory.db || 'memory.db');
  return {
    ...config,
    vault: p.vault,
    // Its one vault, whatever vault the agent has at the site.
    vaults: {},
    state_dir: p.state,
    log_dir: p.logs,
    git: { ...config.git, lock_file: path.join(p.state, 'git.lock') },
    memory: { ...config.memory, db: path.join(p.state, 'memory.db') },
    monitor: { ...config.monitor, ping_url: undefined },
    // Nor are traces sent to the site's collector.
    telemetry: { ...config.telemetry, otlp_endpoint: undefined },
    // Nothing outside its own site is written: no extra writable folders.
    hooks: { ...config.hooks, extra_dirs: [] },
    rehearsal: { hide: [...new Set([config.state_dir, config.log_dir, config.vault, ...Object.values(config.vaults), path.dirname(memoryDb)])] },
  };
}

// Variables that reach beyond the host: a rehearsal sends nothing out (its reports stay in its
// own outbox, its memory embeds nothing remotely).
const OUTWARD = ['ANTHROPIC_BASE_URL', 'ANTHROPIC_UNIX_SOCKET', 'DISCORD_WEBHOOK_URL', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'NIGHTSHIFT_OTLP_HEADERS'];

// The environment a rehearsal runs with: the site's, with the imitation as the API and its key as
// the only credential.
export function rehearsalEnv(env: NodeJS.ProcessEnv, api: { url: string; key: string }): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const k of [...CREDENTIALS, ...OUTWARD]) delete out[k];
  return { ...out, ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: api.key };
}
