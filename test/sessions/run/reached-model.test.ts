// What is not a session is not a memory: a session that never reached the model is counted by
// the ledger, but its result record does not go into the memory store.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { validateConfig } from '../../../config/config.js';
import { MemoryStore } from '../../../memory/store.js';
import { leaveBehind } from '../../../sessions/capture/capture.js';
import { reachedModel } from '../../../sessions/run/reached-model.js';
import { tempDir } from '../../helpers.js';

async function capture(t: TestContext, session: { outcome: string; turns: number; cost_usd: number; error: string | null }) {
  const dir = tempDir(t);
  const config = validateConfig({ state_dir: './state' }, path.join(dir, 'nightshift.yaml')).config!;
  const transcript = path.join(dir, 'S1.jsonl');
  fs.writeFileSync(transcript, '{"type":"system","subtype":"init"}\n');
  const db = path.join(config.state_dir, 'memory.db');
  const logger = { warn: () => {}, info: () => {} };
  const r = await leaveBehind({
    config, env: {}, transcript, logger, redact: (x) => x, openStore: async () => MemoryStore.open(db),
    session: { id: 'S1', agent: 'gardener', result: null, ...session },
  });
  const store = MemoryStore.open(db);
  t.after(() => store.close());
  return { r, memories: store.stats().memories };
}

describe('reached model', () => {
  test('spawn failures and refused sessions did not reach the model; any answered session did', () => {
    assert.equal(reachedModel({ outcome: 'spawn_failed', turns: 0, cost_usd: 0 }), false);
    assert.equal(reachedModel({ outcome: 'error', turns: 0, cost_usd: 0 }), false);
    // "Not logged in": the CLI counts its refused first request as a turn.
    assert.equal(reachedModel({ outcome: 'error', turns: 1, cost_usd: 0 }), false);
    assert.equal(reachedModel({ outcome: 'error', turns: 1, cost_usd: 0.002 }), true);
    assert.equal(reachedModel({ outcome: 'error', turns: 3, cost_usd: 0 }), true);
    assert.equal(reachedModel({ outcome: 'ok', turns: 0, cost_usd: 0 }), true);
    assert.equal(reachedModel({ outcome: 'timeout', turns: 0, cost_usd: 0 }), true);
  });

  test('a session that never reached the model leaves no result record in memory', async (t) => {
    const failed = await capture(t, { outcome: 'spawn_failed', turns: 0, cost_usd: 0, error: 'spawn claude ENOENT' });
    assert.equal(failed.r!.observed, 0);
    assert.equal(failed.memories, 0);
    const refused = await capture(t, { outcome: 'error', turns: 1, cost_usd: 0, error: 'Not logged in · Please run /login' });
    assert.equal(refused.memories, 0);
  });

  // The negative control: the same capture for a session that did reach the model stores its record.
  test('a session that reached the model and failed still leaves its result record', async (t) => {
    const answered = await capture(t, { outcome: 'error', turns: 2, cost_usd: 0.01, error: 'tool failed' });
    assert.equal(answered.r!.observed, 1);
    assert.equal(answered.memories, 1);
  });
});
