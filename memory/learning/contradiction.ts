// Contradiction candidates between two claims: an offline heuristic on negation, antonyms and
// changed numbers over claims about the same thing, and a Gemini check (JSON-schema output) that a
// caller prefers when a key is set and falls back from when it fails. Neither applies anything:
// what they find is recorded as a candidate.
import { GeminiError, describeError, type GeminiModels } from '../gemini-client.js';
import { contentTerms } from '../text/text.js';

export type Verdict = { contradicts: boolean; score: number; reason: string };

const NEGATION = /\b(?:not|no|never|none|nobody|nothing|neither|nor|nowhere|cannot|without|stopped|quit)\b|n['’]t\b/g;
// Word pairs that flip a claim's polarity; either order.
const ANTONYMS: Array<[string, string]> = [
  ['true', 'false'], ['always', 'never'], ['enabled', 'disabled'], ['enable', 'disable'], ['open', 'closed'], ['up', 'down'],
  ['online', 'offline'], ['success', 'failure'], ['succeeded', 'failed'], ['passes', 'fails'], ['passed', 'failed'], ['pass', 'fail'],
  ['love', 'hate'], ['loves', 'hates'], ['like', 'dislike'], ['likes', 'dislikes'], ['increase', 'decrease'], ['increased', 'decreased'],
  ['more', 'less'], ['higher', 'lower'], ['larger', 'smaller'], ['before', 'after'], ['allowed', 'forbidden'], ['allow', 'deny'],
  ['accepted', 'rejected'], ['safe', 'unsafe'], ['stable', 'unstable'], ['works', 'broken'], ['working', 'broken'], ['alive', 'dead'],
  ['married', 'single'], ['public', 'private'], ['required', 'optional'], ['present', 'absent'], ['start', 'stop'], ['started', 'stopped'],
  ['fast', 'slow'], ['cheap', 'expensive'], ['easy', 'hard'], ['yes', 'no'], ['agree', 'disagree'], ['available', 'unavailable'],
];
const ANTONYM_WORDS = new Set(ANTONYMS.flat());
const NUMBER = /\b\d+(?:[.,:]\d+)*\b/g;
// Claims about the same thing: the smaller claim's content terms mostly appear in the other.
const SAME_TOPIC = 0.6;
const SAME_CONTEXT = 0.8; // for a changed number, the rest must match this closely
const MIN_SHARED = 2;

const negations = (text: string) => (text.toLowerCase().match(NEGATION) ?? []).length;
const numbers = (text: string) => new Set(text.match(NUMBER) ?? []);

// Content terms without polarity words and numbers: what the claim is about.
function topic(text: string): Set<string> {
  return new Set(contentTerms(text, 200).filter((t) => !ANTONYM_WORDS.has(t) && !/^\d/.test(t) && !['longer', 'stopped', 'quit', 'cannot', 'never', 'without'].includes(t)));
}

/** The offline heuristic, pure: do two claims about the same thing disagree in polarity, in an antonym, or in a number? */
export function heuristicVerdict(a: string, b: string): Verdict {
  const ta = topic(a);
  const tb = topic(b);
  let shared = 0;
  for (const t of ta) if (tb.has(t)) shared++;
  const overlap = Math.min(ta.size, tb.size) ? shared / Math.min(ta.size, tb.size) : 0;
  const no = { contradicts: false, score: 0, reason: '' };
  // Short claims ("Melanie is married") share fewer words; all of the smaller one is enough then.
  if (shared < Math.min(MIN_SHARED, ta.size, tb.size) || !shared || overlap < SAME_TOPIC) return { ...no, reason: `different topics (overlap ${overlap.toFixed(2)})` };
  if (negations(a) % 2 !== negations(b) % 2) return { contradicts: true, score: round(overlap), reason: 'one negates what the other asserts' };
  const wa = new Set(contentTerms(a, 200).concat(a.toLowerCase().match(/\b[a-z]+\b/g) ?? []));
  const wb = new Set(contentTerms(b, 200).concat(b.toLowerCase().match(/\b[a-z]+\b/g) ?? []));
  for (const [x, y] of ANTONYMS) {
    if ((wa.has(x) && wb.has(y) && !wa.has(y) && !wb.has(x)) || (wa.has(y) && wb.has(x) && !wa.has(x) && !wb.has(y))) {
      return { contradicts: true, score: round(overlap), reason: `"${wa.has(x) ? x : y}" against "${wa.has(x) ? y : x}"` };
    }
  }
  const na = numbers(a);
  const nb = numbers(b);
  const union = new Set([...ta, ...tb]).size;
  if (na.size && nb.size && union && shared / union >= SAME_CONTEXT && [...na].some((n) => !nb.has(n)) && [...nb].some((n) => !na.has(n))) {
    return { contradicts: true, score: round(0.8 * overlap), reason: `different numbers (${[...na].join(', ')} against ${[...nb].join(', ')})` };
  }
  return { ...no, reason: 'same topic, same polarity' };
}

export type GeminiCheck = { models: GeminiModels; model: string; apiKey?: string };

// The response schema Gemini fills (OpenAPI subset, as generateContent takes it).
const RESPONSE_SCHEMA = {
  type: 'ARRAY',
  items: {
    type: 'OBJECT',
    properties: {
      pair: { type: 'INTEGER', description: 'The pair number as given' },
      contradicts: { type: 'BOOLEAN', description: 'Both cannot be true of the same thing at the same time' },
      confidence: { type: 'NUMBER', description: '0..1' },
      reason: { type: 'STRING', description: 'One short sentence' },
    },
    required: ['pair', 'contradicts', 'confidence'],
  },
};

/**
 * Asks Gemini whether each pair contradicts, in one call with JSON-schema output. Throws
 * GeminiError (GEMINI_UNAVAILABLE, GEMINI_MALFORMED) when the answer cannot be used; callers fall
 * back to `heuristicVerdict`.
 */
export async function geminiVerdicts(pairs: Array<[string, string]>, g: GeminiCheck): Promise<Verdict[]> {
  if (!pairs.length) return [];
  const prompt = [
    'For each numbered pair of claims from one agent\'s memory, say whether they contradict each other:',
    'both cannot be true of the same subject at the same time. Different topics, or claims that can both hold, do not contradict.',
    ...pairs.map(([a, b], i) => `${i + 1}. A: ${JSON.stringify(a)}\n   B: ${JSON.stringify(b)}`),
  ].join('\n');
  let text: string | undefined;
  try {
    const r = await g.models.generateContent({
      model: g.model,
      contents: prompt,
      config: { temperature: 0, responseMimeType: 'application/json', responseSchema: RESPONSE_SCHEMA, thinkingConfig: { thinkingBudget: 0 } },
    });
    text = r.text;
  } catch (err) {
    throw new GeminiError('GEMINI_UNAVAILABLE', `Gemini contradiction check failed: ${describeError(err, g.apiKey)}`, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '');
  } catch {
    throw new GeminiError('GEMINI_MALFORMED', `Expected a JSON array from Gemini, got ${JSON.stringify((text ?? '').slice(0, 100))}`);
  }
  if (!Array.isArray(parsed)) throw new GeminiError('GEMINI_MALFORMED', `Expected a JSON array from Gemini, got ${typeof parsed}`);
  const out: Array<Verdict | undefined> = Array.from({ length: pairs.length }, () => undefined);
  for (const item of parsed as any[]) {
    const i = Number(item?.pair) - 1;
    if (!Number.isInteger(i) || i < 0 || i >= pairs.length || typeof item?.contradicts !== 'boolean') continue;
    const c = Number(item.confidence);
    out[i] = { contradicts: item.contradicts, score: round(Number.isFinite(c) ? Math.min(1, Math.max(0, c)) : 0.5), reason: typeof item.reason === 'string' ? item.reason.slice(0, 300) : 'gemini' };
  }
  if (out.some((v) => !v) || out.length !== pairs.length) throw new GeminiError('GEMINI_MALFORMED', `Expected a verdict for each of ${pairs.length} pairs from Gemini, got ${parsed.length}`);
  return out as Verdict[];
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
