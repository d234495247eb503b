// Pure: the most input tokens a call's images and PDF pages can be billed, read from the media
// themselves. The API bills an image by its pixels and a PDF by its pages, not by their bytes: a
// 667-byte 1-bit PNG of 1092x1092 is ~1,590 tokens, a few KB of PDF can be 90 pages. The text of
// a body stays estimated from its bytes (budget/reservation.ts); the base64 of the media is taken
// out of that estimate and counted here instead, from what a real parser measured of it in a worker
// thread (budget/media-worker.ts, bounded by budget/media-measure.ts), never a scan of PDF text.
import { createHash } from 'node:crypto';

// Vision (platform.claude.com/docs/en/build-with-claude/vision): tokens ~ width*height/750, an
// image whose long edge passes 1568 px (or ~1,600 tokens) scaled down first. Newer models take
// high-resolution images up to 3.75 megapixels (Opus 4.7 release notes), so the bound takes that
// tier: at most 3.75 MP, 5,000 tokens per image. A resize only takes pixels away, so the bound
// does not model the long-edge limit (1568 px, or 2576 on the high-resolution tier).
export const PIXELS_PER_TOKEN = 750;
export const IMAGE_MAX_PIXELS = 3_750_000;
export const IMAGE_MAX_TOKENS = Math.ceil(IMAGE_MAX_PIXELS / PIXELS_PER_TOKEN);
// PDF support (platform.claude.com/docs/en/build-with-claude/pdf-support): each page is sent as
// its text and an image of the page, "typically 1,500-3,000 tokens" of text. No maximum is
// published: a page counts as a whole image at the high-resolution bound plus 5,000 of text.
export const PAGE_TEXT_TOKENS = 5000;
export const PAGE_MAX_TOKENS = IMAGE_MAX_TOKENS + PAGE_TEXT_TOKENS;
// The most pages a request may carry (the 1M-context models' limit); a PDF whose pages cannot be
// counted is counted at this.
export const PDF_MAX_PAGES = 600;


// Pure: whether a body may hold an image or a document block, from its bytes alone: a block's
// type is the JSON string "image" or "document", unless spelled with \u escapes of printable
// characters (JSON.stringify never writes those), which send the body to the full read.
const IMAGE = Buffer.from('"image"');
const DOCUMENT = Buffer.from('"document"');
const ESCAPE = Buffer.from('\\u');
export function mayHoldMedia(raw: Buffer): boolean {
  if (raw.includes(IMAGE) || raw.includes(DOCUMENT)) return true;
  for (let i = raw.indexOf(ESCAPE); i !== -1; i = raw.indexOf(ESCAPE, i + 2)) {
    const code = parseInt(raw.toString('latin1', i + 2, i + 6), 16);
    if (code >= 0x20 && code < 0x7f) return true;
  }
  return false;
}

// Pure: the most tokens an image of this size can be billed (the API's resize only lowers it).
export function imageTokens(width: number, height: number): number {
  if (!(width > 0 && height > 0)) return IMAGE_MAX_TOKENS;
  return Math.min(IMAGE_MAX_TOKENS, Math.ceil((width * height) / PIXELS_PER_TOKEN));
}

