// Whose word a memory is. What the operator says (CLI, import) stands; what an agent says (a
// session, any MCP client) is that agent's claim until confirmed: used in a later session that
// ended ok, or confirmed by the operator. Only confirmed beliefs and values are the "Identity" of
// the session state (docs/memory.md). Pure.
import type { Actor, Category } from '../types.js';

// The categories the session state shows as who the agent is.
export const IDENTITY_CATEGORIES: readonly Category[] = ['belief', 'value'];

// The operator speaks through the CLI and imports; every other surface is an agent.
export const isOperator = (actor: Actor): boolean => actor.surface === 'cli' || actor.surface === 'import';

// A new memory's `confirmed`: the operator's word stands, an agent's is a claim.
export const confirmedAtCreation = (actor: Actor): boolean => isOperator(actor);

// After `believe`: the operator confirms; an agent that makes something a belief which was not
// already a confirmed belief or value leaves it unconfirmed (promoting an operator's plain
// observation into Identity is still only the agent's claim).
export function confirmedAfterBelieve(before: { category: Category; confirmed: number | boolean }, actor: Actor): boolean {
  if (isOperator(actor)) return true;
  return IDENTITY_CATEGORIES.includes(before.category) && !!before.confirmed;
}

// A Good grade (used after recall in a session that ended ok) confirms a claim unless the grading
// session is one that stated it: a session cannot confirm its own claim.
export const confirmsByUse = (gradingSession: string, statedBy: ReadonlyArray<string | null>): boolean => !statedBy.includes(gradingSession);
