// Pure: the closing count of a test run from test/reporter.mjs's records, in the order node
// reported them (per file, a test's children before the test itself).
//
// Node 20 counts a skipped suite as nothing, so a suite that skips itself must declare each test
// with `{ skip: reason }`; a suite skipped whole (`describe(name, { skip })`) hides how many tests
// it holds and counts here as one skipped. A failed suite with no failed test under it (a failing
// after() hook) counts as one failure. Under CI=true a skip in a proof file (`proofs`, paths under
// the test root without `.test.js`) is a failure with its reason: a proof may not go missing.

const noExt = (rel) => rel.replace(/\.test\.m?js$/, '');

export function summarize(records, { root = '', ci = false, proofs = [] } = {}) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const groups = new Map(); // "file › suite › reason" -> { file, suite, reason, count, proof }
  const perFile = new Map(); // file -> { fails: number[], skips: Array<{ nesting, reason, suite, closed }> }
  const rel = (file) => (file && root && file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file ?? '(no file)');

  for (const r of records) {
    const file = rel(r.file);
    const state = perFile.get(file) ?? { fails: [], skips: [] };
    perFile.set(file, state);
    const reason = r.skip ?? (r.todo !== null ? `todo${r.todo ? `: ${r.todo}` : ''}` : null);
    if (r.suite) {
      // Close the suite: the failures and skips reported under it so far are its own.
      const under = state.fails.filter((n) => n > r.nesting).length;
      state.fails = state.fails.filter((n) => n <= r.nesting);
      // Skips not yet closed by an inner suite are this suite's own; inner ones keep their suite.
      const inside = state.skips.filter((s) => s.nesting > r.nesting && !s.closed);
      for (const s of inside) (s.closed = true), (s.suite ??= r.name);
      if (!r.ok && under === 0) failed++;
      if (under > 0 || (!r.ok && under === 0)) state.fails.push(r.nesting);
      if (r.skip !== null && inside.length === 0) {
        skipped++;
        state.skips.push({ nesting: r.nesting, reason: r.skip, suite: `${r.name} (skipped whole; its tests were not declared)`, closed: false });
      }
      continue;
    }
    if (!r.ok) {
      failed++;
      state.fails.push(r.nesting);
    } else if (reason !== null) {
      skipped++;
      state.skips.push({ nesting: r.nesting, reason, suite: null, closed: false });
    } else passed++;
  }

  for (const [file, state] of perFile) {
    for (const s of state.skips) {
      const suite = s.suite ?? '(top level)';
      const key = `${file}\u0000${suite}\u0000${s.reason}`;
      const g = groups.get(key) ?? { file, suite, reason: s.reason || '(no reason given)', count: 0, proof: ci && proofs.includes(noExt(file)) };
      g.count++;
      groups.set(key, g);
    }
  }
  const skips = [...groups.values()];
  // Under CI a proof's skips move from skipped to failed.
  for (const g of skips) if (g.proof) (skipped -= g.count, (failed += g.count));
  return { passed, failed, skipped, skips };
}

// The lines run.mjs prints after node's own summary; the last one is what CI reads, and names the
// node that ran (`node`: process.version), since CI may install its own (.ci/run).
export function closingLines({ passed, failed, skipped, skips }, node) {
  const plural = (n) => `${n} test${n === 1 ? '' : 's'}`;
  const lines = skips.map((g) =>
    g.proof
      ? `failed (CI=true: a proof may not skip): ${g.file} › ${g.suite}: ${plural(g.count)}: ${g.reason}`
      : `skipped: ${g.file} › ${g.suite}: ${plural(g.count)}: ${g.reason}`);
  lines.push(`${passed} passed, ${failed} failed, ${skipped} skipped on node ${node}`);
  return lines;
}
