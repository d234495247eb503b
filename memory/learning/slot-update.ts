// Knowledge updates, pure: two claims that say the same thing but for one value (a name, a number,
// a place, a date, a colour) are one fact that changed, not a duplicate to merge. Which one holds
// now is decided by when each began to hold (valid_from), never by the order they were learned.
import { STOPWORDS } from '../text/text.js';

// Negation turns a claim over rather than changing its value: a gap holding one is not an update
// (the contradiction heuristic, memory/learning/contradiction.ts, looks at those).
const NEGATION = new Set(['not', 'no', 'nor', 'never', 'none', 'nothing', 'nobody', 'neither', 'without', 'cannot', 'don', 'didn', 'doesn', 'isn', 'aren', 'wasn', 'weren', 'won', 'wouldn', 'couldn', 'shouldn', 'hasn', 'haven', 'hadn', 'mustn', 'needn', 'shan', 'mightn', 'ain']);
// First-person words: a claim in them is about its speaker, so the same words from two speakers are
// about two subjects ("my favourite colour is ..." said by two people).
const FIRST_PERSON = new Set(['i', 'me', 'my', 'mine', 'myself', 'we', 'us', 'our', 'ours', 'ourselves', 'im', 'ive', 'id', 'ill']);

const MAX_TOKENS = 60; // longer texts are passages, not one claim; the alignment stays cheap
const MAX_SLOT = 3; // tokens a value may take on either side ("new york city")
const MIN_FRAME = 2; // tokens the two claims must share around the value

export type SlotDifference = { from: string; to: string; frame: string[] };

// Words as values are written: lower case, NFKC, split at white space, punctuation trimmed from
// each end only, so `atlas-one`, `10.0.0.5`, `3:30` and `4,921` stay one value each.
export function valueTokens(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .split(/\s+/)
    .map((t) => t.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean);
}

const isContent = (t: string) => !STOPWORDS.has(t.replace(/'.*$/, ''));
const negates = (ts: string[]) => ts.some((t) => NEGATION.has(t) || t.endsWith("n't"));

/**
 * Where `b` says what `a` says with one value changed: the two token lists aligned (longest common
 * subsequence), exactly one gap where both sides hold words (the slot, at most 3 tokens each, at
 * least one a content word unless it ends both claims), any other gap only stop words added or dropped ("now", "still"), no
 * negation in any gap, and a shared frame of at least 2 tokens, a content word among them, at least
 * twice the slot's longer side and at least half of each text. Null when they are the same claim, unrelated, or differ otherwise.
 */
export function slotDifference(a: string, b: string): SlotDifference | null {
  const x = valueTokens(a);
  const y = valueTokens(b);
  if (!x.length || !y.length || x.length > MAX_TOKENS || y.length > MAX_TOKENS) return null;
  // LCS table, then walk it to the gaps between matched tokens.
  const n = x.length;
  const m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Uint8Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const frame: string[] = [];
  const gaps: Array<{ a: string[]; b: string[]; at: number }> = []; // at: frame tokens before it
  let gap = { a: [] as string[], b: [] as string[] };
  const close = () => {
    if (gap.a.length || gap.b.length) gaps.push({ ...gap, at: frame.length });
    gap = { a: [], b: [] };
  };
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      close();
      frame.push(x[i]);
      i++;
      j++;
    } else if (j >= m || (i < n && L[i + 1][j] >= L[i][j + 1])) gap.a.push(x[i++]);
    else gap.b.push(y[j++]);
  }
  close();
  const slots = gaps.filter((g) => g.a.length && g.b.length);
  if (slots.length !== 1) return null;
  const [slot] = slots;
  if (slot.a.length > MAX_SLOT || slot.b.length > MAX_SLOT) return null;
  // Stop words alone ("the" for "a", "is" for "was") are the same claim, except as the claim's
  // last words, its predicate: "the flag is on" / "off", "the server is up" / "down".
  const last = slot.at === frame.length;
  if (!slot.a.some(isContent) && !slot.b.some(isContent) && !last) return null;
  if (gaps.some((g) => negates(g.a) || negates(g.b))) return null;
  if (gaps.some((g) => g !== slot && [...g.a, ...g.b].some(isContent))) return null;
  if (frame.length < MIN_FRAME || !frame.some(isContent)) return null;
  // A longer slot needs a longer frame: "fires stoneware at 1240 degrees" / "fires stoneware glaze
  // on Saturdays" add different things to a short frame, they do not change one value.
  if (frame.length < 2 * Math.max(slot.a.length, slot.b.length)) return null;
  if (frame.length * 2 < Math.max(n, m)) return null;
  return { from: slot.a.join(' '), to: slot.b.join(' '), frame };
}

export type Claim = { text: string; valid_from: string; speaker: string | null };
// `current`: `b` (the new claim) holds now and `a` held before it; `earlier`: `b` held before `a`
// (told later about the past); `contradiction`: two claims of one value for the same time.
export type UpdateRelation = { kind: 'current' | 'earlier' | 'contradiction'; slot: SlotDifference };

/**
 * How a new claim `b` stands to a stored one `a`. Null when they are not one fact with a changed
 * value, or when two speakers each say it of themselves (first person: two subjects). The same
 * valid_from is two sources disagreeing about one time: a contradiction, never silently picked.
 */
export function updateRelation(a: Claim, b: Claim): UpdateRelation | null {
  const slot = slotDifference(a.text, b.text);
  if (!slot) return null;
  if (a.speaker && b.speaker && a.speaker.toLowerCase() !== b.speaker.toLowerCase() && slot.frame.some((t) => FIRST_PERSON.has(t.replace(/'/g, '')))) return null;
  const ta = Date.parse(a.valid_from);
  const tb = Date.parse(b.valid_from);
  if (ta === tb) return { kind: 'contradiction', slot };
  return { kind: tb > ta ? 'current' : 'earlier', slot };
}
