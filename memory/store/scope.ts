// Whose memory it is. Each memory is its agent's (scope = the agent's name) or shared (null). A
// view of the store is an agent's, reading its own and the shared memories, or the operator's
// (agent null), reading all. The agent of a session's view is set by the supervisor when it opens
// the store, never by anything the session sends.
import { MemoryError } from '../types.js';

const sqlString = (x: string) => `'${x.replace(/'/g, "''")}'`;

// Agent names as their files may be named (config/agents.ts AGENT_NAME; the store does not
// load the config's modules).
export const AGENT = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export function checkAgent(agent: string | null): string | null {
  if (agent === null) return null;
  if (typeof agent !== 'string' || !AGENT.test(agent)) throw new MemoryError('INVALID', `Expected an agent's name (a-z, 0-9, - and _), got ${JSON.stringify(agent)}`);
  return agent;
}

// SQL over `alias` that holds for the memories `agent` may see; the operator's view sees all. The
// name is a literal, not a parameter, so every statement keeps its arguments (and its cache entry
// is the view's own).
export function seenSql(agent: string | null, alias: string): string {
  return agent === null ? '1' : `(${alias}.scope IS NULL OR ${alias}.scope = ${sqlString(agent)})`;
}

// The same decision over a row already read.
export function sees(agent: string | null, scope: string | null): boolean {
  return agent === null || scope === null || scope === agent;
}

// Whose view a session of `agent` gets: its agent's, or under `memory.scope: shared` (agents that
// are roles of one identity) the whole store, as before scopes. Null agent: the operator's.
export function viewOf(config: { memory?: { scope?: 'agent' | 'shared' } }, agent: string | null): string | null {
  return agent !== null && (config.memory?.scope ?? 'agent') === 'agent' ? agent : null;
}

// Where a write of this view goes: shared when asked, or when the view is the operator's.
export function writeScope(agent: string | null, shared: boolean): string | null {
  return shared ? null : agent;
}

// What a view may do to a memory every reader of it sees, and what a session may do instead.
const CHANGES = {
  supersede: { would: 'superseding it would change what every agent sees', instead: () => 'link it `contradicts` or `relates_to` instead' },
  contradict: { would: 'lowering its confidence would change it for every agent', instead: (id: number) => `observe your own memory and link it \`contradicts\` #${id} instead` },
  review: { would: 'grading it would move its review schedule for every agent', instead: (id: number) => `observe your own memory of it and link it \`relates_to\` #${id} instead` },
  resolve: { would: 'resolving it would close it for every agent', instead: (id: number) => `observe the outcome as your own memory and link it \`relates_to\` #${id} instead` },
  link: { would: 'a link between them changes how every agent\'s recall ranks them', instead: (id: number) => `link one of your own memories to #${id} instead` },
  backdate: { would: 'an earlier valid-from would change what every agent sees as of a past time', instead: (id: number) => `observe your own memory with that valid_from and link it \`relates_to\` #${id} instead` },
} as const;
export type StandingChange = keyof typeof CHANGES;

// The one rule: why `agent`'s view may not make `change`, which every reader of all of `touched`
// sees (null: it may). A session may change the standing (confidence, review schedule, validity,
// resolution, links) of its own agent's memories only: a change that touches one of them is seen
// by that agent alone (no other view steps onto its memory); the operator (agent null) may all.
export function standingProblem(agent: string | null, change: StandingChange, touched: Array<{ id: number; scope: string | null }>): { code: 'PERMISSION'; message: string } | null {
  if (agent === null || touched.some((m) => m.scope === agent)) return null;
  const c = CHANGES[change];
  const which = touched.length > 1 ? `${touched.map((m) => `#${m.id}`).join(' and ')} are shared` : `#${touched[0].id} is shared`;
  return { code: 'PERMISSION', message: `${which}: ${c.would}, so only the operator may; ${c.instead(touched[touched.length - 1].id)}` };
}

// Why `agent`'s view may not end the validity of memory `older` by `newer` (null: it may): the
// view must own the older (standingProblem), and everyone who sees the older must see the newer.
export function supersedeProblem(agent: string | null, older: { id: number; scope: string | null }, newer: { id: number; scope: string | null }): { code: 'PERMISSION' | 'INVALID'; message: string } | null {
  const whose = (scope: string | null) => (scope === null ? 'shared' : `${scope}'s own`);
  const own = standingProblem(agent, 'supersede', [older]);
  if (own) return own;
  if (newer.scope !== null && newer.scope !== older.scope) {
    return { code: 'INVALID', message: `Expected a newer memory everyone who sees #${older.id} (${whose(older.scope)}) sees, got #${newer.id} (${whose(newer.scope)})` };
  }
  return null;
}
