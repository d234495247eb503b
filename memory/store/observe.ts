// The write path of an observation: checked, refused if tombstoned, embedded, then through the
// prediction-error gate (memory/recall/gate.ts) into a merge, a link or a new memory, with its
// observation row, its edges and one audit row, in one transaction.
import { confirmedAtCreation } from '../learning/claims.js';
import { slotDifference } from '../learning/slot-update.js';
import { gateDecision, predictionError } from '../recall/gate.js';
import { dice, tokens } from '../text/text.js';
import { MemoryError, type Actor, type GateDecision, type GradeName, type ObserveInput, type ObserveResult } from '../types.js';
import { applyGrade } from './cards.js';
import { checkActor, publicRow, round, validate, type Clean, type MemoryRow } from './checks.js';
import { heuristicCandidates } from './contradictions.js';
import type { StoreCore } from './core.js';
import { linkRareTerms } from './links.js';
import { nextId } from './schema.js';
import { sees, writeScope } from './scope.js';
import { candidateTerms, gateCandidates } from './search.js';
import { observationFields } from './tombstones.js';
import { recordUpdates } from './updates.js';

const IMPORT_BATCH = 500;

/** Records one observation through the gate. Throws MemoryError TOMBSTONED (saying why) or INVALID. */
export async function observe(s: StoreCore, input: ObserveInput, actor: Actor): Promise<ObserveResult> {
  return gated(s, input, actor, (clean, vec) => {
    const prev = actor.sessionId
      ? ((s.stmt('SELECT memory_id FROM observations WHERE session_id = ? ORDER BY id DESC LIMIT 1').get(actor.sessionId) as { memory_id: number } | undefined)?.memory_id ?? null)
      : null;
    return observeOne(s, clean, actor, vec, prev);
  });
}

// One input checked, refused if tombstoned, embedded, then `write` in a transaction that checks
// the tombstones again (a forget may have landed while the embedder was awaited).
async function gated<T>(s: StoreCore, input: ObserveInput, actor: Actor, write: (clean: Clean, vec: Float32Array | null) => T): Promise<T> {
  checkActor(actor);
  const clean = validate(input);
  s.tombstones.refuse(observationFields(clean));
  const [vec] = await s.embed([clean.text]);
  return s.write(() => {
    s.tombstones.refuse(observationFields(clean));
    return write(clean, vec ?? null);
  })();
}

/**
 * Imports many observations through the same gate, one transaction per batch; the answer is in
 * input order, an ObserveResult or the MemoryError that refused that line (tombstoned, invalid).
 * A line right after one with the same explicit `created_at` is linked to it as `follows`.
 */
export async function observeMany(
  s: StoreCore,
  inputs: Iterable<ObserveInput> | AsyncIterable<ObserveInput>,
  actor: Actor,
  onProgress?: (done: number) => void,
): Promise<Array<ObserveResult | MemoryError>> {
  checkActor(actor);
  const out: Array<ObserveResult | MemoryError> = [];
  let batch: Array<{ index: number; clean: Clean }> = [];
  const flush = async () => {
    const vecs = await s.embed(batch.map((b) => b.clean.text));
    s.write(() => {
      batch.forEach(({ index, clean }, k) => {
        try {
          s.tombstones.refuse(observationFields(clean));
          out[index] = observeOne(s, clean, actor, vecs[k], clean.created_at === null ? null : previousAt(s, clean.created_at, actor));
        } catch (err) {
          if (!(err instanceof MemoryError)) throw err;
          out[index] = err;
        }
      });
    })();
    batch = [];
    onProgress?.(out.length);
  };
  let index = 0;
  for await (const input of inputs) {
    try {
      batch.push({ index, clean: validate(input) });
    } catch (err) {
      if (!(err instanceof MemoryError)) throw err;
      out[index] = err;
    }
    index++;
    if (batch.length >= IMPORT_BATCH) await flush();
  }
  if (batch.length) await flush();
  else onProgress?.(out.length);
  return out;
}

