// test/run.mjs on its own fixtures (test/fixtures/runner, picked by NIGHTSHIFT_TEST_ROOT, never by
// the suite itself): our closing line counts what node 20's summary drops, names the node that
// ran, and is the last line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { FIXTURES, ROOT } from './helpers.js';

function runner(filters: string[], ci: boolean): { code: number | null; lines: string[]; out: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, NIGHTSHIFT_TEST_ROOT: path.join(FIXTURES, 'runner'), CI: ci ? 'true' : 'false' };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [path.join(ROOT, 'test', 'run.mjs'), ...filters], { env, encoding: 'utf8', timeout: 120_000 });
  const out = `${r.stdout}${r.stderr}`;
  return { code: r.status, lines: r.stdout.trim().split('\n'), out };
}

// The runner runs on the node that started it; its closing line names that one.
const NODE = process.version;

// node's own "ℹ skipped N" line, printed before ours.
const nodeSkipped = (out: string) => Number(/^ℹ skipped (\d+)$/m.exec(out)?.[1]);

describe('the runner\'s closing line', () => {
  test('counts every test of a skipped suite as skipped and lists each skipped suite with its reason', () => {
    const r = runner(['skips', 'systemd-real'], false);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.lines.at(-1), `1 passed, 0 failed, 7 skipped on node ${NODE}`, r.out);
    for (const line of [
      'skipped: skips.test.mjs › a suite without its tool: 3 tests: the tool is not installed here',
      'skipped: skips.test.mjs › a suite skipped whole (skipped whole; its tests were not declared): 1 test: skipped as one',
      'skipped: skips.test.mjs › (top level): 1 test: decided inside',
      'skipped: deploy/systemd-real.test.mjs › a proof without its machine: 2 tests: systemd-nspawn is not installed',
    ]) assert.ok(r.lines.includes(line), `missing ${JSON.stringify(line)} in:\n${r.out}`);
    // The control: node's own summary, still printed above ours, misses the suite skipped whole.
    assert.equal(nodeSkipped(r.out), 6, r.out);
  });

  test('a failed test, or a suite whose cleanup fails with every test passing, fails the run', () => {
    const r = runner(['fails'], false);
    assert.equal(r.code, 1, r.out);
    assert.equal(r.lines.at(-1), `1 passed, 2 failed, 0 skipped on node ${NODE}`, r.out);
  });

  test('under CI=true a proof that skips fails with its reason; elsewhere it is a listed skip', () => {
    const ci = runner(['systemd-real'], true);
    assert.equal(ci.code, 1, ci.out);
    assert.equal(ci.lines.at(-1), `0 passed, 2 failed, 0 skipped on node ${NODE}`, ci.out);
    assert.ok(ci.lines.includes('failed (CI=true: a proof may not skip): deploy/systemd-real.test.mjs › a proof without its machine: 2 tests: systemd-nspawn is not installed'), ci.out);
    // The same run without CI: exit 0, the skip counted and named.
    const local = runner(['systemd-real'], false);
    assert.equal(local.code, 0, local.out);
    assert.equal(local.lines.at(-1), `0 passed, 0 failed, 2 skipped on node ${NODE}`, local.out);
  });

  test('a filter matching no test file exits 64 and runs nothing', () => {
    const r = runner(['no-such-file'], false);
    assert.equal(r.code, 64, r.out);
    assert.match(r.out, /no compiled test file under .* matches "no-such-file"/);
    assert.doesNotMatch(r.out, /passed, .* failed/);
  });
});
