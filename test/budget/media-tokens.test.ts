import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MediaMeasurer } from '../../budget/media-measure.js';
import { collectMedia, imageTokens, itemTokens, jpegLargestFrame, mayHoldMedia, type MediaItem } from '../../budget/media-tokens.js';
import { SessionMeter } from '../../budget/meter.js';
import { gif, jpeg, jpegDecoy, pdf, pdfHidden, png, webpVp8x, type HiddenShape } from '../fixtures/media-files.js';
import { lengthWalkJpegSize, textScanPdfPages } from '../fixtures/text-scan-meter.js';

const b64 = (b: Buffer) => b.toString('base64');
const img = (data: Buffer, media_type = 'image/png') => ({ type: 'image', source: { type: 'base64', media_type, data: b64(data) } });
const doc = (source: object) => ({ type: 'document', source });
const pdfDoc = (data: Buffer) => doc({ type: 'base64', media_type: 'application/pdf', data: b64(data) });
const body = (content: unknown[], o: object = {}) => Buffer.from(JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 1000, ...o, messages: [{ role: 'user', content }] }));
const items = (content: unknown[]): MediaItem[] => {
  const r = collectMedia(body(content));
  assert.equal(r.kind, 'media');
  return r.kind === 'media' ? r.collect.items : [];
};
// What a session measurer makes of the body's media, in tokens (fixed ones plus measured ones).
async function tokens(content: unknown[], m = new MediaMeasurer()): Promise<number> {
  const r = collectMedia(body(content));
  assert.equal(r.kind, 'media');
  if (r.kind !== 'media') return NaN;
  const got = await m.measure(r.collect.items);
  m.close();
  return r.collect.tokens + r.collect.items.reduce((s, it, i) => s + itemTokens(it, got.values[i]), 0);
}
const measureOne = async (item: unknown) => {
  const m = new MediaMeasurer();
  const r = await m.measure(items([item]));
  m.close();
  return r.values[0];
};

describe('image size, measured by image-size in the worker (a JPEG by every frame header in it)', () => {
  for (const [name, data, w, h] of [
    ['png', png(1092, 1092), 1092, 1092],
    ['jpeg (its EXIF thumbnail not the answer)', jpeg(4000, 3000), 4000, 3000],
    ['gif', gif(640, 480), 640, 480],
    ['webp (VP8X)', webpVp8x(3000, 200), 3000, 200],
  ] as const) {
    test(name, async () => assert.deepEqual(await measureOne(img(data)), { width: w, height: h }));
  }
  test('not an image: not understood (null), so counted at the maximum', async () => {
    assert.equal(await measureOne(img(Buffer.from('hello world, not an image at all'))), null);
    assert.equal(itemTokens({ kind: 'image' }, null), 5000);
  });
  test('a 1092x1092 1-bit PNG is a few hundred bytes', () => assert.ok(png(1092, 1092).length < 1000, String(png(1092, 1092).length)));
  test('a JPEG header that lies (a stuffed FF 00 read as a length): the decoder\'s 1990x1990, not the 16x16 decoy (control: the length walk the meter used reads the decoy)', async () => {
    const decoy = jpegDecoy(1990, 1990);
    assert.deepEqual(lengthWalkJpegSize(decoy), { width: 16, height: 16 });
    assert.deepEqual(jpegLargestFrame(decoy), { width: 1990, height: 1990 });
    assert.deepEqual(await measureOne(img(decoy, 'image/jpeg')), { width: 1990, height: 1990 });
  });
});

describe('image tokens: w*h/750, at most 5,000 (a resize only lowers it)', () => {
  for (const [w, h, want] of [
    [1092, 1092, 1590], // the vision page's own example: ~1,590
    [200, 200, 54],
    [1000, 1000, 1334],
    [2576, 1456, 5000], // the high-resolution tier's largest: 3.75 MP
    [8000, 8000, 5000],
    [10000, 100, 1334],
  ] as const) {
    test(`${w}x${h}: ${want}`, () => assert.equal(imageTokens(w, h), want));
  }
});