// The memory of the last observation stored, when it has this exact time and the same session:
// the previous turn of the same conversation.
function previousAt(s: StoreCore, createdAt: string, actor: Actor): number | null {
  const r = s.stmt('SELECT memory_id, created_at, session_id FROM observations ORDER BY id DESC LIMIT 1').get() as
    | { memory_id: number; created_at: string; session_id: string | null }
    | undefined;
  return r && r.created_at === createdAt && r.session_id === (actor.sessionId ?? null) ? r.memory_id : null;
}

// Inside a transaction: gate, write the memory, the observation, the edges and one audit row.
function observeOne(s: StoreCore, clean: Clean, actor: Actor, vec: Float32Array | null, follows: number | null, opts: { noMerge?: boolean } = {}): ObserveResult {
  const at = clean.created_at ?? s.iso();
  const neighbours: Array<{ id: number; text: string; lexical: number }> = [];
  const near = nearest(s, clean.text, vec, neighbours);
  const similarity = near?.similarity ?? 0;
  let decision: GateDecision = near ? gateDecision(similarity, s.thresholds) : 'novel';
  // A vector alone can relate two texts, not make them one claim: sentence encoders rate many
  // different remarks above 0.9, so a merge also needs the words to agree.
  if (decision === 'merge' && near!.lexical < s.thresholds.link) decision = 'link';
  // Predictions and threads are events of their own: never folded into an older memory.
  if (decision === 'merge' && opts.noMerge) decision = 'link';
  // Whose it is; only the operator's view places a memory in a scope by name (an import).
  if (clean.scope !== undefined && s.agent !== null) throw new MemoryError('INVALID', `Expected no \`scope\` from ${s.agent}'s view: its writes are its own, or shared`);
  const scope = clean.scope !== undefined ? clean.scope : writeScope(s.agent, clean.shared);
  // Never folded into a memory of another scope: into a private one a shared claim would stay
  // private; into a shared one a private claim's words, source and tags would be everyone's.
  if (decision === 'merge' && near!.scope !== scope) decision = 'link';
  // Never one memory of two values: the same words but for one value are an update (updates.ts).
  if (decision === 'merge' && s.knowledgeUpdates && slotDifference(near!.text, clean.text)) decision = 'link';
  const validFrom = clean.valid_from ?? at;
  let memoryId: number;
  let before: MemoryRow | null = null;
  let graded: GradeName | null = null;
  if (decision === 'merge') {
    memoryId = near!.id;
    before = s.row(memoryId);
    const tags = JSON.stringify([...new Set([...JSON.parse(before.tags), ...clean.tags])]);
    // Seen again: salience climbs toward 1, and the memory is as recent as its newest evidence.
    const salience = Math.min(1, Math.max(before.salience, clean.salience) + 0.1 * (1 - before.salience));
    // It has held since its earliest evidence says; a session's evidence moves a shared memory's
    // start no earlier (the standing rule: every agent's as-of answers would change).
    const from = s.standingProblem('backdate', [before]) === null ? validFrom : (before.valid_from ?? validFrom);
    s.stmt('UPDATE memories SET salience = ?, access_count = access_count + 1, tags = ?, updated_at = max(updated_at, ?), valid_from = min(coalesce(valid_from, ?), ?) WHERE id = ?').run(salience, tags, at, from, from, memoryId);
    // Confirmed by new evidence: an Easy review (docs/memory.md).
    applyGrade(s, memoryId, 'easy', 'confirmed', actor, new Date(at));
    graded = 'easy';
  } else {
    memoryId = s.insertMemory(clean.text, clean.category, clean.salience, clean.tags, at, 0.5, false, confirmedAtCreation(actor), { validFrom, scope });
    s.putVector(memoryId, vec);
    if (clean.speaker) {
      s.stmt('UPDATE memories SET speaker = ? WHERE id = ?').run(clean.speaker, memoryId);
      s.stmt('INSERT INTO speakers (name, memories) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET memories = memories + 1').run(clean.speaker);
    }
    if (decision === 'link') s.upsertEdge(memoryId, near!.id, 'relates_to', round(similarity));
  }
  const pe = round(predictionError(similarity));
  const observationId = Number(
    s.stmt(`INSERT INTO observations (id, text, source, created_at, salience, prediction_error, decision, memory_id, session_id, speaker) VALUES (${nextId('observations')}, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
      clean.text,
      clean.source,
      at,
      clean.salience,
      pe,
      decision,
      memoryId,
      actor.sessionId ?? null,
      clean.speaker,
    ).lastInsertRowid,
  );
  if (s.docs >= 0) s.docs++;
  if (follows !== null && follows !== memoryId) s.upsertEdge(follows, memoryId, 'follows', 1);
  // A changed value ends, or outdates, the close memory it changes; those are updates, not contradictions.
  const updates = decision === 'merge' || opts.noMerge ? [] : recordUpdates(s, memoryId, [...(near ? [near.id] : []), ...neighbours.map((n) => n.id)], actor);
  const updated = new Set(updates.map((u) => u.other));
  const shares = decision === 'merge' ? [] : linkRareTerms(s, memoryId, clean.text, at, actor.sessionId ?? null, { cap: s.weights.link_cap, rare: s.weights.link_rare });
  const result: ObserveResult = { observation_id: observationId, memory_id: memoryId, decision, prediction_error: pe, linked_to: decision === 'link' ? near!.id : null };
  // A new claim that says the opposite of a close memory is recorded as a candidate, never applied.
  const candidates = decision === 'merge' ? [] : heuristicCandidates(s, memoryId, clean.text, neighbours.filter((n) => !updated.has(n.id)));
  s.audit(actor, 'observe', `memory:${memoryId}`, before && publicRow(before), {
    ...result, source: clean.source, follows, ...(clean.speaker ? { speaker: clean.speaker } : {}), ...(decision !== 'merge' ? { valid_from: validFrom, scope } : {}), ...(shares.length ? { shares } : {}), ...(updates.length ? { updates } : {}), ...(graded ? { graded } : {}), ...(candidates.length ? { contradiction_candidates: candidates } : {}),
  });
  return result;
}

// The closest active memory: Dice over words among the BM25 candidates, and cosine (same model)
// when there is a vector; the better of the two. `lexical` is the words' agreement with it.
// Only memories this view may see are candidates (scope.ts): another agent's are never merge targets.
type Near = { id: number; text: string; similarity: number; lexical: number; scope: string | null };
function nearest(s: StoreCore, text: string, vec: Float32Array | null, neighbours?: Array<{ id: number; text: string; lexical: number }>): Near | null {
  let best: Near | null = null;
  const consider = (id: number, text: string, similarity: number, lexical: number, scope: string | null) => {
    if (!best || similarity > best.similarity || (similarity === best.similarity && id < best.id)) best = { id, text, similarity, lexical, scope };
  };
  const words = tokens(text);
  const lexical = new Map<number, number>();
  for (const r of gateCandidates(s, candidateTerms(text))) {
    const d = dice(words, tokens(r.text));
    lexical.set(r.id, d);
    consider(r.id, r.text, d, d, r.scope);
    neighbours?.push({ id: r.id, text: r.text, lexical: d });
  }
  if (vec && s.vectors?.size) {
    for (const hit of s.vectors.top(vec, 3)) {
      const r = s.stmt('SELECT text, faded, superseded_by, scope FROM memories WHERE id = ?').get(hit.id) as { text: string; faded: number; superseded_by: number | null; scope: string | null } | undefined;
      if (r && !r.faded && r.superseded_by === null && sees(s.agent, r.scope)) consider(hit.id, r.text, Math.max(0, hit.score), lexical.get(hit.id) ?? dice(words, tokens(r.text)), r.scope);
    }
  }
  return best;
}

// A memory of its own (never merged into an older one), made through the gate so it is linked and
// searchable like any other, then `extra` inside the same transaction.
export async function createSpecial(s: StoreCore, input: ObserveInput, actor: Actor, extra: (id: number) => void): Promise<{ id: number }> {
  return gated(s, input, actor, (clean, vec) => {
    const r = observeOne(s, clean, actor, vec, null, { noMerge: true });
    extra(r.memory_id);
    return { id: r.memory_id };
  });
}
