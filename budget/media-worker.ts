// The worker thread that measures a request's media with real parsers, off the supervisor's event
// loop (budget/media-measure.ts starts it, bounds its time and memory, and ends it past them): PDF
// pages by pdf.js (the legacy build, Node's), image sizes by image-size, a JPEG's frames as a
// decoder may find them (budget/media-tokens.ts). One answer per item as soon as it is measured,
// so what was measured before a bound ended the worker still counts; null is "not understood".
import { parentPort } from 'node:worker_threads';
import { jpegLargestFrame } from './media-tokens.js';

export type MeasureRequest = { id: number; items: Array<{ kind: 'image' | 'pdf'; data: Uint8Array }> };
export type MeasureAnswer = { id: number; index: number; value: { width: number; height: number } | { pages: number } | null } | { id: number; done: true };

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | null = null;

async function pdfPages(data: Uint8Array): Promise<{ pages: number } | null> {
  const lib = await (pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs'));
  // stopAtErrors: a file pdf.js cannot read cleanly is not understood, so it counts at the maximum.
  // Loading checks the last page exists (pdf.js's checkLastPage), so /Count cannot claim pages
  // that are not there.
  const task = lib.getDocument({ data, stopAtErrors: true, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
  try {
    const doc = await task.promise;
    return { pages: doc.numPages };
  } catch {
    return null;
  } finally {
    await task.destroy().catch(() => {});
  }
}

async function imageSizeOf(data: Uint8Array): Promise<{ width: number; height: number } | null> {
  if (data[0] === 0xff && data[1] === 0xd8) return jpegLargestFrame(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  const { imageSize } = await import('image-size');
  try {
    const s = imageSize(data);
    // Every frame of an animation or every image of an icon file: the largest.
    let best = s.width && s.height ? { width: s.width, height: s.height } : null;
    for (const i of s.images ?? []) if (i.width * i.height > (best ? best.width * best.height : 0)) best = { width: i.width, height: i.height };
    return best;
  } catch {
    return null;
  }
}

parentPort?.on('message', async (m: MeasureRequest) => {
  for (let index = 0; index < m.items.length; index++) {
    const it = m.items[index];
    let value: MeasureAnswer extends infer A ? (A extends { value: infer V } ? V : never) : never = null;
    try {
      value = it.kind === 'pdf' ? await pdfPages(it.data) : await imageSizeOf(it.data);
    } catch {
      value = null;
    }
    parentPort!.postMessage({ id: m.id, index, value } satisfies MeasureAnswer);
  }
  parentPort!.postMessage({ id: m.id, done: true } satisfies MeasureAnswer);
});
