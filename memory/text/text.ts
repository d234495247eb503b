// Text helpers shared by the gate, the tombstones and the lexical arm: one normalisation, one
// tokeniser (it splits like FTS5's unicode61, so the gate and the index see the same words).
import { createHash } from 'node:crypto';

// Common English stop words (the NLTK list): they carry no topic, and BM25 over a short turn
// rewards them out of all proportion.
export const STOPWORDS: ReadonlySet<string> = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
it its itself they them their theirs themselves what which who whom this that these those am is are was were be been
being have has had having do does did doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in out on off over under again further
then once here there when where why how all any both each few more most other some such no nor not only own same so
than too very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma
mightn mustn needn shan shouldn wasn weren won wouldn`.split(/\s+/),
);

// Lower case, NFKC, one space between words, no surrounding punctuation: "the same claim".
export function normalize(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[\p{P}\s]+|[\p{P}\s]+$/gu, '');
}

// The tombstone key of a claim.
export function textHash(text: string): string {
  return createHash('sha256').update(normalize(text)).digest('hex');
}

// A second tombstone key, by words alone: "Bob's bank-PIN is: 4,921 🙂" and "bobs bank pin is
// 4921" are the same claim, whatever the punctuation, symbols or invisible characters between.
export function wordsHash(text: string): string {
  const words = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc']/g, '')
    // Digit groups: 4,921 and 4 921 and 4.921 are one number here.
    .replace(/(\p{N})[,._\s\u00a0\u202f](?=\p{N})/gu, '$1')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  return createHash('sha256').update(`words:${words.join(' ')}`).digest('hex');
}

// Every key a forgotten claim is refused by.
export const tombstoneKeys = (text: string): string[] => [textHash(text), wordsHash(text)];

// Every word, lower case, in order.
export function tokens(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

// The words that say what a text is about, each once, in order of first appearance.
export function contentTerms(text: string, max = 48): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const t of tokens(text)) {
    if (STOPWORDS.has(t) || seen.has(t)) continue;
    seen.add(t);
    out.push(t);
    if (out.length >= max) break;
  }
  return out;
}

// A question's own frame says how the answer is shaped, not what it is about: "what kind of art",
// "how long did it take". Those words go from a query's terms (the rest as contentTerms).
const QUESTION_FRAME = /\b(?:kinds?|types?|sorts?)\s+of\b|\bhow\s+(?:long|many|much|often)\b/giu;
export function queryTerms(text: string, max = 48): string[] {
  return contentTerms(text.normalize('NFKC').replace(QUESTION_FRAME, ' '), max);
}

// Whether a text mostly asks: at least half its sentences are questions (bracketed asides left
// out). A question carries less of what is known than a statement: of the LoCoMo dev turns, 10%
// mostly ask, of the turns that answer its questions 3%.
export function asksMostly(text: string): boolean {
  const sentences = text
    .replace(/\[[^\]]*\]/g, ' ')
    .split(/(?<=[.!?])\s+/)
    .filter((x) => /[\p{L}\p{N}]/u.test(x));
  const asked = sentences.filter((x) => /\?[\s"'\u2019\u201d)]*$/u.test(x)).length;
  return asked > 0 && asked * 2 >= sentences.length;
}

// An FTS5 MATCH expression: the terms quoted (FTS5 syntax cannot leak in) and OR-ed; null when empty.
export function ftsQuery(terms: string[]): string | null {
  if (!terms.length) return null;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
}

// Dice overlap of two token sets, 0..1. Stop words count: "Me too!" and "Yes!" must not look alike.
export function dice(a: string[], b: string[]): number {
  const A = new Set(a);
  const B = new Set(b);
  if (!A.size && !B.size) return 1;
  if (!A.size || !B.size) return 0;
  let both = 0;
  for (const t of A) if (B.has(t)) both++;
  return (2 * both) / (A.size + B.size);
}
