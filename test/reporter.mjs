// A node:test reporter for test/run.mjs: one JSON line per finished test or suite, written to the
// file run.mjs names, so the closing count is ours and not Node 20's (which drops the tests of a
// skipped suite). Only what test/summary.mjs reads is kept.
export default async function* results(source) {
  for await (const { type, data } of source) {
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    yield `${JSON.stringify({
      ok: type === 'test:pass',
      name: data.name,
      file: data.file ?? null,
      nesting: data.nesting,
      suite: data.details?.type === 'suite',
      skip: data.skip === undefined ? null : String(data.skip === true ? '' : data.skip),
      todo: data.todo === undefined ? null : String(data.todo === true ? '' : data.todo),
    })}\n`;
  }
}
