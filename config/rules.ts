// Checks that span fields, run after the schema passes.
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Config } from './schema.js';

export function crossFieldProblems(c: Config): string[] {
  const out: string[] = [];
  if (c.budget.max_usd_per_session > c.budget.max_usd_per_day) {
    out.push(`budget.max_usd_per_session: Expected at most budget.max_usd_per_day (${c.budget.max_usd_per_day}), got ${c.budget.max_usd_per_session}`);
  }
  if (c.claude.idle_timeout > c.claude.timeout) {
    out.push('claude.idle_timeout: Expected at most claude.timeout');
  }
  if (c.loop.max_repeats > c.loop.window) {
    out.push(`loop.max_repeats: Expected at most loop.window (${c.loop.window}), got ${c.loop.max_repeats}`);
  }
  // Sessions write the vault and the extra dirs; the sandbox hides the store's folder from them, which
  // it cannot do when that folder is one they write (a planted -wal file would be replayed into it).
  const dbDir = path.dirname(path.resolve(c.memory.db ?? path.join(c.state_dir, 'memory.db')));
  const writable = [c.vault, ...Object.values(c.vaults), ...c.hooks.extra_dirs].map((d) => path.resolve(d));
  if (writable.includes(dbDir)) {
    out.push(`memory.db: Expected a folder sessions cannot write (the default is state_dir), got ${c.memory.db} in ${dbDir}, which sessions write`);
  }
  return out;
}

// The vault a session of `agent` works in: its own (vaults.<agent>), else the site's.
export function vaultOf(c: Pick<Config, 'vault' | 'vaults'>, agent: string): string {
  return Object.hasOwn(c.vaults, agent) ? c.vaults[agent] : c.vault;
}

// The config one agent's session runs with: its own vault in the vault's place, with a git lock
// of its own beside the site's (the git lock is per vault: another vault's push never waits on it).
export function sessionConfig<C extends Pick<Config, 'vault' | 'vaults'> & { git?: Config['git'] }>(c: C, agent: string): C {
  const vault = vaultOf(c, agent);
  if (vault === c.vault) return c;
  const git = c.git ? { git: { ...c.git, lock_file: vaultLockFile(c.git.lock_file, vault) } } : {};
  return { ...c, vault, ...git };
}

// The git lock of a vault other than the site's: beside the site's, named by the vault's path.
export function vaultLockFile(siteLock: string, vault: string): string {
  const key = createHash('sha256').update(path.resolve(vault)).digest('hex').slice(0, 12);
  return path.join(path.dirname(siteLock), `${path.basename(siteLock, '.lock')}-${key}.lock`);
}

// Dispatch rules must name agents that exist; checked at load so a typo fails before a tick.
export function unknownDispatchAgents(c: Config, known: string[]): string[] {
  return [
    ...c.dispatch.flatMap((r, i) =>
      known.includes(r.agent) ? [] : [`dispatch[${i}].agent: Expected an agent in ${c.agents_dir} (${known.join(', ') || 'none'}), got \`${r.agent}\``],
    ),
    ...Object.keys(c.vaults).flatMap((a) => (known.includes(a) ? [] : [`vaults.${a}: Expected an agent in ${c.agents_dir} (${known.join(', ') || 'none'}), got \`${a}\``])),
  ];
}
