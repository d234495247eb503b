// The spool of what sessions left behind: kept when the store is locked or unavailable, stored by
// the next start oldest first, each record exactly once, a crash at any point included.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { validateConfig } from '../../../config/config.js';
import { spoolDir, spoolList, spoolWrite } from '../../../memory/store/spool.js';
import { MemoryStore } from '../../../memory/store.js';
import { applyLeft, leaveBehind } from '../../../sessions/capture/capture.js';
import type { LeftRecord } from '../../../sessions/capture/types.js';
import { drainSpool, storeOrSpool } from '../../../sessions/capture/capture-spool.js';
import { tempDir } from '../../helpers.js';

const rec = (session: string, text: string): LeftRecord => ({ session, kind: 'store', item: { text, category: 'observation', salience: 0.5, tags: [] } });

function setup(t: TestContext) {
  const dir = tempDir(t);
  const config = validateConfig({ state_dir: './state' }, path.join(dir, 'nightshift.yaml')).config!;
  const db = path.join(config.state_dir, 'memory.db');
  const open = async () => MemoryStore.open(db);
  const texts = () => {
    const s = MemoryStore.open(db);
    try {
      return [...s.exportAll()].map((x) => x.text);
    } finally {
      s.close();
    }
  };
  return { dir, config, db, open, texts, spool: spoolDir(config.state_dir) };
}

test('a session whose store is unavailable at its end is spooled, and the next start stores all of it', async (t) => {
  const s = setup(t);
  const transcript = path.join(s.dir, 'S1.jsonl');
  fs.writeFileSync(transcript, `${JSON.stringify({ type: 'assistant', message: { id: 'm', content: [{ type: 'text', text: 'OBSERVE: The sitemap lists 14 pages\nBELIEVE: Short notes age better' }] } })}\n`);
  const r = await leaveBehind({
    config: s.config, env: {}, transcript, logger: { warn: () => {}, info: () => {} }, redact: (x) => x,
    session: { id: 'S1', agent: 'gardener', outcome: 'ok', turns: 2, cost_usd: 0, result: 'done', error: null },
    openStore: async () => { throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }); },
  });
  assert.equal(r?.spooled, 3);
  assert.equal(r?.observed, 0);
  // The supervisor dies here; the next start drains the spool.
  const d = await drainSpool({ dir: s.spool, open: s.open, apply: applyLeft });
  assert.deepEqual({ batches: d.batches, stored: d.stored, error: d.error }, { batches: 1, stored: 3, error: null });
  const texts = s.texts();
  assert.ok(texts.includes('The sitemap lists 14 pages') && texts.includes('Short notes age better'), texts.join(' | '));
  assert.equal(spoolList(s.spool).batches.length, 0);
  // A second start finds nothing to do.
  assert.equal((await drainSpool({ dir: s.spool, open: s.open, apply: applyLeft })).stored, 0);
  assert.equal(s.texts().length, texts.length);
});

test('a store that fails part-way through a capture spools the rest, from that record on', async (t) => {
  const s = setup(t);
  let n = 0;
  const flaky = async (store: MemoryStore, r: LeftRecord) => {
    if (++n === 3) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    return applyLeft(store, r);
  };
  const records = ['one', 'two', 'three', 'four'].map((w) => rec('S1', `The ${w} crate ships on Monday`));
  const r = await storeOrSpool(records, { open: s.open, apply: flaky, dir: s.spool, now: () => new Date() });
  assert.deepEqual({ stored: r.stored, spooled: r.spooled }, { stored: 2, spooled: 2 });
  assert.deepEqual(spoolList<LeftRecord>(s.spool).batches[0].records.map((x) => (x as { item: { text: string } }).item.text), ['The three crate ships on Monday', 'The four crate ships on Monday']);
});

test('spooled batches are stored oldest first, whatever order their files were written in', async (t) => {
  const s = setup(t);
  spoolWrite(s.spool, [rec('S2', 'Second session saw the backup finish at 04:10')], new Date('2026-03-02T00:00:00Z'), 'S2');
  spoolWrite(s.spool, [rec('S1', 'First session saw the backup start at 03:55')], new Date('2026-03-01T00:00:00Z'), 'S1');
  await drainSpool({ dir: s.spool, open: s.open, apply: applyLeft });
  assert.deepEqual(s.texts(), ['First session saw the backup start at 03:55', 'Second session saw the backup finish at 04:10']);
});

test('a crash after part of a batch was stored stores each record exactly once on the next start', async (t) => {
  const s = setup(t);
  const records = ['alpha', 'beta', 'gamma', 'delta'].map((w) => rec('S1', `Server ${w} runs the nightly report`));
  spoolWrite(s.spool, records, new Date('2026-03-01T00:00:00Z'), 'S1');
  // The first start stores two records, then dies before the batch is removed.
  let n = 0;
  const dying = async (store: MemoryStore, r: LeftRecord) => {
    if (++n === 3) throw new Error('killed');
    return applyLeft(store, r);
  };
  const first = await drainSpool({ dir: s.spool, open: s.open, apply: dying });
  assert.equal(first.stored, 2);
  assert.equal(spoolList(s.spool).batches.length, 1, 'the batch is still there');
  const second = await drainSpool({ dir: s.spool, open: s.open, apply: applyLeft });
  assert.deepEqual({ stored: second.stored, skipped: second.skipped }, { stored: 2, skipped: 2 });
  const db = MemoryStore.open(s.db);
  t.after(() => db.close());
  assert.equal(db.stats().observations, 4, 'four observations, none twice');
  // Negative control, tried once: without the hasObservation check in drainSpool, the second start
  // stored alpha and beta again (6 observations).
});

test('a crash while a batch is written leaves no half batch: only whole files are read', async (t) => {
  const s = setup(t);
  fs.mkdirSync(s.spool, { recursive: true });
  fs.writeFileSync(path.join(s.spool, '.000001-S9.jsonl.tmp'), '{"session":"S9","kind":"store","item":{"text":"half');
  spoolWrite(s.spool, [rec('S1', 'A whole batch is stored')], new Date(), 'S1');
  const d = await drainSpool({ dir: s.spool, open: s.open, apply: applyLeft });
  assert.deepEqual({ stored: d.stored, unreadable: d.unreadable }, { stored: 1, unreadable: [] });
});

test('a store that cannot be opened at the next start leaves the spool for the one after', async (t) => {
  const s = setup(t);
  spoolWrite(s.spool, [rec('S1', 'Kept for later')], new Date(), 'S1');
  const d = await drainSpool({ dir: s.spool, open: async () => { throw new Error('database is locked'); }, apply: applyLeft });
  assert.deepEqual({ left: d.left, error: d.error }, { left: 1, error: 'database is locked' });
  assert.equal(spoolList(s.spool).batches.length, 1);
});
