// Tombstone keys: what a forgotten claim is refused by. Pure. A reader cannot see invisible
// characters or tell a Cyrillic `а` from a Latin `a`, so neither may tell a claim from its
// forgotten twin: the text is folded first (invisible code points out, compatibility forms and
// case folded, marks dropped, confusables mapped by Unicode's table), then keyed three ways:
//   - `v2:` the folded words, and `v2g:` the same words glued (a space or dot inside a word);
//   - `near:` the words' 8-bit fingerprints in order plus the glued hash, for a near copy (a word
//     added or removed: sequence Dice against a threshold) and for the claim inside a longer text.
// None of them holds the text: a hash, and per word one of 256 buckets.
import { createHash } from 'node:crypto';
import unhomoglyph from 'unhomoglyph';

// Default-ignorable code points (ZWSP, ZWJ, ZWNJ, soft hyphen, word joiner, BOM, variation
// selectors, tag characters...), other format characters (bidi controls), and control characters.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}]/gu;
const MARKS = /\p{M}/gu;
const SEPARATOR = /[^\p{L}\p{N}]+/u;
// Below this many words a forgotten claim is matched whole only, never inside a longer text.
export const MIN_WITHIN_WORDS = 4;

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

// Small capitals are the skeleton's prototype for several lower-case look-alikes (Greek `τ`,
// Cherokee `ꭺ`): a reader takes them for the letter itself.
const SMALL_CAPS: Record<string, string> = Object.fromEntries(
  [...'ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ'].map((c, i) => [c, 'abcdefghijklmnopqrstuvwyz'[i]!]),
);
const SMALL_CAP = new RegExp(`[${Object.keys(SMALL_CAPS).join('')}]`, 'gu');

// The folded form of a text: for comparison only, not for a reader (`m` becomes `rn`, `0` `o`).
export function fold(text: string): string {
  const plain = (s: string) => s.normalize('NFD').replace(MARKS, '').replace(INVISIBLE, '');
  // Capitals first (Greek `Τ` and Cherokee `Ꭺ` are Latin capitals to a reader), then lower case
  // and once more, since a prototype may be a capital (`0` to `O`) or a small capital (`τ` to `ᴛ`).
  let s = unhomoglyph(plain(text.normalize('NFKC')));
  s = plain(s.toLowerCase().replace(/ß/g, 'ss').replace(/ς/g, 'σ'));
  s = plain(unhomoglyph(s)).replace(SMALL_CAP, (c) => SMALL_CAPS[c]!);
  // The skeleton makes `I`, `1` and `|` an `l` but leaves `i`: after lower case the four are one.
  return plain(unhomoglyph(s.toLowerCase()).toLowerCase()).replace(/l/g, 'i');
}

// The words of the folded text, in order; digit groups joined first (4,921 = 4 921 = 4921).
export function foldedWords(text: string): string[] {
  const joined = text
    .normalize('NFKC')
    .replace(INVISIBLE, '')
    .replace(/[\u2018\u2019\u02bc']/g, '')
    .replace(/(\p{N})[,._\s\u00a0\u202f](?=\p{N})/gu, '$1');
  return fold(joined).split(SEPARATOR).filter(Boolean);
}

// One word's bucket: 8 bits, so the key narrows a word to 1/256 of any dictionary and no further.
const bucket = (w: string) => createHash('sha256').update(`w:${w}`).digest()[0]!;

export type NearKey = { glued: string; length: number; buckets: number[] };

// Every key a forgotten text is stored under.
export function tombstoneKeysOf(text: string): string[] {
  const words = foldedWords(text);
  if (!words.length) return [];
  const glued = words.join('');
  const near: NearKey = { glued: sha(`g:${glued}`), length: glued.length, buckets: words.map(bucket) };
  return [`v2:${sha(`w:${words.join(' ')}`)}`, `v2g:${near.glued}`, formatNear(near)];
}

export const NEAR_PREFIX = 'near:';

export function formatNear(k: NearKey): string {
  return `${NEAR_PREFIX}${k.length}:${k.glued}:${Buffer.from(k.buckets).toString('hex')}`;
}

export function parseNear(key: string): NearKey | null {
  const m = /^near:(\d+):([0-9a-f]{64}):((?:[0-9a-f]{2})+)$/.exec(key);
  return m ? { length: Number(m[1]), glued: m[2]!, buckets: [...Buffer.from(m[3]!, 'hex')] } : null;
}

// The exact keys of a candidate text (looked up by primary key).
export function exactKeysOf(text: string): string[] {
  return tombstoneKeysOf(text).slice(0, 2);
}

// Sequence Dice: 2·LCS / (|a| + |b|). One word added to or removed from n words keeps it at
// 2n/(2n+1) or 2(n-1)/(2n-1); the same words in another order (a question) fall well below.
export function sequenceDice(a: readonly number[], b: readonly number[]): number {
  if (!a.length && !b.length) return 1;
  if (!a.length || !b.length) return 0;
  const prev = new Array<number>(b.length + 1).fill(0);
  const cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, cur[j - 1]!);
    for (let j = 0; j <= b.length; j++) prev[j] = cur[j]!;
  }
  return (2 * prev[b.length]!) / (a.length + b.length);
}

export type TombstoneMatch = { key: string; how: 'near' | 'within'; similarity: number };

// A candidate against the near keys: a near copy (sequence Dice at or above `threshold`), or a
// claim of MIN_WITHIN_WORDS or more words found whole inside it. Null when neither.
export function nearMatch(text: string, keys: ReadonlyArray<{ key: string; near: NearKey }>, threshold: number): TombstoneMatch | null {
  const words = foldedWords(text);
  if (!words.length) return null;
  const buckets = words.map(bucket);
  let glued: { text: string; starts: number[] } | null = null;
  for (const { key, near } of keys) {
    const n = near.buckets.length;
    // Dice can be no higher than this: most keys are skipped without the quadratic LCS.
    if ((2 * Math.min(n, buckets.length)) / (n + buckets.length) >= threshold) {
      const d = sequenceDice(near.buckets, buckets);
      if (d >= threshold) return { key, how: 'near', similarity: d };
    }
    if (n >= MIN_WITHIN_WORDS && buckets.length > n) {
      for (let i = 0; i + n <= buckets.length; i++) {
        if (buckets[i] !== near.buckets[0] || !near.buckets.every((b, k) => buckets[i + k] === b)) continue;
        // The buckets agree: the glued words decide.
        glued ??= gluedWithStarts(words);
        const from = glued.starts[i]!;
        const to = glued.starts[i + n]!;
        if (to - from === near.length && sha(`g:${glued.text.slice(from, to)}`) === near.glued) return { key, how: 'within', similarity: 1 };
      }
    }
  }
  return null;
}

function gluedWithStarts(words: string[]): { text: string; starts: number[] } {
  const starts = [0];
  let text = '';
  for (const w of words) {
    text += w;
    starts.push(text.length);
  }
  return { text, starts };
}
