// What every write checks before it touches SQL: ids, fractions, actors, text hygiene, and one
// observation normalised. Pure; each throws MemoryError INVALID naming the field.
import { cleanSpeaker } from '../text/speaker.js';
import { checkAgent } from './scope.js';
import { fieldsProblem } from '../text/text-hygiene.js';
import { CATEGORIES, MemoryError, SURFACES, type Actor, type Category, type MemoryRecord, type ObserveInput } from '../types.js';

// A memories row as SQLite returns it: the record's own columns, tags as JSON, faded as 0/1.
export type MemoryRow = Pick<MemoryRecord, 'id' | 'text' | 'category' | 'salience' | 'confidence' | 'access_count' | 'created_at' | 'updated_at' | 'superseded_by' | 'valid_from' | 'valid_to' | 'scope'> & {
  tags: string;
  faded: number;
};

// One observation after `validate`: what the gate and the tables see.
export type Clean = { text: string; source: string | null; created_at: string | null; salience: number; tags: string[]; category: Category; speaker: string | null; valid_from: string | null; shared: boolean; scope?: string | null };

const MAX_TEXT = 20_000;

// A list of ids as one JSON parameter, for `IN (SELECT value FROM json_each(?))`.
export const ids = (xs: Iterable<number>) => JSON.stringify([...xs]);

export function publicRow(r: MemoryRow): Omit<MemoryRecord, 'sources' | 'edges' | 'retrievability' | 'due'> {
  return { ...r, tags: JSON.parse(r.tags) as string[], faded: !!r.faded };
}

export function round(x: number, d = 4): number {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

export function checkId(id: number): void {
  if (!Number.isInteger(id) || id < 1) throw new MemoryError('INVALID', `Expected a memory id (a whole number above 0), got ${JSON.stringify(id)}`);
}

export function checkFraction(x: unknown, name: string): void {
  if (typeof x !== 'number' || !(x >= 0 && x <= 1)) throw new MemoryError('INVALID', `Expected \`${name}\` between 0 and 1, got ${JSON.stringify(x)}`);
}

export function checkActor(actor: Actor): void {
  if (!actor || !SURFACES.includes(actor.surface)) throw new MemoryError('INVALID', `Expected an actor surface (${SURFACES.join(', ')}), got ${JSON.stringify(actor?.surface)}`);
}

// Refuses control characters and lone surrogates in any text field (memory/text/text-hygiene.ts).
export function checkText(fields: Record<string, unknown>): void {
  const problem = fieldsProblem(fields);
  if (problem) throw new MemoryError('INVALID', problem.message);
}

// Checks and normalises one input; throws MemoryError INVALID with a message naming the field.
export function validate(input: ObserveInput): Clean {
  if (!input || typeof input !== 'object') throw new MemoryError('INVALID', `Expected an observation object, got ${JSON.stringify(input)}`);
  const { text, source, created_at, salience, tags, category, speaker, valid_from, shared, scope } = input;
  if (typeof text !== 'string' || !text.trim()) throw new MemoryError('INVALID', `Expected \`text\` to be a non-empty string, got ${JSON.stringify(text)}`);
  if (text.length > MAX_TEXT) throw new MemoryError('INVALID', `Expected \`text\` of at most ${MAX_TEXT} characters, got ${text.length}`);
  if (source !== undefined && source !== null && typeof source !== 'string') throw new MemoryError('INVALID', `Expected \`source\` to be a string, got ${JSON.stringify(source)}`);
  const at = isoOf(created_at, 'created_at');
  const from = isoOf(valid_from, 'valid_from');
  if (shared !== undefined && typeof shared !== 'boolean') throw new MemoryError('INVALID', `Expected \`shared\` to be true or false, got ${JSON.stringify(shared)}`);
  if (salience !== undefined && (typeof salience !== 'number' || !(salience >= 0 && salience <= 1))) {
    throw new MemoryError('INVALID', `Expected \`salience\` between 0 and 1, got ${JSON.stringify(salience)}`);
  }
  if (tags !== undefined && (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string'))) throw new MemoryError('INVALID', `Expected \`tags\` to be a list of strings, got ${JSON.stringify(tags)}`);
  if (category !== undefined && !CATEGORIES.includes(category)) throw new MemoryError('INVALID', `Expected \`category\` to be one of ${CATEGORIES.join(', ')}, got ${JSON.stringify(category)}`);
  if (speaker !== undefined && speaker !== null && typeof speaker !== 'string') throw new MemoryError('INVALID', `Expected \`speaker\` to be a string, got ${JSON.stringify(speaker)}`);
  checkText({ text, source, tags, speaker });
  // NFKC: what SQLite stores is what is hashed and indexed (full-width letters would never match a query).
  return { text: text.normalize('NFKC').trim(), source: source ?? null, created_at: at, salience: salience ?? 0.5, tags: tags ?? [], category: category ?? 'observation', speaker: cleanSpeaker(speaker), valid_from: from, shared: shared ?? false, ...(scope !== undefined ? { scope: checkAgent(scope) } : {}) };
}

// An optional time as the store keeps it (UTC ISO-8601, so that times compare as strings).
export function isoOf(v: unknown, name: string): string | null {
  if (v === undefined || v === null) return null;
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw new MemoryError('INVALID', `Expected \`${name}\` to be an ISO-8601 time, got ${JSON.stringify(v)}`);
  return new Date(ms).toISOString();
}