describe('pdf pages, counted by pdf.js in the worker', () => {
  test('a plain PDF: its pages', async () => assert.deepEqual(await measureOne(pdfDoc(pdf(90))), { pages: 90 }));
  for (const shape of ['obj-key', 'comment', 'predictor'] as HiddenShape[]) {
    test(`an object stream written the "${shape}" way: all 100 pages (control: the text scan counts 1)`, async () => {
      const file = pdfHidden(100, shape);
      assert.equal(textScanPdfPages(file), 1);
      assert.deepEqual(await measureOne(pdfDoc(file)), { pages: 100 });
    });
  }
  test('a file pdf.js cannot read cleanly (an object stream without a cross-reference): not understood, the most a request may carry', async () => {
    assert.equal(await measureOne(pdfDoc(pdf(3, { objStm: true }))), null);
    assert.equal(itemTokens({ kind: 'pdf' }, null), 600 * 10_000);
  });
  test('not a PDF at all: the most a request may carry', async () => assert.equal(await measureOne(pdfDoc(Buffer.from('%PDF-1.4 garbage'))), null));
});

describe('the bounds: past them what was not measured counts at the maximum', () => {
  const bomb = pdfHidden(3, 'obj-key', 64 << 20);
  test('a 64 MiB object stream against a 16 MB bound: the worker is ended, the PDF counts at the maximum (control: with 512 MB, its 3 pages)', async () => {
    const small = new MediaMeasurer({ requestMs: 60_000, sessionMs: 60_000, memoryMb: 16 });
    const r = await small.measure(items([pdfDoc(bomb)]));
    small.close();
    assert.equal(r.values[0], null);
    assert.match(r.why ?? '', /16 MB|worker/);
    const big = new MediaMeasurer({ requestMs: 60_000, sessionMs: 60_000, memoryMb: 512 });
    const ok = await big.measure(items([pdfDoc(bomb)]));
    big.close();
    assert.deepEqual([ok.values[0], ok.why], [{ pages: 3 }, null]);
  });
  test('a request past its time bound: what was measured stays, the rest counts at the maximum, and the next request is measured again', async () => {
    const m = new MediaMeasurer({ requestMs: 1, sessionMs: 60_000, memoryMb: 256 });
    const r = await m.measure(items([pdfDoc(bomb), pdfDoc(pdf(5))]));
    assert.match(r.why ?? '', /passed 1 ms/);
    assert.deepEqual(r.values, [null, null]);
    m.close();
  });
  test('the session\'s total: once spent, nothing more is measured (control: a fresh session measures the same file)', async () => {
    const m = new MediaMeasurer({ requestMs: 60_000, sessionMs: 1, memoryMb: 256 });
    await m.measure(items([pdfDoc(pdf(7))]));
    const second = await m.measure(items([pdfDoc(pdf(9))]));
    m.close();
    assert.match(second.why ?? '', /session's 1 ms/);
    assert.deepEqual(second.values, [null]);
    const fresh = new MediaMeasurer();
    assert.deepEqual((await fresh.measure(items([pdfDoc(pdf(9))]))).values, [{ pages: 9 }]);
    fresh.close();
  });
  test('a file carried again is measured once a session (its hash)', async () => {
    const m = new MediaMeasurer();
    const first = await m.measure(items([pdfDoc(pdf(4))]));
    const again = await m.measure(items([pdfDoc(pdf(4)), pdfDoc(pdf(4))]));
    m.close();
    assert.ok(first.ms > 0);
    assert.deepEqual([again.values, again.ms], [[{ pages: 4 }, { pages: 4 }], 0]);
  });
});

// Every block type the Messages API takes that can carry an image or a PDF.
describe('every media block type is bounded', () => {
  test('image, base64, each format read from its header', async () => {
    assert.equal(await tokens([img(png(1092, 1092))]), 1590);
    assert.equal(await tokens([img(jpeg(4000, 3000), 'image/jpeg')]), 5000);
    assert.equal(await tokens([img(gif(640, 480), 'image/gif')]), 410);
    assert.equal(await tokens([img(webpVp8x(3000, 200), 'image/webp')]), 800);
  });
  test('image, base64, unreadable: counted at the maximum', async () => assert.equal(await tokens([img(Buffer.from('not an image'))]), 5000));
  test('image, url or file source: counted at the maximum', async () => {
    assert.equal(await tokens([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }]), 5000);
    assert.equal(await tokens([{ type: 'image', source: { type: 'file', file_id: 'file_1' } }]), 5000);
  });
  test('an image in a tool result (how the CLI sends a Read image)', async () => {
    assert.equal(await tokens([{ type: 'tool_result', tool_use_id: 't', content: [img(png(1092, 1092)), img(png(1092, 1092))] }]), 3180);
  });
  test('document, base64 PDF: each page at 10,000 (a page image at the maximum, 5,000 of text)', async () => assert.equal(await tokens([pdfDoc(pdf(90))]), 900_000));
  test('document, content source: its images counted', async () => assert.equal(await tokens([doc({ type: 'content', content: [{ type: 'text', text: 'x' }, img(png(1092, 1092))] })]), 1590));
  test('document, text source: counted as text (its bytes), no media tokens', () => {
    const r = collectMedia(body([doc({ type: 'text', media_type: 'text/plain', data: 'hello' })]));
    assert.deepEqual(r.kind === 'media' ? [r.collect.tokens, r.collect.items.length] : null, [0, 0]);
  });
  for (const st of ['url', 'file', 'something-new']) {
    test(`document, ${st} source: refused, naming why`, () => {
      const r = collectMedia(body([doc({ type: st, url: 'https://example.com/a.pdf', file_id: 'f' })]));
      assert.equal(r.kind, 'refuse');
      if (r.kind === 'refuse') assert.match(r.reason, /its pages cannot be counted before the call/);
    });
  }
  test('a type spelled with \\u escapes is still found', () => {
    const raw = Buffer.from(JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [img(png(1092, 1092))] }] }).replace('"image"', '"\\u0069mage"'));
    assert.ok(!raw.includes('"image"'));
    const r = collectMedia(raw);
    assert.equal(r.kind === 'media' ? r.collect.items.length : null, 1);
  });
  test('a text body takes the fast path (not parsed)', () => {
    assert.equal(mayHoldMedia(body([{ type: 'text', text: 'an image of a document, \u001b escapes' }])), false);
    assert.equal(collectMedia(body([{ type: 'text', text: 'hi' }])).kind, 'none');
  });
  test('the base64 measured is taken out of the text estimate', () => {
    const data = png(1092, 1092);
    const r = collectMedia(body([img(data)]));
    assert.equal(r.kind === 'media' ? r.collect.mediaBytes : null, b64(data).length);
  });
});

