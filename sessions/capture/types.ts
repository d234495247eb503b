// What capture takes from a session, and what waits in the spool when the store is busy.
import type { Category } from '../../memory/types.js';

export type Extracted = { text: string; category: Category; salience: number; tags: string[] };
// What a session left behind, one record each: an item to store or a RESOLVED line; also the spool's line format.
export type LeftRecord = { session: string; kind: 'store'; item: Extracted } | { session: string; kind: 'resolve'; text: string };
