// Images counted by their pixels, end to end: the real CLI Reads 40 small PNGs of 1092x1092
// (~900 bytes each, ~1,590 tokens each as the API bills them) and its next call carries them
// all. Against a small reservation the proxy refuses that call before it goes (counted by the
// imitation's count_tokens, as it bills); with room, it goes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { lookupPrice } from '../../budget/pricing.js';
import { fitCall } from '../../budget/reservation.js';
import type { Reply, Turn } from '../fake-api.js';
import { png } from '../fixtures/media-files.js';
import { configYaml, fakeApiPerFile, nightshift, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const IMAGES = 40;
const imagesIn = (body: unknown) => (JSON.stringify(body).match(/"type":"image"/g) ?? []).length;

// The imitation bills as the API does: images by their pixels (1,590 each here), text by its size.
const script = (t: Turn): Reply => {
  const usage = { input_tokens: imagesIn(t.body) * 1590 + 1000, output_tokens: 50 };
  if (t.turn === 0) return { kind: 'message', blocks: Array.from({ length: IMAGES }, (_, i) => ({ type: 'tool_use' as const, name: 'Read', input: { file_path: path.join(dirOf(t), `img-${i}.png`) } })), usage } as Reply;
  return { kind: 'message', blocks: [{ type: 'text', text: 'seen them all' }], usage } as Reply;
};
const dirOf = (t: Turn) => /IMAGES_DIR=(\S+)/.exec(t.prompt)![1];

describe('images through the meter with the real CLI', () => {
  for (const [name, reservation, refused] of [
    [`${IMAGES} images against a $0.25 session: the call carrying them is refused before it goes`, 0.25, true],
    [`control: the same session with $2 to spend: the call carrying ${IMAGES} images goes`, 2, false],
  ] as const) {
    test(name, { timeout: 180_000 }, async (t) => {
      const ws = workspace(t, api.url, configYaml({ top: 'sandbox: none\n', budget: { max_usd_per_day: 10, max_usd_per_session: reservation, min_session_usd: 0.1 } }));
      const dir = path.join(ws.vault, 'pics');
      fs.mkdirSync(dir, { recursive: true });
      for (let i = 0; i < IMAGES; i++) fs.writeFileSync(path.join(dir, `img-${i}.png`), png(1092, 1092));
      const scenario = `media-${refused ? 'small' : 'room'}`;
      api.script(scenario, script);
      writeAgent(ws, 'looker', `SCENARIO=${scenario} IMAGES_DIR=${dir}`, { allowed_tools: ['Read'] });
      const n = api.requests.length;
      const run = await nightshift(['run', 'looker', '--json'], ws.env, ws.dir);
      const bodies = api.requests.slice(n);
      t.diagnostic(`exit ${run.code}; ${bodies.length} requests reached the API; ${run.stdout.slice(0, 900)}`);
      const record = JSON.parse(run.stdout);
      if (refused) {
        assert.equal(record.outcome, 'budget', run.stdout + run.stderr);
        // The API's own count (count_tokens, each image once): its 1,590 tokens an image, and what
        // the block around it adds to a one-message call (a few tokens of its JSON at the imitation's
        // rate), never less.
        const counted = Number(/(\d+) tokens of it images and PDF pages/.exec(record.error)?.[1]);
        assert.ok(counted >= IMAGES * 1590 && counted <= IMAGES * 1700, record.error);
        assert.equal(bodies.filter((r) => r.turn >= 1).length, 0, 'no call carrying the images reached the API');
      } else {
        assert.equal(record.outcome, 'ok', run.stdout + run.stderr);
        assert.ok(bodies.some((r) => r.turn >= 1), 'the call carrying the images reached the API');
      }
    });
  }
  test('the control for the count: the estimate from the body\'s bytes (the meter before) admits that call at $0.25', () => {
    const b64 = png(1092, 1092).toString('base64');
    const bytes = 130_000 + IMAGES * (b64.length + 200);
    const f = fitCall({ bodyBytes: bytes, maxTokens: 32_000, thinkingBudget: null, cache: '5m', price: lookupPrice('claude-sonnet-4-6').price }, 0.25 - 0.01);
    assert.equal(f.action, 'forward');
  });
});
