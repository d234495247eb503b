// Which lines of a session's own text are its own words, and the markers among them. A model quotes
// a web page or a file in fenced code, indented code or a `>` block quote; a marker there is someone
// else's text and never counts. Pure, and conservative: when a line might be quoted, it is.

// ANNEAL: one pass of the self-annealing loop (sessions/state/anneal.ts).
export const MARKERS = ['OBSERVE', 'BELIEVE', 'THREAD', 'RESOLVED', 'ANNEAL'] as const;
export type MarkerKind = (typeof MARKERS)[number];
export type Marker = { kind: MarkerKind; text: string };
export type LineKind = 'own' | 'code' | 'quote' | 'blank';

// At most this many markers are taken from one session.
export const MAX_MARKERS = 40;
const MAX_MARKER_CHARS = 1000;

// A list bullet (`-`, `*`, `+`, `1.`, `1)`) and the space after it.
const BULLET = /^(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)/;
const MARKER = /^(?:\*\*)?(OBSERVE|BELIEVE|THREAD|RESOLVED|ANNEAL):(?:\*\*)?[ \t]*(.+?)[ \t]*$/;

// The column a line's content starts at, tabs to the next multiple of 4 (CommonMark).
function indentOf(line: string): { cols: number; rest: string } {
  let cols = 0;
  let i = 0;
  for (; i < line.length; i++) {
    if (line[i] === ' ') cols++;
    else if (line[i] === '\t') cols += 4 - (cols % 4);
    else break;
  }
  return { cols, rest: line.slice(i) };
}

// A line's content under any bullets and `>` markers, and what was stripped to reach it.
function strip(rest: string): { body: string; quoted: boolean; bullets: number; bulletWidth: number } {
  let body = rest;
  let quoted = false;
  let bullets = 0;
  let bulletWidth = 0;
  for (;;) {
    const b = BULLET.exec(body);
    if (b) {
      bullets++;
      bulletWidth += b[0].length;
      body = body.slice(b[0].length);
      continue;
    }
    if (body.startsWith('>')) {
      quoted = true;
      body = body.slice(1).replace(/^[ \t]+/, '');
      continue;
    }
    return { body, quoted, bullets, bulletWidth };
  }
}

const FENCE_OPEN = /^(`{3,}|~{3,})/;

/**
 * Classifies every line (CR, LF and CRLF all end a line). Fences count wherever they sit (in a
 * list, in a quote) and an unclosed one runs to the end; a `>` line and the lines that lazily
 * continue it until a blank line (or a new list item) are quoted; a line indented 4 columns past its list item's content
 * (or past the margin, outside lists) is code.
 */
export function classifyLines(text: string): Array<{ line: string; kind: LineKind }> {
  const out: Array<{ line: string; kind: LineKind }> = [];
  let fence: { ch: string; len: number; cols: number } | null = null;
  let inQuote = false;
  // Content columns of the open list items, innermost last.
  let lists: number[] = [];
  let prevBlank = true;
  let inCode = false;
  for (const line of text.split(/\r\n|\r|\n/)) {
    const { cols, rest } = indentOf(line);
    const s = strip(rest);
    if (fence) {
      // A closer indented 4 or more past the opener is code inside the fence (CommonMark).
      const close = new RegExp(`^${fence.ch === '`' ? '`' : '~'}{${fence.len},}[ \\t]*$`);
      if (close.test(s.body) && cols - fence.cols <= 3) fence = null;
      out.push({ line, kind: 'code' });
      prevBlank = false;
      continue;
    }
    const open = FENCE_OPEN.exec(s.body);
    // ```` ```x``` ```` on one line is inline code: a backtick fence's info string has no backtick.
    if (open && !(open[1][0] === '`' && s.body.slice(open[1].length).includes('`'))) {
      fence = { ch: open[1][0], len: open[1].length, cols };
      out.push({ line, kind: 'code' });
      prevBlank = false;
      inCode = false;
      continue;
    }
    if (!rest.trim()) {
      out.push({ line, kind: 'blank' });
      inQuote = false;
      prevBlank = true;
      continue;
    }
    // A line that starts a list item starts a block of its own: it does not continue a quote.
    if (s.quoted || (inQuote && !prevBlank && s.bullets === 0)) {
      inQuote = true;
      out.push({ line, kind: 'quote' });
      prevBlank = false;
      continue;
    }
    // The list item this line belongs to: the innermost whose content column it reaches.
    while (lists.length && cols < lists[lists.length - 1] && (prevBlank || s.bullets > 0)) lists.pop();
    const base = lists.length && cols >= lists[lists.length - 1] ? lists[lists.length - 1] : 0;
    // Indented code cannot interrupt a paragraph, but it may continue one after a blank line:
    // either way 4 columns past the base is never taken as a line start.
    if (cols - base >= 4 && (prevBlank || inCode || !lists.length)) {
      out.push({ line, kind: 'code' });
      inCode = true;
      prevBlank = false;
      continue;
    }
    inCode = false;
    if (s.bullets > 0) {
      lists.push(cols + s.bulletWidth);
    } else if (prevBlank && cols < base) {
      lists = [];
    }
    out.push({ line, kind: 'own' });
    prevBlank = false;
  }
  return out;
}

// The marker a line of the session's own words starts with, if any.
function markerOf(line: string): Marker | null {
  const m = MARKER.exec(strip(indentOf(line).rest).body);
  if (!m || !m[2]) return null;
  return { kind: m[1] as MarkerKind, text: m[2].slice(0, MAX_MARKER_CHARS) };
}

/** The marked lines of the session's own words, in order, each once (at most MAX_MARKERS). */
export function extractMarkers(texts: string[]): Marker[] {
  const out: Marker[] = [];
  const seen = new Set<string>();
  for (const t of texts) {
    for (const l of classifyLines(t)) {
      if (l.kind !== 'own') continue;
      const m = markerOf(l.line);
      if (!m) continue;
      const key = `${m.kind}:${m.text}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(m);
      if (out.length >= MAX_MARKERS) return out;
    }
  }
  return out;
}

/** A text with its quoted and code lines left out: what may be read as the session's own words. */
export function ownWords(text: string): string {
  return classifyLines(text)
    .filter((l) => l.kind === 'own' || l.kind === 'blank')
    .map((l) => l.line)
    .join('\n');
}

/** `RESOLVED: #12 what settled it` names thread 12; without an id it names none. */
export function resolvedId(text: string): { id: number; resolution: string } | null {
  const m = /^#(\d{1,15})(?![\d\w])[ \t]*[:\-–—]?[ \t]*(.*)$/.exec(text.trim());
  if (!m) return null;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) && id > 0 ? { id, resolution: m[2].trim() } : null;
}