// Pure: the largest frame a JPEG decoder could take from these bytes: every frame header (SOFn)
// anywhere in the file, whatever segment lengths claim. A length-skipping walk is what a lying
// header fools (a stuffed FF 00 read as a segment length hides the real 1990x1990 frame behind a
// 16x16 decoy); a decoder resynchronises on the next marker, so any SOFn in the bytes may be its.
// Valid entropy-coded data holds no FF Cn (an FF there is followed by 00 or a restart marker).
// null: no frame header, or one with no height (set later by DNL): counted at the maximum.
export function jpegLargestFrame(b: Buffer): { width: number; height: number } | null {
  let best: { width: number; height: number } | null = null;
  for (let i = b.indexOf(0xff); i !== -1 && i + 9 <= b.length; i = b.indexOf(0xff, i + 1)) {
    const m = b[i + 1];
    if (m < 0xc0 || m > 0xcf || m === 0xc4 || m === 0xc8 || m === 0xcc) continue;
    const s = { width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
    if (s.width === 0 || s.height === 0) return null;
    if (!best || s.width * s.height > best.width * best.height) best = s;
  }
  return best;
}

// What the worker measures (budget/media-measure.ts): one image or PDF, its bytes and their hash
// (a file carried again on every later call is measured once a session).
// block: the content block it came in (what count_tokens is asked about; never sent to the worker).
export type MediaItem = { kind: 'image' | 'pdf'; data: Buffer; hash: string; block?: Record<string, unknown> };
// Pure: the tokens an item counts for, from what the worker measured (pixels for an image, pages
// for a PDF), or at the maximum when nothing was measured (not understood, past a bound).
export function itemTokens(item: Pick<MediaItem, 'kind'>, measured: { width: number; height: number } | { pages: number } | null): number {
  if (item.kind === 'image') return measured && 'width' in measured ? imageTokens(measured.width, measured.height) : IMAGE_MAX_TOKENS;
  const pages = measured && 'pages' in measured && Number.isSafeInteger(measured.pages) && measured.pages > 0 ? measured.pages : PDF_MAX_PAGES;
  return pages * PAGE_MAX_TOKENS;
}

// Pure: every image and document block anywhere in the body (tool results, a document's
// content source). A url or file source cannot be measured here: an image so named counts at
// IMAGE_MAX_TOKENS (a true bound whatever its size); a document so named is refused (its pages are
// unknown and unbounded up to the request's limit). base64 images and PDFs are returned as items
// for the worker to measure; `tokens` holds what is already known (the unmeasurable images).
export type MediaCollect = { tokens: number; mediaBytes: number; images: number; documents: number; items: MediaItem[]; parsed: Record<string, unknown> };
export type MediaScan = { kind: 'none' } | { kind: 'media'; collect: MediaCollect } | { kind: 'refuse'; reason: string };
export function collectMedia(raw: Buffer): MediaScan {
  if (!mayHoldMedia(raw)) return { kind: 'none' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return { kind: 'refuse', reason: 'the request body is not JSON' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { kind: 'refuse', reason: 'the request body is not a JSON object' };
  const c: MediaCollect = { tokens: 0, mediaBytes: 0, images: 0, documents: 0, items: [], parsed: parsed as Record<string, unknown> };
  let refusal: string | null = null;
  const add = (kind: MediaItem['kind'], src: any, block: Record<string, unknown>): boolean => {
    if (!(src && src.type === 'base64' && typeof src.data === 'string')) return false;
    const data = Buffer.from(src.data, 'base64');
    c.items.push({ kind, data, hash: createHash('sha256').update(kind).update(data).digest('hex'), block });
    c.mediaBytes += src.data.length;
    return true;
  };
  const visit = (v: unknown, depth: number): void => {
    if (refusal || depth > 256 || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const o = v as Record<string, any>;
    if (o.type === 'image') {
      c.images++;
      if (!add('image', o.source, o)) c.tokens += IMAGE_MAX_TOKENS;
      return;
    }
    if (o.type === 'document' && o.source && typeof o.source === 'object') {
      const st = o.source.type;
      if (st === 'base64') {
        c.documents++;
        if (!add('pdf', o.source, o)) c.tokens += PDF_MAX_PAGES * PAGE_MAX_TOKENS;
        return;
      }
      if (st !== 'text' && st !== 'content') {
        refusal = `a document block with a ${JSON.stringify(st)} source: its pages cannot be counted before the call, so the budget cannot bound it (send the PDF as base64)`;
        return;
      }
      // text: its text is in the body and counted by its bytes; content: its blocks are visited.
    }
    for (const k in o) visit(o[k], depth + 1);
  };
  visit(parsed, 0);
  if (refusal) return { kind: 'refuse', reason: refusal };
  return { kind: 'media', collect: c };
}
