// Contradiction candidates for a set of memories against their close neighbours: the offline
// heuristic for every pair, and Gemini, when configured, for the pairs about the same thing. A
// verdict is recorded as a candidate (or a Gemini "no" dismisses one), never applied. Used by the
// dream over recent memories, and by the MCP server for each new observation as it arrives.
import { geminiVerdicts, heuristicVerdict, type GeminiCheck } from './contradiction.js';
import { describeError } from '../gemini-client.js';
import type { MemoryStore } from '../store.js';
import { cleanDerived } from '../text/text-hygiene.js';
import type { Actor } from '../types.js';

export type CheckCounts = { pairs: number; candidates: number; dismissed: number; gemini: number; fallbacks: number };
type Log = { warn(obj: object, msg?: string): void } | null | undefined;

const PAIRS_PER_CALL = 20;
const MAX_GEMINI_PAIRS = 200;

export async function checkContradictions(
  store: Pick<MemoryStore, 'similar' | 'recordCandidate' | 'dismissCandidate'>,
  memories: Array<{ id: number; text: string }>,
  o: { actor: Actor; gemini?: GeminiCheck | null; logger?: Log; event?: string; signal?: AbortSignal },
): Promise<CheckCounts> {
  const pairs: Array<{ a: number; b: number; ta: string; tb: string }> = [];
  const seen = new Set<string>();
  for (const m of memories) {
    for (const n of store.similar(m.text, { limit: 5, min: 0.2, except: m.id })) {
      const key = m.id < n.id ? `${m.id}:${n.id}` : `${n.id}:${m.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      pairs.push({ a: m.id, b: n.id, ta: m.text, tb: n.text });
    }
  }
  const counts: CheckCounts = { pairs: pairs.length, candidates: 0, dismissed: 0, gemini: 0, fallbacks: 0 };
  const heuristic = pairs.map((p) => heuristicVerdict(p.ta, p.tb));
  // Gemini judges the pairs the heuristic thinks are about the same thing.
  const forGemini = o.gemini ? pairs.map((p, i) => ({ p, i })).filter(({ i }) => heuristic[i].contradicts || /same polarity/.test(heuristic[i].reason)).slice(0, MAX_GEMINI_PAIRS) : [];
  const geminiSays = new Map<number, ReturnType<typeof heuristicVerdict>>();
  for (let k = 0; k < forGemini.length; k += PAIRS_PER_CALL) {
    const batch = forGemini.slice(k, k + PAIRS_PER_CALL);
    if (o.signal?.aborted) break;
    try {
      const v = await geminiVerdicts(batch.map(({ p }) => [p.ta, p.tb]), o.gemini!);
      batch.forEach(({ i }, j) => geminiSays.set(i, v[j]));
      counts.gemini += batch.length;
    } catch (err) {
      // One failure is enough: the rest of the pairs go to the heuristic, without more timeouts.
      counts.fallbacks += forGemini.length - k;
      o.logger?.warn({ event: o.event ?? 'contradiction_gemini_fallback', error: describeError(err, o.gemini?.apiKey) }, 'Gemini contradiction check failed, heuristic instead');
      break;
    }
  }
  pairs.forEach((p, i) => {
    const g = geminiSays.get(i);
    if (g) {
      if (g.contradicts) counts.candidates += store.recordCandidate(p.a, p.b, 'gemini', g.score, cleanDerived(g.reason), o.actor) ? 1 : 0;
      else counts.dismissed += store.dismissCandidate(p.a, p.b, o.actor) ? 1 : 0;
    } else if (heuristic[i].contradicts) counts.candidates += store.recordCandidate(p.a, p.b, 'heuristic', heuristic[i].score, heuristic[i].reason, o.actor) ? 1 : 0;
  });
  return counts;
}
