// The self-annealing loop's pure parts: a pass's fields from its `ANNEAL:` line, the text and tags
// the store keeps it under, and whether a failure (or a pass) is the same one coming back. The
// similarity is the store's own (Dice over its tokens, memory/text.ts).
import { dice, tokens } from '../../memory/text/text.js';

export const ANNEAL_FIELDS = ['symptom', 'cause', 'fix', 'test'] as const;
export type AnnealField = (typeof ANNEAL_FIELDS)[number];
export type AnnealFields = Record<AnnealField, string | null>;
// One pass of the log, as `nightshift anneal --json` prints it (plus the memory id).
export type AnnealPass = AnnealFields & { id: number | null; at: string; agent: string; session: string | null; complete: boolean };

export const ANNEAL_TAG = 'anneal';
export const INCOMPLETE_TAG = 'incomplete';
const AGENT_TAG = 'agent:';
// What a session writes for a field it could not fill: kept as missing, so the pass is incomplete.
const EMPTY = /^(?:|-+|\?+|none|n\/?a|unknown|tbd|todo|not yet|open)$/i;
const FIELD = /^[ \t]*(symptom|cause|fix|test)[ \t]*:[ \t]*(.*)$/is;

// Pure: the fields of `symptom: … | cause: … | fix: … | test: …`, in any order, any case. A part
// without a field name continues the one before (a `|` inside the text); text before the first field
// is the symptom. A pass missing a cause or a test (or any field) is incomplete.
export function parseAnneal(text: string): AnnealFields & { complete: boolean } {
  const out: AnnealFields = { symptom: null, cause: null, fix: null, test: null };
  let last: AnnealField = 'symptom';
  for (const part of text.split('|')) {
    const m = FIELD.exec(part);
    if (m) {
      last = m[1].toLowerCase() as AnnealField;
      out[last] = out[last] ? `${out[last]} | ${m[2].trim()}` : m[2].trim();
    } else if (part.trim()) out[last] = out[last] ? `${out[last]} | ${part.trim()}` : part.trim();
  }
  for (const f of ANNEAL_FIELDS) if (out[f] !== null && EMPTY.test(out[f]!.trim())) out[f] = null;
  return { ...out, complete: ANNEAL_FIELDS.every((f) => out[f] !== null) };
}

// Pure: the text a pass is stored as (its fields, the missing ones left out) and its tags.
export function annealText(f: AnnealFields): string {
  return ANNEAL_FIELDS.filter((k) => f[k] !== null).map((k) => `${k}: ${f[k]}`).join(' | ');
}
export function annealTags(agent: string, complete: boolean): string[] {
  return [ANNEAL_TAG, `${AGENT_TAG}${agent}`, ...(complete ? [] : [INCOMPLETE_TAG])];
}

// Pure: a stored pass back as the log's shape.
export function passFromRow(r: { id: number; text: string; tags: string[]; created_at: string; source: string | null }): AnnealPass {
  const f = parseAnneal(r.text);
  const agent = r.tags.find((t) => t.startsWith(AGENT_TAG))?.slice(AGENT_TAG.length) ?? '(unknown)';
  return { id: r.id, at: r.created_at, agent, session: r.source, symptom: f.symptom, cause: f.cause, fix: f.fix, test: f.test, complete: f.complete };
}

// The store's similarity of two texts, 0..1.
export const similarity = (a: string | null, b: string | null) => dice(tokens(a ?? ''), tokens(b ?? ''));

export type FailureFacts = { id: string; outcome: string; error: string | null; started_at: string };
export type Recurrence = { recurring: boolean; earlier: FailureFacts[]; passes: AnnealPass[] };

const failed = (o: string) => o !== 'ok' && o !== 'running';

// Pure: the failure a pass treats: the agent's newest failed session that began before the pass's
// own session (or before the pass, when its session is not in the list).
export function treatedBy(p: AnnealPass, sessionsNewestFirst: FailureFacts[]): FailureFacts | null {
  const own = sessionsNewestFirst.find((s) => s.id === p.session);
  const before = own?.started_at ?? p.at;
  return sessionsNewestFirst.find((s) => s.id !== p.session && failed(s.outcome) && s.started_at < before) ?? null;
}

/**
 * Pure: is `current` (a failed session) the same failure again? Same outcome and a similar error
 * as an earlier failed session of the agent, or a similar symptom as an earlier pass. The passes
 * listed are those that treated one of the similar failures or whose symptom is close.
 * `sessionsNewestFirst`: the agent's sessions, current included or not; `passes`: the agent's.
 */
export function recurrenceOf(current: FailureFacts, sessionsNewestFirst: FailureFacts[], passes: AnnealPass[], threshold: number): Recurrence {
  const older = sessionsNewestFirst.filter((s) => s.id !== current.id && s.started_at <= current.started_at);
  const earlier = older.filter((s) => failed(s.outcome) && s.outcome === current.outcome && similarity(s.error, current.error) >= threshold);
  const ids = new Set(earlier.map((s) => s.id));
  const related = passes.filter((p) => {
    const t = treatedBy(p, sessionsNewestFirst);
    if (t && ids.has(t.id)) return true;
    return t?.id !== current.id && p.symptom !== null && similarity(p.symptom, current.error) >= threshold;
  });
  return { recurring: earlier.length > 0 || related.length > 0, earlier, passes: related };
}

// Pure: earlier passes of the same agent whose symptom is close to a new pass's.
export function passRecurrence(pass: AnnealPass, passes: AnnealPass[], threshold: number): AnnealPass[] {
  return passes.filter((q) => q !== pass && (pass.id === null || q.id !== pass.id) && q.agent === pass.agent && q.at <= pass.at && q.symptom !== null && similarity(q.symptom, pass.symptom) >= threshold);
}