// Each hostile file against a reservation it would pass, through the meter the proxy uses.
// The imitation API bills a page at 1,000 tokens and an image it cannot size at 1,600: 100 pages
// at Sonnet's $3 a million are $0.30, past a $0.25 reservation.
describe('the meter refuses what it would have admitted by the old count', () => {
  const reservation = 0.25;
  for (const shape of ['obj-key', 'comment', 'predictor'] as HiddenShape[]) {
    test(`a 100-page PDF written the "${shape}" way against $0.25: refused (control: counted at the text scan's 1 page, it fits)`, async () => {
      const raw = body([pdfDoc(pdfHidden(100, shape))], { max_tokens: 1000 });
      const m = new SessionMeter({ reservationUsd: reservation });
      const a = await m.admit(raw);
      m.dispose();
      assert.equal(a.ok, false);
      if (!a.ok) assert.match(a.reason, /1000000 tokens of it images and PDF pages/);
      // The control: the same call's worst case at the page count the text scan gave.
      const old = new SessionMeter({ reservationUsd: reservation, measurer: fixedMeasurer({ pages: textScanPdfPages(pdfHidden(100, shape)) }) });
      assert.equal((await old.admit(raw)).ok, true);
    });
  }
});

// A measurer that answers `value` for every item without a worker: the controls' old counts.
function fixedMeasurer(value: { pages: number } | { width: number; height: number }): MediaMeasurer {
  const m = new MediaMeasurer();
  m.measure = async (its) => ({ values: its.map(() => value), why: null, ms: 0 });
  return m;
}
