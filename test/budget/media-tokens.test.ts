import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import zlib from 'node:zlib';
import { countMedia, imageSize, imageTokens, mayHoldMedia, pdfPages } from '../../budget/media-tokens.js';
import { gif, jpeg, pdf, png, webpVp8x } from '../fixtures/media-files.js';

const b64 = (b: Buffer) => b.toString('base64');
const img = (data: Buffer, media_type = 'image/png') => ({ type: 'image', source: { type: 'base64', media_type, data: b64(data) } });
const doc = (source: object) => ({ type: 'document', source });
const body = (content: unknown[]) => Buffer.from(JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 1000, messages: [{ role: 'user', content }] }));
const tokens = (content: unknown[]) => {
  const r = countMedia(body(content));
  assert.equal(r.kind, 'media');
  return r.kind === 'media' ? r.count.tokens : NaN;
};

describe('image size from the header', () => {
  for (const [name, data, w, h] of [
    ['png', png(1092, 1092), 1092, 1092],
    ['jpeg (its EXIF thumbnail skipped)', jpeg(4000, 3000), 4000, 3000],
    ['gif', gif(640, 480), 640, 480],
    ['webp (VP8X)', webpVp8x(3000, 200), 3000, 200],
  ] as const) {
    test(name, () => assert.deepEqual(imageSize(data), { width: w, height: h }));
  }
  test('not an image: null', () => assert.equal(imageSize(Buffer.from('hello world, not an image at all')), null));
  test('a 1092x1092 1-bit PNG is a few hundred bytes', () => assert.ok(png(1092, 1092).length < 1000, String(png(1092, 1092).length)));
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

describe('pdf pages', () => {
  test('counted from the page objects', () => assert.equal(pdfPages(pdf(90)), 90));
  test('inside a compressed object stream', () => assert.equal(pdfPages(pdf(90, { objStm: true })), 90));
  test('object streams that inflate past the budget count at the most a request may carry (control: within it, the pages)', () => {
    const doc = pdf(90, { objStm: true });
    assert.equal(pdfPages(doc, 1 << 20), 90);
    assert.equal(pdfPages(doc, 64), 600);
    // Two streams that fit alone but not together: the budget is the PDF's, not each stream's.
    const two = Buffer.concat([doc, pdf(90, { objStm: true })]);
    const one = pdfPages(doc, 1 << 20) === 90 ? zlibInflatedSize(doc) : 0;
    assert.equal(pdfPages(two, Math.ceil(one * 1.5)), 600);
    assert.equal(pdfPages(two, one * 3), 180);
  });
  test('an object stream under a filter the meter cannot read: the most a request may carry', () => assert.equal(pdfPages(pdf(3, { objStm: true, filter: 'LZWDecode' })), 600));
  test('a name spelled with #xx escapes still counts', () => assert.equal(pdfPages(Buffer.from('%PDF-1.4\n1 0 obj << /Type /P#61ge >> endobj\n2 0 obj << /Type /Page >> endobj\n')), 2));
  test('no page found: the most a request may carry', () => assert.equal(pdfPages(Buffer.from('%PDF-1.4 garbage')), 600));
});

// Every block type the Messages API takes that can carry an image or a PDF.
describe('every media block type is bounded', () => {
  test('image, base64, each format read from its header', () => {
    assert.equal(tokens([img(png(1092, 1092))]), 1590);
    assert.equal(tokens([img(jpeg(4000, 3000), 'image/jpeg')]), 5000);
    assert.equal(tokens([img(gif(640, 480), 'image/gif')]), 410);
    assert.equal(tokens([img(webpVp8x(3000, 200), 'image/webp')]), 800);
  });
  test('image, base64, unreadable: counted at the maximum', () => assert.equal(tokens([img(Buffer.from('not an image'))]), 5000));
  test('image, url or file source: counted at the maximum', () => {
    assert.equal(tokens([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }]), 5000);
    assert.equal(tokens([{ type: 'image', source: { type: 'file', file_id: 'file_1' } }]), 5000);
  });
  test('an image in a tool result (how the CLI sends a Read image)', () => {
    assert.equal(tokens([{ type: 'tool_result', tool_use_id: 't', content: [img(png(1092, 1092)), img(png(1092, 1092))] }]), 3180);
  });
  test('document, base64 PDF: each page at 10,000 (a page image at the maximum, 5,000 of text)', () => assert.equal(tokens([doc({ type: 'base64', media_type: 'application/pdf', data: b64(pdf(90)) })]), 900_000));
  test('document, content source: its images counted', () => assert.equal(tokens([doc({ type: 'content', content: [{ type: 'text', text: 'x' }, img(png(1092, 1092))] })]), 1590));
  test('document, text source: counted as text (its bytes), no media tokens', () => assert.equal(tokens([doc({ type: 'text', media_type: 'text/plain', data: 'hello' })]), 0));
  for (const st of ['url', 'file', 'something-new']) {
    test(`document, ${st} source: refused, naming why`, () => {
      const r = countMedia(body([doc({ type: st, url: 'https://example.com/a.pdf', file_id: 'f' })]));
      assert.equal(r.kind, 'refuse');
      if (r.kind === 'refuse') assert.match(r.reason, /its pages cannot be counted before the call/);
    });
  }
  test('a type spelled with \\u escapes is still found', () => {
    const raw = Buffer.from(JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [img(png(1092, 1092))] }] }).replace('"image"', '"\\u0069mage"'));
    assert.ok(!raw.includes('"image"'));
    const r = countMedia(raw);
    assert.equal(r.kind === 'media' ? r.count.tokens : null, 1590);
  });
  test('a text body takes the fast path (not parsed)', () => {
    assert.equal(mayHoldMedia(body([{ type: 'text', text: 'an image of a document, \u001b escapes' }])), false);
    assert.equal(countMedia(body([{ type: 'text', text: 'hi' }])).kind, 'none');
  });
  test('the base64 measured is taken out of the text estimate', () => {
    const data = png(1092, 1092);
    const r = countMedia(body([img(data)]));
    assert.equal(r.kind === 'media' ? r.count.mediaBytes : null, b64(data).length);
  });
});

// The inflated size of a fixture's one object stream, measured apart from the code under test.
function zlibInflatedSize(doc: Buffer): number {
  const text = doc.toString('latin1');
  const from = text.indexOf('stream\n', text.indexOf('/ObjStm')) + 'stream\n'.length;
  return zlib.inflateSync(doc.subarray(from, text.indexOf('\nendstream', from))).length;
}
