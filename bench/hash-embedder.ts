// An experiment kept for the record, not a product arm: words and their character 3- and 4-grams,
// feature-hashed into signed dimensions (pure JS, deterministic, no weights). Measured in
// bench/embeddings.ts: without corpus statistics (IDF) a word in every text, such as a speaker's
// name, outweighs the rare words that matter, and fused with BM25 it lowers recall at every depth.
import type { Embedder } from '../memory/types.js';
import { toUnit } from '../memory/embeddings/unit-vector.js';

// Common English function words: they carry no topic and would dominate a vector without IDF.
export const STOPWORDS: ReadonlySet<string> = new Set(
  ("a about above after again against all am an and any are aren't as at be because been before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then there there's these they they'd they'll they're they've this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves " +
    // contraction halves left by splitting on the apostrophe, and filler words of chat
    's t d ll m re ve don didn doesn isn wasn aren weren won wouldn couldn shouldn hasn haven hadn can just also really yeah oh hey hi ok okay')
    .split(/\s+/)
    .filter(Boolean),
);

export type HashEmbedderOptions = {
  dim?: number; // default 512
  ngrams?: number[]; // character n-gram sizes, default [3, 4]; [] for whole words only
  ngramWeight?: number; // share of a word's weight spread over its n-grams, default 1 (as much as the word itself)
};

// Words of a text, lower-cased, accents folded, stop words dropped.
export function contentWords(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
  const out: string[] = [];
  for (const m of folded.matchAll(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu)) {
    const w = m[0].replace(/'.*$/, '');
    if (w.length > 1 && !STOPWORDS.has(w)) out.push(w);
  }
  return out;
}

// FNV-1a, 32 bits.
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

// The hashed n-gram embedder. Its model name carries its parameters: another setting is another space.
export function createHashEmbedder(o: HashEmbedderOptions = {}): Embedder & { embedSync(text: string): Float32Array } {
  const dim = o.dim ?? 512;
  const ngrams = o.ngrams ?? [3, 4];
  const ngramWeight = o.ngramWeight ?? 1;
  const model = `hash-v1-${ngrams.join('') || 'w'}-${dim}`;
  const add = (v: Float32Array, feature: string, w: number) => {
    const h = fnv1a(feature);
    v[h % dim] += h & 0x80000000 ? -w : w;
  };
  const embedSync = (text: string): Float32Array => {
    const v = new Float32Array(dim);
    const tf = new Map<string, number>();
    for (const w of contentWords(text)) tf.set(w, (tf.get(w) ?? 0) + 1);
    for (const [word, n] of tf) {
      const weight = 1 + Math.log(n);
      add(v, `w:${word}`, weight);
      const padded = `<${word}>`;
      const grams: string[] = [];
      for (const k of ngrams) for (let i = 0; i + k <= padded.length; i++) grams.push(padded.slice(i, i + k));
      for (const g of grams) add(v, `g:${g}`, (weight * ngramWeight) / Math.sqrt(grams.length));
    }
    // A text of stop words only still gets a unit vector, in a dimension of its own.
    if (!tf.size) add(v, 'empty:', 1);
    return toUnit(v);
  };
  return {
    model,
    dim,
    embedSync,
    async embed(texts: string[]) {
      return texts.map(embedSync);
    },
  };
}
