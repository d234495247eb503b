import { pdfHidden, pdf } from '/work/wt-meter/test/fixtures/media-files.ts';
import { pdfPages } from '/work/wt-meter/budget/media-tokens.ts';
const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
for (const stop of [true, false])
for (const [name, b] of [['plain', pdf(90)], ['objstm', pdf(90, {objStm: true})], ['obj-key', pdfHidden(100, 'obj-key')], ['comment', pdfHidden(100, 'comment')], ['predictor', pdfHidden(100, 'predictor')]] as const) {
  const t0 = performance.now();
  const task = pdfjs.getDocument({ data: new Uint8Array(b), isEvalSupported: false, stopAtErrors: stop, verbosity: 0 });
  try {
  const doc = await task.promise;
  const last = await doc.getPage(doc.numPages);
  console.log(stop, name, b.length, 'pdfjs', doc.numPages, 'last page view', last.view, 'scan', pdfPages(b), (performance.now() - t0).toFixed(1), 'ms');
  } catch (e) { console.log(stop, name, 'ERR', String(e), 'scan', pdfPages(b)); }
  await task.destroy();
}
