// Pure: the most input tokens a call's images and PDF pages can be billed, read from the media
// themselves. The API bills an image by its pixels and a PDF by its pages, not by their bytes: a
// 667-byte 1-bit PNG of 1092x1092 is ~1,590 tokens, a few KB of PDF can be 90 pages. The text of
// a body stays estimated from its bytes (budget/reservation.ts); the base64 of what is measured
// here is taken out of that estimate and its media counted instead.
import zlib from 'node:zlib';

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

// tokens: the media's bound; mediaBytes: the base64 characters measured (taken out of the text
// estimate); parsed: the body as read, to forward re-serialised so the API reads what was counted.
export type MediaCount = { tokens: number; mediaBytes: number; images: number; pages: number; parsed: Record<string, unknown> };
export type MediaScan = { kind: 'none' } | { kind: 'media'; count: MediaCount } | { kind: 'refuse'; reason: string };

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

// Pure: width and height from a PNG, GIF, JPEG or WebP header; null when it cannot be read.
export function imageSize(b: Buffer): { width: number; height: number } | null {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString('latin1', 0, 4) === 'GIF8') return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = b.toString('latin1', 12, 16);
    if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    if (chunk === 'VP8L') return { width: 1 + (((b[22] & 0x3f) << 8) | b[21]), height: 1 + (((b[24] & 0x0f) << 10) | (b[23] << 2) | ((b[22] & 0xc0) >> 6)) };
    if (chunk === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
    return null;
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    // Every frame header (SOFn) the segments lead to; the largest counts (an EXIF thumbnail sits
    // inside APP1 and is skipped with its segment).
    let best: { width: number; height: number } | null = null;
    let i = 2;
    while (i + 4 <= b.length) {
      if (b[i] !== 0xff) return best;
      const m = b[i + 1];
      if (m === 0xff) {
        i++;
        continue;
      }
      if (m === 0xd9 || m === 0xda) break;
      if (m === 0x01 || (m >= 0xd0 && m <= 0xd7)) {
        i += 2;
        continue;
      }
      const len = b.readUInt16BE(i + 2);
      if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc && i + 9 <= b.length) {
        const s = { width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
        if (!best || s.width * s.height > best.width * best.height) best = s;
      }
      i += 2 + len;
    }
    return best;
  }
  return null;
}

// The inflated bytes one PDF's object streams may take in all (the proxy inflates them in line).
export const PDF_INFLATE_BUDGET = 64 << 20;

// PDF names may spell a character as #xx (`/P#61ge` is `/Page`).
const names = (s: string) => s.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

// Pure: how many pages a PDF has, at most: the Page objects and the largest /Count, read in the
// file and in its object streams; a PDF whose object streams cannot be read (another filter,
// encrypted), or where no page is found, counts at PDF_MAX_PAGES.
export function pdfPages(b: Buffer, inflateBudget = PDF_INFLATE_BUDGET): number {
  const text = b.toString('latin1');
  let visible = names(text);
  let opaque = false;
  // What all its object streams may inflate to, together: past it the PDF counts at its maximum
  // (a bound still), so many small bombs cannot hold the supervisor's event loop.
  let left = inflateBudget;
  const re = /(?<!end)stream\r?\n/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const dictFrom = text.lastIndexOf('obj', m.index);
    const dict = names(text.slice(dictFrom === -1 ? Math.max(0, m.index - 2048) : dictFrom, m.index));
    if (!/\/Type\s*\/ObjStm/.test(dict)) continue;
    const end = text.indexOf('endstream', m.index);
    const data = b.subarray(m.index + m[0].length, end === -1 ? b.length : end);
    const filters = dict.match(/\/Filter\s*(\[[^\]]*\]|\/\w+)/)?.[1] ?? '';
    try {
      if (filters.replace(/\/FlateDecode|[\s[\]]/g, '') !== '') throw new Error('filter');
      if (left <= 0) throw new Error('inflate budget');
      const plain = /FlateDecode/.test(filters) ? zlib.inflateSync(data, { maxOutputLength: left, finishFlush: zlib.constants.Z_SYNC_FLUSH }) : data;
      left -= plain.length;
      visible += '\n' + names(plain.toString('latin1'));
    } catch {
      opaque = true;
    }
  }
  if (opaque) return PDF_MAX_PAGES;
  const objects = (visible.match(/\/Type\s*\/Page(?![A-Za-z0-9_])/g) ?? []).length;
  let count = 0;
  for (const c of visible.matchAll(/\/Count\s+(\d{1,9})/g)) count = Math.max(count, Number(c[1]));
  const pages = Math.max(objects, count);
  return pages === 0 ? PDF_MAX_PAGES : pages;
}

// Pure: every image and document block anywhere in the body (tool results, a document's
// content source), counted at its maximum. A url or file source cannot be measured here: an
// image so named counts at IMAGE_MAX_TOKENS (a true bound whatever its size); a document so
// named is refused (its pages are unknown and unbounded up to the request's limit).
export function countMedia(raw: Buffer): MediaScan {
  if (!mayHoldMedia(raw)) return { kind: 'none' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return { kind: 'refuse', reason: 'the request body is not JSON' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { kind: 'refuse', reason: 'the request body is not a JSON object' };
  const c: MediaCount = { tokens: 0, mediaBytes: 0, images: 0, pages: 0, parsed: parsed as Record<string, unknown> };
  let refusal: string | null = null;
  const base64 = (src: any): Buffer | null => (src && src.type === 'base64' && typeof src.data === 'string' ? Buffer.from(src.data, 'base64') : null);
  const visit = (v: unknown, depth: number): void => {
    if (refusal || depth > 256 || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const o = v as Record<string, any>;
    if (o.type === 'image') {
      c.images++;
      const data = base64(o.source);
      const size = data ? imageSize(data) : null;
      c.tokens += size ? imageTokens(size.width, size.height) : IMAGE_MAX_TOKENS;
      if (data) c.mediaBytes += o.source.data.length;
      return;
    }
    if (o.type === 'document' && o.source && typeof o.source === 'object') {
      const st = o.source.type;
      if (st === 'base64') {
        const data = base64(o.source);
        const pages = data ? pdfPages(data) : PDF_MAX_PAGES;
        c.pages += pages;
        c.tokens += pages * PAGE_MAX_TOKENS;
        if (data) c.mediaBytes += o.source.data.length;
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
  return { kind: 'media', count: c };
}
