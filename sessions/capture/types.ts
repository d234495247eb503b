// What capture takes from a session, and what waits in the spool when the store is busy.
import type { Category } from '../../memory/types.js';

export type Extracted = { text: string; category: Category; salience: number; tags: string[] };
// What a session left behind, one record each: an item to store or a RESOLVED line; also the spool's line format.
// `agent`: whose view it is stored through (memory/store/scope.ts); absent (a spool written before
// scopes) or null: the whole store, shared.
export type LeftRecord = { session: string; agent?: string | null; kind: 'store'; item: Extracted } | { session: string; agent?: string | null; kind: 'resolve'; text: string };
