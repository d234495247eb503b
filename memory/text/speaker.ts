// Who said a text and whom a query names. Pure: the store keeps the speakers, recall asks these.

const MAX_SPEAKER = 80;

// The speaker a transcript line opens with: `Caroline: ...`, `Jon Smith: ...` (one to three
// capitalised words, then a colon and a space), or null. Import reads it when a line gives no `speaker`.
export function transcriptSpeaker(text: string): string | null {
  const m = /^(\p{Lu}[\p{L}'’-]*(?: \p{Lu}[\p{L}'’-]*){0,2}): \S/u.exec(text);
  return m && m[1].length <= MAX_SPEAKER ? m[1] : null;
}

// A speaker as stored: trimmed, whitespace folded, at most 80 characters; empty is null.
export function cleanSpeaker(speaker: string | null | undefined): string | null {
  const s = (speaker ?? '').normalize('NFKC').replace(/\s+/g, ' ').trim();
  return s ? s.slice(0, MAX_SPEAKER) : null;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Whether `text` holds `name` as whole words, case-insensitive.
export function names(text: string, name: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}])${escape(name)}(?![\\p{L}\\p{N}])`, 'iu').test(text);
}

// The known speakers a query names, lower-cased.
export function namedIn(query: string, known: readonly string[]): Set<string> {
  return new Set(known.filter((k) => names(query, k)).map((k) => k.toLowerCase()));
}

// A memory's text without its own speaker's `Name: ` opening, so naming oneself is not being about oneself.
export function ownWords(text: string, speaker: string | null): string {
  return speaker && text.toLowerCase().startsWith(`${speaker.toLowerCase()}:`) ? text.slice(speaker.length + 1) : text;
}

// Whether `text` names `name` other than as a vocative ("Thanks, Caroline!", "Hey Jon, ..."):
// addressing someone is speaking to them, not of them. A vocative: the name after the start, a
// punctuation mark or a greeting, and before a punctuation mark or the end.
const GREETING = '(?:hey|hi|hello|thanks|thank you|bye|wow|yeah|yes|oh|dear|congrats|congratulations|sorry|aw+|ok|okay)';
export function mentions(text: string, name: string): boolean {
  const vocative = new RegExp(`(^|[,.!?;:]\\s*|\\b${GREETING}\\s+)${escape(name)}(?=\\s*(?:[,.!?;]|$))`, 'giu');
  return names(text.replace(vocative, '$1'), name);
}
